"""Bounds on what one publication may hold, whatever the platforms allow."""

MAX_SEGMENTS = 25
MAX_TEXT_LENGTH = 65_000  # code points per segment; the longest platform limit is 63,206
MAX_MEDIA_PER_SEGMENT = 35  # TikTok photo posts take 35
MAX_ALT_TEXT_LENGTH = 5_000
MAX_DESTINATIONS = 50
MAX_REFERENCE_KEY_LENGTH = 200
MAX_FIRST_COMMENT_LENGTH = 10_000  # YouTube's comment limit, the longest in the catalog
