"""YouTube: one video per post, sent through a resumable upload session."""
