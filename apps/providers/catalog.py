"""The capability catalog: what each platform accepts, read from capabilities.json.

The JSON beside this module is the product's copy of the research seed (see its
``description``); the composer, the API's ``/capabilities`` and rendition validation all
read it through ``get_capabilities`` / ``all_capabilities``. Each platform carries a
readiness: ``experimental`` until a validation against the live platform is recorded
(``validated_at`` and ``validated_what``), then ``supported``. The file holds no live
validation: ``apps.providers.live.readiness`` applies the recorded ones (a passing run of
``validate_platform`` younger than 90 days) for everything that shows readiness.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from apps.common.errors import NotFound
from apps.providers.text_counting import DEFAULT_URL_LENGTH, Counter

CATALOG_PATH = Path(__file__).with_name("capabilities.json")

# Our media kinds (MediaAsset.Kind values).
IMAGE, VIDEO, GIF = "image", "video", "gif"

# The JSON types a per-rendition setting may take (settings_schema `type`).
SETTING_TYPES = ("string", "boolean", "integer", "list")


class Readiness(StrEnum):
    EXPERIMENTAL = "experimental"
    SUPPORTED = "supported"


class UnknownPlatform(NotFound):
    code = "UNKNOWN_PLATFORM"


@dataclass(frozen=True)
class SettingSpec:
    """One per-rendition setting a platform reads (a YouTube title, a subreddit...)."""

    name: str
    type: str = "string"  # one of SETTING_TYPES
    required: bool = False
    max_length: int | None = None
    choices: tuple[str, ...] | None = None
    help: str = ""


@dataclass(frozen=True)
class PlatformCapabilities:
    """What one platform accepts, and how it counts text."""

    platform: str
    readiness: Readiness
    validated_at: str | None
    validated_what: str | None
    builtin: bool
    text_limit: int
    text_unit: str
    text_counting: str
    text_counter: Counter
    url_length: int
    text_max_bytes: int | None
    max_images: int | None  # None: no documented cap
    max_videos: int | None
    max_gifs: int | None
    mixed_media: bool
    accepts_media: frozenset[str]
    gif_counts_as: str | None
    requires_media: bool
    image_mime_types: frozenset[str] | None
    media_limits: MappingProxyType
    supports_threads: bool
    thread_mode: str
    supports_alt_text: bool
    alt_text_limit: int | None
    max_links: int | None
    max_hashtags: int | None
    max_mentions: int | None
    forbidden_characters: str
    settings: tuple[SettingSpec, ...]
    idempotency: str
    retry_safe_publish: bool
    async_publish: bool
    daily_cap: int | None
    publish_caps: tuple[MappingProxyType, ...]
    # A first comment under the post (or a self-reply where comments are replies).
    first_comment_limit: int | None  # None: not offered
    first_comment_mode: str | None  # comment, reply
    # Whether the adapter deletes a post the account made; else `delete_why` says whose
    # limit it is: "platform" (its API deletes nothing of the kind) or "not_built".
    delete_supported: bool
    delete_why: str | None
    delete_detail: str
    raw: MappingProxyType = field(repr=False)
    # The live validation that makes the platform supported ({passed_at, api_version,
    # steps_passed}); set by apps.providers.live.readiness, None in the file's catalog.
    validation: MappingProxyType | None = None

    @property
    def supports_first_comment(self) -> bool:
        return self.first_comment_limit is not None

    @property
    def is_supported(self) -> bool:
        return self.readiness is Readiness.SUPPORTED

    def max_media_for(self, kind: str) -> int | None:
        """The cap of the bucket this kind of media uses (a GIF may use the image or the
        video bucket, or its own)."""
        bucket = self.media_bucket(kind)
        return {IMAGE: self.max_images, VIDEO: self.max_videos, GIF: self.max_gifs}[bucket]

    def media_bucket(self, kind: str) -> str:
        if kind == GIF:
            return self.gif_counts_as or GIF
        return kind

    def as_dict(self) -> dict[str, Any]:
        """The public view the composer and the API show."""
        return {
            "platform": self.platform,
            "readiness": str(self.readiness),
            "validated_at": self.validated_at,
            "validated_what": self.validated_what,
            "validation": dict(self.validation, steps_passed=list(self.validation["steps_passed"]))
            if self.validation
            else None,
            "text": {
                "limit": self.text_limit,
                "unit": self.text_unit,
                "counter": str(self.text_counter),
                "counting": self.text_counting,
                "url_length": self.url_length,
                "max_bytes": self.text_max_bytes,
                "max_links": self.max_links,
                "max_hashtags": self.max_hashtags,
                "max_mentions": self.max_mentions,
                "forbidden_characters": self.forbidden_characters or None,
            },
            "media": {
                "kinds": sorted(self.accepts_media),
                "max_images": self.max_images,
                "max_videos": self.max_videos,
                "max_gifs": self.max_gifs,
                "gif_counts_as": self.gif_counts_as,
                "mixed": self.mixed_media,
                "required": self.requires_media,
                "image_mime_types": sorted(self.image_mime_types)
                if self.image_mime_types
                else None,
                "limits": dict(self.media_limits),
            },
            "threads": self.supports_threads,
            "thread_mode": self.thread_mode,
            "alt_text": {"supported": self.supports_alt_text, "limit": self.alt_text_limit},
            "settings": [
                {
                    "name": s.name,
                    "type": s.type,
                    "required": s.required,
                    "max_length": s.max_length,
                    "choices": list(s.choices) if s.choices else None,
                    "help": s.help,
                }
                for s in self.settings
            ],
            "idempotency": self.idempotency,
            "retry_safe_publish": self.retry_safe_publish,
            "async_publish": self.async_publish,
            "daily_cap": self.daily_cap,
            "first_comment": {
                "supported": self.supports_first_comment,
                "limit": self.first_comment_limit,
                "mode": self.first_comment_mode,
            },
            "delete": {
                "supported": self.delete_supported,
                "why_not": self.delete_why,
                "detail": self.delete_detail,
            },
        }


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _setting_type(platform: str, name: str, spec: dict) -> str:
    kind = spec.get("type")
    if kind not in SETTING_TYPES:
        raise ValueError(f"{platform}.{name}: setting type must be one of {SETTING_TYPES}.")
    return kind


def _parse(platform: str, data: dict) -> PlatformCapabilities:
    text = data["text_limit"]
    media = data.get("max_media") or {}
    rules = data.get("text_rules") or {}
    delete = data["delete"]
    readiness = Readiness(data.get("readiness", Readiness.EXPERIMENTAL))
    builtin = bool(data.get("builtin", False))
    if readiness is Readiness.SUPPORTED and not data.get("validated_what"):
        raise ValueError(f"{platform}: 'supported' needs validated_what.")
    if readiness is Readiness.SUPPORTED and not builtin:
        # A claim in a file never expires; a recorded live validation does (90 days).
        raise ValueError(
            f"{platform}: only a recorded live validation (validate_platform) makes an "
            "external platform supported, not the catalog file."
        )
    return PlatformCapabilities(
        platform=platform,
        readiness=readiness,
        validated_at=data.get("validated_at"),
        validated_what=data.get("validated_what"),
        builtin=builtin,
        text_limit=int(text["max"]),
        text_unit=text.get("unit", "char"),
        text_counting=text.get("counting", ""),
        text_counter=Counter(data["text_counter"]),
        url_length=_int_or_none(text.get("url_length")) or DEFAULT_URL_LENGTH,
        text_max_bytes=_int_or_none(text.get("max_bytes")),
        max_images=_int_or_none(media.get("images")),
        max_videos=_int_or_none(media.get("videos")),
        max_gifs=_int_or_none(media.get("gifs")),
        mixed_media=bool(media.get("mixed", False)),
        accepts_media=frozenset(data.get("accepts_media") or ()),
        gif_counts_as=data.get("gif_counts_as"),
        requires_media=bool(data.get("requires_media", False)),
        image_mime_types=frozenset(data["image_mime_types"])
        if data.get("image_mime_types")
        else None,
        media_limits=_freeze(data.get("media_limits") or {}),
        supports_threads=bool(data.get("supports_threads")),
        thread_mode=data.get("thread_mode") or "none",
        supports_alt_text=bool(data.get("supports_alt_text")),
        alt_text_limit=_int_or_none(data.get("alt_text_limit")),
        max_links=_int_or_none(rules.get("max_links")),
        max_hashtags=_int_or_none(rules.get("max_hashtags")),
        max_mentions=_int_or_none(rules.get("max_mentions")),
        forbidden_characters=rules.get("forbidden_characters") or "",
        settings=tuple(
            SettingSpec(
                name=name,
                type=_setting_type(platform, name, spec),
                required=bool(spec.get("required")),
                max_length=_int_or_none(spec.get("max_length")),
                choices=tuple(spec["choices"]) if spec.get("choices") else None,
                help=spec.get("help", ""),
            )
            for name, spec in (data.get("settings_schema") or {}).items()
        ),
        idempotency=data.get("idempotency") or "none",
        retry_safe_publish=bool(data.get("retry_safe_publish")),
        async_publish=bool(data.get("async_publish")),
        daily_cap=_int_or_none(data.get("daily_cap")),
        publish_caps=tuple(_freeze(c) for c in data.get("publish_caps") or ()),
        first_comment_limit=_int_or_none((data.get("first_comment") or {}).get("max_chars")),
        first_comment_mode=(data.get("first_comment") or {}).get("mode"),
        delete_supported=bool(delete["supported"]),
        delete_why=None if delete["supported"] else delete["why"],
        delete_detail=_delete_detail(delete),
        raw=_freeze(data),
    )


def _delete_detail(delete: dict) -> str:
    """The endpoint, with what to know about it in brackets; or why there is none."""
    endpoint, detail = delete.get("endpoint"), delete.get("detail")
    if endpoint and detail:
        return f"{endpoint} ({detail})"
    return endpoint or detail or ""


@cache
def _load() -> dict[str, PlatformCapabilities]:
    document = json.loads(CATALOG_PATH.read_text(encoding="utf-8"))
    return {name: _parse(name, data) for name, data in document["platforms"].items()}


def all_capabilities() -> dict[str, PlatformCapabilities]:
    """Every platform in the catalog, in the catalog's order."""
    return dict(_load())


def platforms() -> list[str]:
    return list(_load())


def get_capabilities(platform: str) -> PlatformCapabilities:
    """The platform's capabilities; UnknownPlatform (404-class) when it is not catalogued."""
    try:
        return _load()[platform]
    except KeyError:
        raise UnknownPlatform(
            f"'{platform}' is not in the capability catalog.",
            details={"platform": platform, "known": platforms()},
        ) from None
