"""Deterministic record keys.

`app.bsky.feed.post` record keys must be TIDs: 13 characters of base32-sortable, a 53-bit
microsecond timestamp then a 10-bit clock id. Ours derive from this installation's id, the
rendition id and the segment position instead of the clock, so every attempt at one segment
uses the same key and the repository cannot hold two records for it (a second create of the
key fails).

The installation id is mixed in because rendition ids restart after a database reset: a new
installation must never derive the key an old one already used for another post, or it
would "find" that post and call it its own. It sets the clock id and the 6 timestamp bits
above the rendition id's 32 bits. The keys stay valid TIDs, sort by rendition then position
within one installation, and lie between 2023-01-01 and 2025-04 (never in the future).
"""

import hashlib
import re

S32 = "234567abcdefghijklmnopqrstuvwxyz"
TID_RE = re.compile(r"^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$")
# 2023-01-01T00:00:00Z in microseconds: our keys sort after Bluesky's launch. Each rendition
# gets 256 consecutive microseconds, one per segment, and each installation a band of 2**40
# microseconds (about 12.7 days) above that.
BASE_US = 1_672_531_200_000_000
MAX_POSITION = 255
RENDITION_BITS = 32
INSTALLATION_BITS = 6
_INSTALLATION_SHIFT = 8 + RENDITION_BITS


def _s32(value: int, width: int) -> str:
    return "".join(S32[(value >> (5 * i)) & 31] for i in reversed(range(width)))


def _digest(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


def segment_rkey(rendition_id: int, position: int, *, installation: str) -> str:
    """The record key of one segment of one rendition of one installation; the same inputs
    give the same key, and another installation's key for the same rendition differs."""
    if not 0 <= position <= MAX_POSITION:
        raise ValueError(f"A thread has at most {MAX_POSITION + 1} segments.")
    if not 0 <= rendition_id < 1 << RENDITION_BITS:
        raise ValueError("Rendition id too large for a TID timestamp.")
    band = _digest("installation", installation) % (1 << INSTALLATION_BITS)
    timestamp = BASE_US + (band << _INSTALLATION_SHIFT) + (rendition_id << 8) + position
    clock_id = _digest(installation, rendition_id, position) & 0x3FF
    return _s32(timestamp, 11) + _s32(clock_id, 2)


def legacy_segment_rkey(rendition_id: int, position: int) -> str:
    """The key the first derivation gave (rendition id and position only, no installation
    id). A segment sent before installation ids were mixed in, and whose key was never
    checkpointed, may hold its post under this key."""
    if not 0 <= position <= MAX_POSITION:
        raise ValueError(f"A thread has at most {MAX_POSITION + 1} segments.")
    timestamp = BASE_US + (rendition_id << 8) + position
    if timestamp >= 1 << 53:
        raise ValueError("Rendition id too large for a TID timestamp.")
    digest = hashlib.sha256(f"{rendition_id}:{position}".encode()).digest()
    clock_id = int.from_bytes(digest[:2], "big") & 0x3FF
    return _s32(timestamp, 11) + _s32(clock_id, 2)


def is_tid(value: str) -> bool:
    return bool(TID_RE.match(value))
