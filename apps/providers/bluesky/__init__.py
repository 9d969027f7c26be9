"""Bluesky (AT Protocol): app-password sessions, posts with facets, images, link cards,
reply threads, and a deterministic record key per segment so a retry cannot post twice."""
