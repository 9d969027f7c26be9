"""Deterministic record keys.

`app.bsky.feed.post` record keys must be TIDs: 13 characters of base32-sortable, a 53-bit
microsecond timestamp then a 10-bit clock id. Ours derive from the rendition id and the
segment position instead of the clock, so every attempt at one segment uses the same key
and the repository cannot hold two records for it (a second create of the key fails).
"""

import hashlib
import re

S32 = "234567abcdefghijklmnopqrstuvwxyz"
TID_RE = re.compile(r"^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$")
# 2023-01-01T00:00:00Z in microseconds: our keys sort after Bluesky's launch and never in
# the future. Each rendition gets 256 consecutive microseconds, one per segment.
BASE_US = 1_672_531_200_000_000
MAX_POSITION = 255
_MAX_TIMESTAMP = (1 << 53) - 1


def _s32(value: int, width: int) -> str:
    return "".join(S32[(value >> (5 * i)) & 31] for i in reversed(range(width)))


def segment_rkey(rendition_id: int, position: int) -> str:
    """The record key of one segment of one rendition; the same inputs give the same key."""
    if not 0 <= position <= MAX_POSITION:
        raise ValueError(f"A thread has at most {MAX_POSITION + 1} segments.")
    timestamp = BASE_US + (rendition_id << 8) + position
    if timestamp > _MAX_TIMESTAMP:
        raise ValueError("Rendition id too large for a TID timestamp.")
    # The clock id only lowers the odds of meeting a key another client made at that instant.
    digest = hashlib.sha256(f"{rendition_id}:{position}".encode()).digest()
    clock_id = int.from_bytes(digest[:2], "big") & 0x3FF
    return _s32(timestamp, 11) + _s32(clock_id, 2)


def is_tid(value: str) -> bool:
    return bool(TID_RE.match(value))
