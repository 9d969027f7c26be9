"""What the composer shows while a person writes: each destination's character counts,
counted the way its platform counts, and every problem the capability catalog finds, by
field path. The same `validate_rendition` runs again when the post is scheduled, so what
the composer shows is what scheduling enforces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.providers.catalog import PlatformCapabilities
from apps.providers.text_counting import count_text
from apps.providers.validation import MediaInfo, validate_rendition
from apps.renditions.selectors import account_text_limit
from apps.web.composer.draft import DestinationDraft, Draft
from apps.web.templatetags.webapp import humanize, platform_name

NEAR_LIMIT = 0.9  # counters turn amber past this share of the limit

UNIT_WORDS = {
    "graphemes": "characters",
    "mastodon": "characters (links count 23)",
    "x_weighted": "weighted characters (links count 23, CJK and emoji 2)",
    "threads": "characters (emoji count their bytes)",
    "code_points": "characters",
    "utf16": "UTF-16 units",
    "utf8_bytes": "bytes",
}


@dataclass(frozen=True)
class Count:
    part: int  # source part index
    used: int
    limit: int

    @property
    def is_over(self) -> bool:
        return self.used > self.limit

    @property
    def is_near(self) -> bool:
        return not self.is_over and self.used >= self.limit * NEAR_LIMIT


@dataclass(frozen=True)
class Message:
    """One problem, with where it is: the field path, a label for people, and the id of
    the form field it belongs to (for links and inline errors)."""

    path: str
    label: str
    message: str
    field_id: str = ""


@dataclass
class DestinationCheck:
    destination: DestinationDraft
    index: int  # its position in the destinations sent to the service
    capabilities: PlatformCapabilities | None
    limit: int | None
    unit: str
    counts: list[Count] = field(default_factory=list)
    problems: list[Message] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.destination.key

    def count_for(self, part: int) -> Count | None:
        return next((c for c in self.counts if c.part == part), None)


@dataclass
class DraftCheck:
    destinations: list[DestinationCheck]

    @property
    def problems(self) -> list[Message]:
        return [p for d in self.destinations for p in d.problems]

    def for_destination(self, key: str) -> DestinationCheck | None:
        return next((d for d in self.destinations if d.key == key), None)

    def source_counts(self, part: int) -> list[tuple[DestinationCheck, Count]]:
        """Counts of the destinations that publish the source text of this part."""
        return [
            (d, count)
            for d in self.destinations
            if not d.destination.override and (count := d.count_for(part)) is not None
        ]


def check_draft(draft: Draft) -> DraftCheck:
    checks = []
    for index, destination in enumerate(draft.destinations):
        checks.append(_check_destination(draft, index, destination))
    return DraftCheck(destinations=checks)


def _check_destination(draft: Draft, index: int, destination: DestinationDraft) -> DestinationCheck:
    caps = destination.capabilities
    account = destination.account
    limit = account_text_limit(account) or (caps.text_limit if caps else None)
    check = DestinationCheck(
        destination=destination,
        index=index,
        capabilities=caps,
        limit=limit,
        unit=UNIT_WORDS.get(str(caps.text_counter), "characters") if caps else "characters",
    )
    parts = draft.parts(destination)
    if caps is not None and limit is not None:
        for source_index, text, _media in parts:
            used = count_text(text, caps.text_counter, url_length=caps.url_length)
            check.counts.append(Count(part=source_index, used=used, limit=limit))
    problems = validate_rendition(
        account.platform,
        [text for _i, text, _m in parts],
        destination.settings,
        [[_media_info(m) for m in media] for _i, _t, media in parts],
        text_limit=account_text_limit(account),
    )
    fields = FieldMap(draft)
    check.problems = [
        fields.message(p.prefixed(f"destinations.{index}").path, p.message) for p in problems
    ]
    return check


def _media_info(media) -> MediaInfo:
    asset = media.asset
    return MediaInfo(
        kind=asset.kind,
        mime_type=asset.mime_type,
        size_bytes=asset.size_bytes,
        width=asset.width,
        height=asset.height,
        duration_s=asset.duration_s,
        alt_text=media.alt_text,
    )


_DEST = re.compile(r"^destinations\.(\d+)(?:\.(.*))?$")
_SEG = re.compile(r"^segments\.(\d+)(?:\.(.*))?$")
_MEDIA = re.compile(r"^media\.(\d+)(?:\.(.*))?$")


class FieldMap:
    """Turns a service's field path into a label and the form field it names.

    Paths under a destination count that destination's parts, which skip the parts an
    override left blank, so "destinations.1.segments.0" may be source part 2.
    """

    def __init__(self, draft: Draft) -> None:
        self.draft = draft

    def message(self, path: str, message: str) -> Message:
        label, field_id = self.locate(path)
        return Message(path=path, label=label, message=message, field_id=field_id)

    def locate(self, path: str) -> tuple[str, str]:
        if path in ("scheduled_at", "local_time", "timezone"):
            return "Schedule", "schedule-date"
        if path in ("destinations", "status"):
            return "Destinations", "destinations"
        if path == "first_comment":
            return "First comment", "first-comment"
        match = _SEG.match(path)
        if match:
            return self._part(int(match.group(1)), match.group(2) or "", None)
        match = _DEST.match(path)
        if not match:
            # A field the form does not show: the message speaks for itself.
            return "", ""
        index, rest = int(match.group(1)), match.group(2) or ""
        if index >= len(self.draft.destinations):
            return "Destinations", "destinations"
        destination = self.draft.destinations[index]
        name = f"@{destination.account.handle} ({platform_name(destination.account.platform)})"
        if rest.startswith("settings."):
            setting = rest.split(".", 1)[1]
            return f"{name} › {humanize(setting)}", f"setting-{destination.key}-{setting}"
        if rest in ("scheduled_at", "local_time", "timezone"):
            return f"{name} › Schedule", f"tab-{destination.key}"
        if rest in ("account", "", "settings"):
            return name, f"tab-{destination.key}"
        match = _SEG.match(rest)
        if match:
            parts = self.draft.parts(destination)
            position = int(match.group(1))
            source = parts[position][0] if position < len(parts) else position
            label, field_id = self._part(source, match.group(2) or "", destination)
            return f"{name} › {label}", field_id
        return name, f"tab-{destination.key}"

    def _part(self, index: int, rest: str, destination: DestinationDraft | None) -> tuple[str, str]:
        label = f"Part {index + 1}" if len(self.draft.segments) > 1 else "Text"
        text_id = (
            f"override-{destination.key}-{index}-text"
            if destination is not None and destination.override
            else f"seg-{index}-text"
        )
        if rest in ("", "text"):
            return (f"{label} text" if label != "Text" else label), text_id
        match = _MEDIA.match(rest)
        if match:
            position = int(match.group(1))
            if match.group(2) == "alt_text":
                return f"{label} › media {position + 1} alt text", f"seg-{index}-alt-{position}"
            return f"{label} › media {position + 1}", f"seg-{index}-media-{position}"
        if rest == "media":
            return f"{label} › media", f"seg-{index}-file"
        return label, text_id


def problems_from_details(draft: Draft, details: dict) -> list[Message]:
    """A ValidationFailed's details ({path: [messages]}) as messages for the form."""
    fields = FieldMap(draft)
    messages = []
    for path, texts in details.items():
        for text in texts if isinstance(texts, list) else [texts]:
            messages.append(fields.message(path, str(text)))
    return messages
