"""What a calendar card shows of a publication: its local time, first words, destinations'
platforms, a thumbnail of its first image, whether a series made it, its status, and
whether it can be moved. One query per table, whatever the number of posts."""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef, Prefetch

from apps.accounts.models import Workspace
from apps.publications.models import Publication, PublicationSegment, SegmentMedia
from apps.renditions.models import Rendition
from apps.series.models import SeriesOccurrence
from apps.web.templatetags.webapp import status_key

PLATFORM_MARKS = {
    "mastodon": "M",
    "bluesky": "B",
    "linkedin": "in",
    "x": "X",
    "threads": "@",
    "instagram": "IG",
    "facebook": "f",
    "tiktok": "TT",
    "youtube": "YT",
    "pinterest": "P",
    "reddit": "r",
    "sandbox": "S",
}


@dataclass(frozen=True)
class Destination:
    platform: str
    handle: str
    status: str

    @property
    def mark(self) -> str:
        return PLATFORM_MARKS.get(self.platform, self.platform[:2].upper())


@dataclass
class Card:
    pk: int
    revision: int
    local: datetime  # aware, in the display zone
    status: str
    text: str
    parts: int
    destinations: list[Destination]
    thumbnail_id: int | None  # a MediaAsset of the workspace, shown through media-file
    thumbnail_alt: str
    recurring: bool
    movable: bool

    @property
    def platforms(self) -> list[Destination]:
        """One entry per platform (a post to two Mastodon accounts shows one mark)."""
        seen: dict[str, Destination] = {}
        for destination in self.destinations:
            seen.setdefault(destination.platform, destination)
        return list(seen.values())

    @property
    def handles(self) -> str:
        return ", ".join(f"@{d.handle}" for d in self.destinations)


def publications_between(workspace: Workspace, start: datetime, end: datetime):
    """A workspace's timed publications in [start, end), cancelled ones left out, with
    everything a card shows fetched in one query per table."""
    return (
        Publication.objects.for_workspace(workspace)
        .filter(scheduled_at__gte=start, scheduled_at__lt=end)
        .exclude(status=Publication.Status.CANCELLED)
        .annotate(in_series=Exists(SeriesOccurrence.objects.filter(publication=OuterRef("pk"))))
        .prefetch_related(
            Prefetch("segments", queryset=PublicationSegment.objects.order_by("position")),
            Prefetch(
                "segments__media_links",
                queryset=SegmentMedia.objects.select_related("media").order_by("position"),
            ),
            Prefetch(
                "renditions",
                queryset=Rendition.objects.select_related("social_account").order_by("pk"),
            ),
        )
        .order_by("scheduled_at", "pk")
    )


def _thumbnail(segments: list[PublicationSegment]) -> tuple[int | None, str]:
    for segment in segments:
        for link in segment.media_links.all():
            if link.media.kind != link.media.Kind.VIDEO:
                return link.media_id, link.effective_alt_text
    return None, ""


def card_for(publication: Publication, zone: zoneinfo.ZoneInfo, *, can_move: bool) -> Card:
    segments = list(publication.segments.all())
    renditions = [r for r in publication.renditions.all() if r.status != Rendition.Status.CANCELLED]
    thumbnail_id, thumbnail_alt = _thumbnail(segments)
    assert publication.scheduled_at is not None  # publications_between keeps timed ones
    return Card(
        pk=publication.pk,
        revision=publication.revision,
        local=publication.scheduled_at.astimezone(zone),
        status=status_key(publication),  # "needs_attention" while an outcome is unknown
        text=next((s.text for s in segments if s.text), ""),
        parts=len(segments),
        destinations=[
            Destination(r.social_account.platform, r.social_account.handle, r.status)
            for r in renditions
        ],
        thumbnail_id=thumbnail_id,
        thumbnail_alt=thumbnail_alt,
        recurring=bool(getattr(publication, "in_series", False)),
        movable=can_move and any(r.status in Rendition.NOT_STARTED for r in renditions),
    )


def cards_between(
    workspace: Workspace, start: datetime, end: datetime, zone: zoneinfo.ZoneInfo, *, can_move: bool
) -> list[Card]:
    return [
        card_for(p, zone, can_move=can_move) for p in publications_between(workspace, start, end)
    ]
