"""Engagement that grows over time, for the fakes' metrics endpoints: counts that only rise
with a post's age (a burst in its first hours, a trickle after), the same for the same post
at the same instant, and different from post to post."""

from __future__ import annotations

import math
import zlib

from loadtest.platform_fakes.base import StoredPost


def grown(post: StoredPost, now: float) -> dict[str, int]:
    """{views, likes, replies, reposts, quotes, followers_gain} of `post` at `now`."""
    minutes = max(now - post.created_at, 0.0) / 60.0
    scale = 1 + zlib.crc32(post.id.encode()) % 5
    views = int(40 * scale * math.log1p(minutes))
    return {
        "views": views,
        "likes": views // 12,
        "replies": views // 60,
        "reposts": views // 40,
        "quotes": views // 150,
    }


def followers(account_id: str, posts: int) -> int:
    """An account's followers: a base of its own, and more for each post it made."""
    return 100 + zlib.crc32(account_id.encode()) % 400 + 3 * posts
