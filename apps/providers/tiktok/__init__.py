"""TikTok: direct posts of a video or of photos, then status polls until TikTok has
processed and published them."""
