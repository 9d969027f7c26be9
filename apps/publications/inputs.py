"""Reading the plain data every client sends (segments, destinations) into typed inputs.

Errors are collected, not raised one at a time: each parser adds ``{field_path: [message]}``
entries to the ``errors`` dict it is given, and the service raises one ValidationFailed with
all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apps.publications import constants

Errors = dict[str, list[str]]

SEGMENT_KEYS = {"text", "media"}
MEDIA_KEYS = {"id", "alt_text"}
DESTINATION_KEYS = {"account", "segments", "settings", "scheduled_at", "local_time", "timezone"}


@dataclass(frozen=True)
class MediaRef:
    media_id: int
    alt_text: str  # blank: the asset's own alt text
    path: str


@dataclass(frozen=True)
class SegmentInput:
    text: str
    media: list[MediaRef]
    path: str


@dataclass(frozen=True)
class DestinationInput:
    account_id: int
    segments: list[SegmentInput] | None  # None: follow the publication's segments
    settings: dict
    scheduled_at: Any = None
    local_time: Any = None
    timezone: str | None = None
    path: str = ""

    @property
    def has_own_schedule(self) -> bool:
        return self.scheduled_at is not None or self.local_time is not None


def add(errors: Errors, path: str, message: str) -> None:
    errors.setdefault(path, []).append(message)


def parse_id(value: Any) -> int | None:
    """A positive integer id (an int, or a string of digits), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.isdigit() and len(value) < 19:
        return int(value) or None
    return None


def _unknown_keys(raw: dict, allowed: set[str], path: str, errors: Errors) -> None:
    for key in sorted(set(raw) - allowed):
        add(errors, f"{path}.{key}", "Unknown field.")


def parse_media(raw: Any, *, path: str, errors: Errors) -> list[MediaRef]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        add(errors, path, "Must be a list of {id, alt_text}.")
        return []
    if len(raw) > constants.MAX_MEDIA_PER_SEGMENT:
        add(errors, path, f"At most {constants.MAX_MEDIA_PER_SEGMENT} media per segment.")
        return []
    refs = []
    for j, item in enumerate(raw):
        item_path = f"{path}.{j}"
        if isinstance(item, int | str) and not isinstance(item, bool):
            item = {"id": item}
        if not isinstance(item, dict):
            add(errors, item_path, "Must be an object {id, alt_text}.")
            continue
        _unknown_keys(item, MEDIA_KEYS, item_path, errors)
        media_id = parse_id(item.get("id"))
        if media_id is None:
            add(errors, f"{item_path}.id", "A media id is required.")
            continue
        alt_text = item.get("alt_text") or ""
        if not isinstance(alt_text, str):
            add(errors, f"{item_path}.alt_text", "Must be text.")
            continue
        if len(alt_text) > constants.MAX_ALT_TEXT_LENGTH:
            add(
                errors,
                f"{item_path}.alt_text",
                f"At most {constants.MAX_ALT_TEXT_LENGTH} characters.",
            )
            continue
        refs.append(MediaRef(media_id=media_id, alt_text=alt_text, path=item_path))
    return refs


def parse_segments(raw: Any, *, path: str, errors: Errors) -> list[SegmentInput]:
    """Segments in thread order: [{"text": ..., "media": [{"id": ..., "alt_text": ...}]}]."""
    if not isinstance(raw, list) or not raw:
        add(errors, path, "At least one segment is required.")
        return []
    if len(raw) > constants.MAX_SEGMENTS:
        add(errors, path, f"At most {constants.MAX_SEGMENTS} segments.")
        return []
    segments = []
    for i, item in enumerate(raw):
        seg_path = f"{path}.{i}"
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict):
            add(errors, seg_path, "Must be an object {text, media}.")
            continue
        _unknown_keys(item, SEGMENT_KEYS, seg_path, errors)
        text = item.get("text") if item.get("text") is not None else ""
        if not isinstance(text, str):
            add(errors, f"{seg_path}.text", "Must be text.")
            continue
        if len(text) > constants.MAX_TEXT_LENGTH:
            add(errors, f"{seg_path}.text", f"At most {constants.MAX_TEXT_LENGTH} characters.")
            continue
        media = parse_media(item.get("media"), path=f"{seg_path}.media", errors=errors)
        if not text.strip() and not media and not item.get("media"):
            add(errors, f"{seg_path}.text", "Write some text or attach media.")
            continue
        segments.append(SegmentInput(text=text, media=media, path=seg_path))
    return segments


def parse_destinations(raw: Any, *, errors: Errors) -> list[DestinationInput]:
    """Destinations: [{"account": id, "segments": [...]?, "settings": {...}?,
    "scheduled_at": ...? | "local_time": ... + "timezone": ...?}]."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        add(errors, "destinations", "Must be a list.")
        return []
    if len(raw) > constants.MAX_DESTINATIONS:
        add(errors, "destinations", f"At most {constants.MAX_DESTINATIONS} destinations.")
        return []
    destinations: list[DestinationInput] = []
    seen: set[int] = set()
    for i, item in enumerate(raw):
        path = f"destinations.{i}"
        if isinstance(item, int | str) and not isinstance(item, bool):
            item = {"account": item}
        if not isinstance(item, dict):
            add(errors, path, "Must be an object {account, segments, settings, scheduled_at}.")
            continue
        _unknown_keys(item, DESTINATION_KEYS, path, errors)
        account_id = parse_id(item.get("account"))
        if account_id is None:
            add(errors, f"{path}.account", "An account id is required.")
            continue
        if account_id in seen:
            add(errors, f"{path}.account", "This account is already a destination.")
            continue
        seen.add(account_id)
        segments = None
        if item.get("segments") is not None:
            before = len(errors)
            segments = parse_segments(item["segments"], path=f"{path}.segments", errors=errors)
            if len(errors) != before:
                continue
        settings = item.get("settings")
        if settings is None:
            settings = {}
        if not isinstance(settings, dict):
            add(errors, f"{path}.settings", "Must be an object.")
            continue
        timezone = item.get("timezone")
        if timezone is not None and not isinstance(timezone, str):
            add(errors, f"{path}.timezone", "Must be an IANA zone name.")
            continue
        destinations.append(
            DestinationInput(
                account_id=account_id,
                segments=segments,
                settings=settings,
                scheduled_at=item.get("scheduled_at"),
                local_time=item.get("local_time"),
                timezone=timezone,
                path=path,
            )
        )
    return destinations


def parse_first_comment(raw: Any, *, errors: Errors) -> str:
    """The comment posted under each live post: trimmed text, blank for none. Its length
    per platform is checked once the destinations are known (``check_first_comment``)."""
    if raw is None:
        return ""
    if not isinstance(raw, str):
        add(errors, "first_comment", "Must be text.")
        return ""
    text = raw.strip()
    if len(text) > constants.MAX_FIRST_COMMENT_LENGTH:
        add(errors, "first_comment", f"At most {constants.MAX_FIRST_COMMENT_LENGTH:,} characters.")
        return ""
    return text


def parse_reference_key(raw: Any, *, errors: Errors) -> str | None:
    """A client key: trimmed text up to 200 characters; blank means none."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        add(errors, "reference_key", "Must be text.")
        return None
    key = raw.strip()
    if len(key) > constants.MAX_REFERENCE_KEY_LENGTH:
        add(
            errors,
            "reference_key",
            f"At most {constants.MAX_REFERENCE_KEY_LENGTH} characters.",
        )
        return None
    return key or None
