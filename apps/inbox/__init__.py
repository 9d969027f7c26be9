"""The inbox: comments and replies on the team's published posts, read from each platform,
and replies written back under the same delivery rules as first comments."""
