"""Instagram (professional accounts, Instagram Login): container publishing of images,
Reels, stories and carousels, the publishing cap, long-lived tokens."""
