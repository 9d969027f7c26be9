"""The composer's draft: what the form holds, read from a POST or from a publication, and
turned into the plain data the publication services take (the same shape as the API's).

Form field names:
    segment_count                       how many parts (thread segments) there are
    segment-<i>-text                    the source text of part i
    segment-<i>-media / segment-<i>-alt media ids of part i and their alt texts, in order
    segment-<i>-file                    files to upload into part i
    destinations                        the selected account ids
    override-<account>                  "on": this destination has its own texts
    override-<account>-<i>-text         its text for part i (blank: part i is left out)
    setting-<account>-<name>            a platform setting (a YouTube title...)
    first_comment                       posted under each live post where the platform takes it
    date, time                          the schedule, a wall-clock time in `zone`
    revision                            the revision an edit was made against
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass, field
from datetime import datetime

from django.http import QueryDict

from apps.accounts.models import SocialAccount, Workspace
from apps.providers.catalog import (
    PlatformCapabilities,
    SettingSpec,
    UnknownPlatform,
    get_capabilities,
)
from apps.publications import constants
from apps.publications.models import MediaAsset, Publication
from apps.renditions.models import Rendition
from apps.web.composer.sent import segment_text


def setting_from_form(spec: SettingSpec, value: str) -> object:
    """A setting's form text as the catalog's type (booleans come from a true/false
    select, lists are comma separated). Text that does not fit the type stays text, so
    validation names the problem."""
    if spec.type == "boolean" and value in ("true", "false"):
        return value == "true"
    if spec.type == "integer" and value.lstrip("-").isdigit():
        return int(value)
    if spec.type == "list":
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def setting_to_form(value: object) -> str:
    """A stored setting as the form shows it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


@dataclass
class MediaDraft:
    asset: MediaAsset
    alt_text: str = ""


@dataclass
class SegmentDraft:
    text: str = ""
    media: list[MediaDraft] = field(default_factory=list)


@dataclass
class DestinationDraft:
    account: SocialAccount
    override: bool = False
    texts: list[str] = field(default_factory=list)  # one per source part, when override
    settings: dict[str, object] = field(default_factory=dict)  # typed as the catalog says

    @property
    def key(self) -> str:
        return str(self.account.pk)

    @property
    def capabilities(self) -> PlatformCapabilities | None:
        try:
            return get_capabilities(self.account.platform)
        except UnknownPlatform:
            return None


@dataclass
class Draft:
    segments: list[SegmentDraft]
    destinations: list[DestinationDraft]
    date: str = ""
    time: str = ""
    zone: str = "UTC"
    revision: int | None = None
    active_tab: str = ""
    first_comment: str = ""

    # --- reading ---------------------------------------------------------------------

    @classmethod
    def empty(cls, *, zone: str, at: str | None = None) -> Draft:
        """A blank post; `at` (a wall-clock "2027-03-28T09:00", from the calendar) fills
        its date and time, and anything else is ignored."""
        draft = cls(segments=[SegmentDraft()], destinations=[], zone=zone)
        try:
            when = datetime.fromisoformat(at) if at else None
        except ValueError:
            when = None
        if when is not None and when.tzinfo is None:
            draft.date, draft.time = when.date().isoformat(), when.strftime("%H:%M")
        return draft

    @classmethod
    def from_post(
        cls, data: QueryDict, *, workspace: Workspace, accounts: list[SocialAccount], zone: str
    ) -> Draft:
        """Read the form. Media and accounts are looked up in this workspace only: an id
        from elsewhere is dropped, as if it had never been sent."""
        count = _bounded_int(data.get("segment_count"), low=1, high=constants.MAX_SEGMENTS)
        media_ids = {
            int(value)
            for i in range(count)
            for value in data.getlist(f"segment-{i}-media")
            if value.isdigit()
        }
        assets = {
            a.pk: a for a in MediaAsset.objects.for_workspace(workspace).filter(pk__in=media_ids)
        }
        segments = []
        for i in range(count):
            ids = data.getlist(f"segment-{i}-media")
            alts = data.getlist(f"segment-{i}-alt")
            media = [
                MediaDraft(asset=assets[int(value)], alt_text=(alts[j] if j < len(alts) else ""))
                for j, value in enumerate(ids)
                if value.isdigit() and int(value) in assets
            ]
            segments.append(SegmentDraft(text=data.get(f"segment-{i}-text", ""), media=media))

        chosen = set(data.getlist("destinations"))
        destinations = []
        for account in accounts:
            key = str(account.pk)
            if key not in chosen:
                continue
            destination = DestinationDraft(account=account)
            destination.override = data.get(f"override-{key}") == "on"
            if destination.override:
                destination.texts = [
                    data.get(f"override-{key}-{i}-text", segments[i].text) for i in range(count)
                ]
            caps = destination.capabilities
            for spec in caps.settings if caps else ():
                value = data.get(f"setting-{key}-{spec.name}", "").strip()
                if value:
                    destination.settings[spec.name] = setting_from_form(spec, value)
            destinations.append(destination)

        revision = data.get("revision", "")
        return cls(
            segments=segments,
            destinations=destinations,
            date=data.get("date", "").strip(),
            time=data.get("time", "").strip(),
            zone=zone,
            revision=int(revision) if revision.isdigit() else None,
            active_tab=data.get("active_tab", ""),
            first_comment=data.get("first_comment", ""),
        )

    @classmethod
    def from_publication(cls, publication: Publication, *, zone: str) -> Draft:
        segments = [
            SegmentDraft(
                text=segment.text,
                media=[
                    MediaDraft(asset=link.media, alt_text=link.alt_text)
                    for link in segment.media_links.select_related("media").order_by("position")
                ],
            )
            for segment in publication.segments.order_by("position")
        ] or [SegmentDraft()]
        renditions = (
            publication.renditions.exclude(status=Rendition.Status.CANCELLED)
            .select_related("social_account")
            .order_by("social_account__platform", "social_account__handle")
        )
        destinations = []
        for rendition in renditions:
            destination = DestinationDraft(
                account=rendition.social_account,
                override=rendition.overrides_content,
                settings=dict(rendition.settings or {}),
            )
            if rendition.overrides_content:
                texts = {s.position: segment_text(s) for s in rendition.segments.all()}
                destination.texts = [texts.get(i, "") for i in range(len(segments))]
            destinations.append(destination)
        date = time = ""
        if publication.scheduled_at is not None:
            local = publication.scheduled_at.astimezone(zoneinfo.ZoneInfo(zone))
            date, time = local.strftime("%Y-%m-%d"), local.strftime("%H:%M")
        return cls(
            segments=segments,
            destinations=destinations,
            date=date,
            time=time,
            zone=zone,
            revision=publication.revision,
            first_comment=publication.first_comment,
        )

    @classmethod
    def copy_of(cls, publication: Publication, *, zone: str) -> Draft:
        """A new post's draft with the publication's parts, media, destinations, their
        own texts and settings; no time and no revision (it is not that post)."""
        draft = cls.from_publication(publication, zone=zone)
        draft.date = draft.time = ""
        draft.revision = None
        return draft

    # --- editing ---------------------------------------------------------------------

    def add_segment(self) -> None:
        if len(self.segments) >= constants.MAX_SEGMENTS:
            return
        self.segments.append(SegmentDraft())
        for destination in self.destinations:
            if destination.override:
                destination.texts.append("")

    def remove_segment(self, index: int) -> None:
        if len(self.segments) <= 1 or not 0 <= index < len(self.segments):
            return
        del self.segments[index]
        for destination in self.destinations:
            if destination.override and index < len(destination.texts):
                del destination.texts[index]

    def remove_media(self, index: int, position: int) -> None:
        if 0 <= index < len(self.segments) and 0 <= position < len(self.segments[index].media):
            del self.segments[index].media[position]

    def attach(self, index: int, asset: MediaAsset) -> None:
        self.segments[index].media.append(MediaDraft(asset=asset, alt_text=asset.alt_text))

    # --- writing ---------------------------------------------------------------------

    def destination(self, key: str) -> DestinationDraft | None:
        return next((d for d in self.destinations if d.key == key), None)

    def parts(self, destination: DestinationDraft) -> list[tuple[int, str, list[MediaDraft]]]:
        """What the destination publishes: (source part index, text, media) per part. An
        override leaves out the parts whose text it left blank."""
        if not destination.override:
            return [(i, s.text, s.media) for i, s in enumerate(self.segments)]
        return [
            (i, text, self.segments[i].media)
            for i, text in enumerate(destination.texts[: len(self.segments)])
            if text.strip()
        ]

    def segments_payload(self) -> list[dict]:
        return [_segment_payload(s.text, s.media) for s in self.segments]

    def destinations_payload(self) -> list[dict]:
        payload = []
        for destination in self.destinations:
            entry: dict = {"account": destination.account.pk, "settings": destination.settings}
            if destination.override:
                entry["segments"] = [
                    _segment_payload(text, media) for _i, text, media in self.parts(destination)
                ]
            payload.append(entry)
        return payload

    @property
    def has_time(self) -> bool:
        return bool(self.date or self.time)

    def local_time(self) -> str:
        """The wall-clock time as ISO 8601 (no offset): the zone decides the instant."""
        return f"{self.date}T{self.time}"

    def time_error(self) -> str | None:
        """Why the date/time fields cannot be read, or None."""
        if not self.has_time:
            return None
        if not (self.date and self.time):
            return "Give both a date and a time."
        try:
            datetime.fromisoformat(self.local_time())
        except ValueError:
            return "Use a date like 2027-03-28 and a time like 09:30."
        return None


def _segment_payload(text: str, media: list[MediaDraft]) -> dict:
    return {"text": text, "media": [{"id": m.asset.pk, "alt_text": m.alt_text} for m in media]}


def _bounded_int(value: str | None, *, low: int, high: int) -> int:
    try:
        number = int(value or low)
    except ValueError:
        number = low
    return max(low, min(high, number))
