"""Checking one rendition against its platform's capabilities, before anything is sent.

``validate_rendition`` returns every problem it finds, each with a field path the composer
can point at (``segments.0.text``, ``segments.1.media.0.alt_text``, ``settings.title``), a
machine code, a sentence for people, and the limit and actual value where there is one.
It never raises for content: an unknown platform is a problem too.

Codes: PLATFORM_UNKNOWN, SEGMENTS_REQUIRED, THREADS_UNSUPPORTED, TEXT_REQUIRED,
TEXT_TOO_LONG, TEXT_FORBIDDEN_CHARACTERS, TOO_MANY_LINKS, TOO_MANY_HASHTAGS,
TOO_MANY_MENTIONS, MEDIA_REQUIRED, TOO_MANY_MEDIA, MEDIA_MIXED_UNSUPPORTED,
MEDIA_KIND_UNSUPPORTED, MEDIA_FORMAT_UNSUPPORTED, MEDIA_TOO_LARGE,
MEDIA_DURATION_OUT_OF_RANGE, ALT_TEXT_TOO_LONG, SETTINGS_INVALID, SETTING_REQUIRED,
SETTING_TOO_LONG, SETTING_INVALID.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace

import regex

from apps.providers.catalog import GIF, IMAGE, VIDEO, PlatformCapabilities, UnknownPlatform
from apps.providers.catalog import get_capabilities as _get_capabilities
from apps.providers.text_counting import Counter, count_text, count_utf8_bytes, find_urls

_HASHTAG = regex.compile(r"(?<![\w&])#\w+")
_MENTION = regex.compile(r"(?<![\w@])@\w+")

_UNIT_WORDS = {
    Counter.GRAPHEMES: "characters",
    Counter.MASTODON: "characters",
    Counter.X_WEIGHTED: "weighted characters",
    Counter.THREADS: "characters",
    Counter.CODE_POINTS: "characters",
    Counter.UTF16: "UTF-16 units",
    Counter.UTF8_BYTES: "bytes",
}


@dataclass(frozen=True)
class MediaInfo:
    """What validation needs to know about one attached media file."""

    kind: str  # image, video, gif
    mime_type: str = ""
    size_bytes: int | None = None
    width: int | None = None
    height: int | None = None
    duration_s: float | None = None
    alt_text: str = ""


@dataclass(frozen=True)
class Problem:
    """One reason a rendition cannot be published as it is."""

    path: str
    code: str
    message: str
    limit: int | float | None = None
    actual: int | float | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    def prefixed(self, prefix: str) -> Problem:
        """The same problem, its path under prefix (e.g. "destinations.2")."""
        return replace(self, path=f"{prefix}.{self.path}" if prefix else self.path)


def validate_rendition(
    platform: str,
    segments: Sequence[str],
    settings: Mapping | None = None,
    media: Sequence[Sequence[MediaInfo]] = (),
    *,
    text_limit: int | None = None,
) -> list[Problem]:
    """Every problem of a rendition on platform.

    segments are the texts in thread order; media[i] is the media of segment i (missing
    entries mean none); text_limit overrides the catalog's text limit for one account (a
    sandbox behaviour, an X Premium account).
    """
    try:
        caps = _get_capabilities(platform)
    except UnknownPlatform:
        return [Problem("platform", "PLATFORM_UNKNOWN", f"'{platform}' is not a known platform.")]
    problems: list[Problem] = []
    if settings is None:
        settings = {}
    if not isinstance(settings, Mapping):
        problems.append(Problem("settings", "SETTINGS_INVALID", "Settings must be an object."))
        settings = {}

    if not segments:
        problems.append(Problem("segments", "SEGMENTS_REQUIRED", "Add at least one segment."))
    elif len(segments) > 1 and not caps.supports_threads:
        problems.append(
            Problem(
                "segments",
                "THREADS_UNSUPPORTED",
                f"{platform} does not publish threads; use a single segment.",
                limit=1,
                actual=len(segments),
            )
        )

    limit = text_limit if text_limit is not None else caps.text_limit
    prefix_text = ""
    if caps.text_counter is Counter.MASTODON and isinstance(settings.get("spoiler_text"), str):
        prefix_text = settings["spoiler_text"]
    for i, text in enumerate(segments):
        seg_media = list(media[i]) if i < len(media) else []
        problems += _text_problems(caps, f"segments.{i}.text", text, seg_media, limit, prefix_text)
        problems += _media_problems(caps, f"segments.{i}.media", seg_media)

    first_media = media[0] if media else ()
    if (
        caps.requires_media
        and segments
        and not any(m.kind in caps.accepts_media for m in first_media)
    ):
        problems.append(
            Problem("segments.0.media", "MEDIA_REQUIRED", f"{platform} needs an image or video.")
        )
    problems += _settings_problems(caps, settings)
    return problems


def _text_problems(
    caps: PlatformCapabilities,
    path: str,
    text: str,
    media: list[MediaInfo],
    limit: int,
    prefix_text: str,
) -> list[Problem]:
    problems: list[Problem] = []
    if not text.strip() and not media:
        return [Problem(path, "TEXT_REQUIRED", "Write some text or attach media.")]
    length = count_text(text, caps.text_counter, url_length=caps.url_length)
    if prefix_text:
        length += count_text(prefix_text, caps.text_counter, url_length=caps.url_length)
    if length > limit:
        unit = _UNIT_WORDS[caps.text_counter]
        counted = " (with the content warning)" if prefix_text else ""
        problems.append(
            Problem(
                path,
                "TEXT_TOO_LONG",
                f"{length} {unit}{counted}; {caps.platform} allows {limit}.",
                limit=limit,
                actual=length,
            )
        )
    if caps.text_max_bytes is not None and count_utf8_bytes(text) > caps.text_max_bytes:
        problems.append(
            Problem(
                path,
                "TEXT_TOO_LONG",
                f"{count_utf8_bytes(text)} bytes; {caps.platform} allows "
                f"{caps.text_max_bytes} bytes.",
                limit=caps.text_max_bytes,
                actual=count_utf8_bytes(text),
            )
        )
    if caps.forbidden_characters and any(c in text for c in caps.forbidden_characters):
        problems.append(_forbidden(caps, path))
    checks = (
        ("TOO_MANY_LINKS", caps.max_links, len(find_urls(text, bare_domains=True)), "links"),
        ("TOO_MANY_HASHTAGS", caps.max_hashtags, len(_HASHTAG.findall(text)), "hashtags"),
        ("TOO_MANY_MENTIONS", caps.max_mentions, len(_MENTION.findall(text)), "mentions"),
    )
    for code, cap, actual, what in checks:
        if cap is not None and actual > cap:
            message = f"{actual} {what}; {caps.platform} allows {cap}."
            problems.append(Problem(path, code, message, limit=cap, actual=actual))
    return problems


def _forbidden(caps: PlatformCapabilities, path: str) -> Problem:
    chars = " ".join(caps.forbidden_characters)
    return Problem(
        path, "TEXT_FORBIDDEN_CHARACTERS", f"{caps.platform} does not accept these: {chars}."
    )


def _size_limit(caps: PlatformCapabilities, item: MediaInfo) -> int | None:
    limits = caps.media_limits
    names = {
        IMAGE: ("image_bytes", "photo_bytes"),
        VIDEO: ("video_bytes",),
        GIF: ("gif_bytes", f"{caps.media_bucket(GIF)}_bytes"),
    }[item.kind]
    for name in names:
        if isinstance(limits.get(name), int):
            return limits[name]
    return None


def _duration_range(caps: PlatformCapabilities) -> tuple[float, float] | None:
    value = caps.media_limits.get("video_duration_s")
    if isinstance(value, int | float):
        return (0, float(value))
    if isinstance(value, tuple) and len(value) == 2:
        return (float(value[0]), float(value[1]))
    return None


def _media_problems(caps: PlatformCapabilities, path: str, media: list[MediaInfo]) -> list[Problem]:
    """Each attachment's own problems in order, then those of the post's media as a whole."""
    problems: list[Problem] = []
    buckets: dict[str, int] = {}
    for j, item in enumerate(media):
        item_path = f"{path}.{j}"
        if item.kind not in caps.accepts_media:
            problems.append(
                Problem(
                    item_path,
                    "MEDIA_KIND_UNSUPPORTED",
                    f"{caps.platform} does not take {item.kind} media.",
                )
            )
            continue
        bucket = caps.media_bucket(item.kind)
        buckets[bucket] = buckets.get(bucket, 0) + 1
        problems.extend(_item_problems(caps, item_path, item))
    problems.extend(_media_count_problems(caps, path, buckets))
    return problems


def _item_problems(caps: PlatformCapabilities, item_path: str, item: MediaInfo) -> list[Problem]:
    """One attachment of a kind the platform takes: its format, size, duration and alt text."""
    checks = (
        _format_problem(caps, item_path, item),
        _size_problem(caps, item_path, item),
        _duration_problem(caps, item_path, item),
        _alt_text_problem(caps, item_path, item),
    )
    return [problem for problem in checks if problem is not None]


def _format_problem(caps: PlatformCapabilities, item_path: str, item: MediaInfo) -> Problem | None:
    """An image in a format the platform does not list; unknown formats pass."""
    mime_types = caps.image_mime_types
    known = item.mime_type
    if item.kind == IMAGE and mime_types and known and known not in mime_types:
        allowed = ", ".join(sorted(mime_types))
        return Problem(
            item_path,
            "MEDIA_FORMAT_UNSUPPORTED",
            f"{caps.platform} takes images as {allowed}, not {known}.",
        )
    return None


def _size_problem(caps: PlatformCapabilities, item_path: str, item: MediaInfo) -> Problem | None:
    """A file over the platform's size limit for its kind; an unknown size passes."""
    size_limit = _size_limit(caps, item)
    if size_limit is not None and item.size_bytes is not None and item.size_bytes > size_limit:
        return Problem(
            item_path,
            "MEDIA_TOO_LARGE",
            f"{item.size_bytes} bytes; {caps.platform} takes up to {size_limit}.",
            limit=size_limit,
            actual=item.size_bytes,
        )
    return None


def _duration_problem(
    caps: PlatformCapabilities, item_path: str, item: MediaInfo
) -> Problem | None:
    """A video shorter or longer than the platform takes; an unknown duration passes."""
    duration = _duration_range(caps)
    if item.kind == VIDEO and duration and item.duration_s is not None:
        low, high = duration
        if not low <= item.duration_s <= high:
            return Problem(
                item_path,
                "MEDIA_DURATION_OUT_OF_RANGE",
                f"The video lasts {item.duration_s:g} s; {caps.platform} takes {low:g}-{high:g} s.",
                limit=high if item.duration_s > high else low,
                actual=item.duration_s,
            )
    return None


def _alt_text_problem(
    caps: PlatformCapabilities, item_path: str, item: MediaInfo
) -> Problem | None:
    """Alt text over the platform's limit, where the platform takes alt text at all."""
    alt_limit = caps.alt_text_limit
    if caps.supports_alt_text and alt_limit is not None and len(item.alt_text) > alt_limit:
        return Problem(
            f"{item_path}.alt_text",
            "ALT_TEXT_TOO_LONG",
            f"Alt text is {len(item.alt_text)} characters; {caps.platform} allows {alt_limit}.",
            limit=alt_limit,
            actual=len(item.alt_text),
        )
    return None


def _media_count_problems(
    caps: PlatformCapabilities, path: str, buckets: dict[str, int]
) -> list[Problem]:
    """The post's media as a whole: too many of one kind, or kinds the platform will not mix."""
    problems: list[Problem] = []
    for bucket, count in buckets.items():
        cap = caps.max_media_for(bucket)
        if cap is not None and count > cap:
            problems.append(
                Problem(
                    path,
                    "TOO_MANY_MEDIA",
                    f"{count} {bucket}s; {caps.platform} takes up to {cap} per post.",
                    limit=cap,
                    actual=count,
                )
            )
    if not caps.mixed_media and len(buckets) > 1:
        problems.append(
            Problem(
                path,
                "MEDIA_MIXED_UNSUPPORTED",
                f"{caps.platform} does not mix {' and '.join(sorted(buckets))} in one post.",
            )
        )
    return problems


def _type_problem(name: str, value: object, kind: str) -> str | None:
    """Why value is not of the setting's type, else None. Booleans are JSON true/false
    only: the text "false" would read as true in an adapter, so it is refused."""
    if kind == "boolean" and not isinstance(value, bool):
        return f"{name} must be true or false."
    if kind == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
        return f"{name} must be a whole number."
    if kind == "list" and not (
        isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
    ):
        return f"{name} must be a list of text values."
    if kind == "string" and not isinstance(value, str):
        return f"{name} must be text."
    return None


def _settings_problems(caps: PlatformCapabilities, settings: Mapping) -> list[Problem]:
    problems: list[Problem] = []
    for spec in caps.settings:
        path = f"settings.{spec.name}"
        value = settings.get(spec.name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if spec.required:
                problems.append(
                    Problem(path, "SETTING_REQUIRED", f"{caps.platform} needs {spec.name}.")
                )
            continue
        wrong_type = _type_problem(spec.name, value, spec.type)
        if wrong_type is not None:
            problems.append(Problem(path, "SETTING_INVALID", wrong_type))
            continue
        if spec.type != "string":
            continue
        if spec.max_length is not None and len(value) > spec.max_length:
            problems.append(
                Problem(
                    path,
                    "SETTING_TOO_LONG",
                    f"{spec.name} is {len(value)} characters; {caps.platform} allows "
                    f"{spec.max_length}.",
                    limit=spec.max_length,
                    actual=len(value),
                )
            )
        if spec.choices is not None and value not in spec.choices:
            problems.append(
                Problem(
                    path,
                    "SETTING_INVALID",
                    f"{spec.name} must be one of: {', '.join(spec.choices)}.",
                )
            )
        if caps.forbidden_characters and any(c in value for c in caps.forbidden_characters):
            problems.append(_forbidden(caps, path))
    return problems
