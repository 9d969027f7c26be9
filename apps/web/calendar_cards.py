"""What a calendar card shows of a publication: its local time, first words, destinations'
platforms, a thumbnail of its first image, whether a series made it, its status, and
whether it can be moved. One query per table, whatever the number of posts.

A page shows a bounded number of cards: the first few of each day (month, agenda) or of
each hour (week), chosen by one query that asks each of those cells for its first rows
through the (workspace, scheduled_at) index, and how many posts each cell holds, counted
by one grouped query; the rest of a cell is "N more", a link to the day's list. So a
month of 6,000 posts costs what a month of 100 does.
"""

from __future__ import annotations

import zoneinfo
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Exists, OuterRef

from apps.accounts.models import SocialAccount, Workspace
from apps.publications.models import MediaAsset, Publication, PublicationSegment, SegmentMedia
from apps.renditions.models import Rendition
from apps.series.models import SeriesOccurrence
from apps.web.templatetags.webapp import NEEDS_ATTENTION

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


# Cards a cell shows before "N more".
CARDS_PER_DAY = 4  # a day of the month
CARDS_PER_HOUR = 3  # an hour of the week
CARDS_PER_AGENDA_DAY = 20  # a day of the agenda, one card per line

# Counts are grouped by quarter hours in UTC: every zone's offset is a whole number of
# quarter hours, so each group falls in one local hour (and one local day) of any zone.
_COUNTS_SQL = f"""
    SELECT date_bin('15 minutes', scheduled_at, TIMESTAMPTZ '2000-01-01 00:00+00'), count(*)
      FROM publications_publication
     WHERE workspace_id = %s AND scheduled_at >= %s AND scheduled_at < %s
       AND status <> '{Publication.Status.CANCELLED}'
     GROUP BY 1
"""  # noqa: S608 - a constant

# The first `limit` posts of each cell [start, end): one index probe per cell.
_FIRST_SQL = f"""
    SELECT first.id
      FROM unnest(%s::timestamptz[], %s::timestamptz[]) AS cell(start_at, end_at)
     CROSS JOIN LATERAL (
           SELECT p.id FROM publications_publication p
            WHERE p.workspace_id = %s
              AND p.scheduled_at >= cell.start_at AND p.scheduled_at < cell.end_at
              AND p.status <> '{Publication.Status.CANCELLED}'
            ORDER BY p.scheduled_at, p.id
            LIMIT %s
       ) AS first
"""  # noqa: S608 - a constant


def counts_between(workspace: Workspace, start: datetime, end: datetime) -> Counter[datetime]:
    """How many posts (cancelled ones left out) start in each UTC quarter hour of
    [start, end), by the quarter's first instant."""
    with connection.cursor() as cursor:
        cursor.execute(_COUNTS_SQL, [workspace.pk, start, end])
        return Counter(dict(cursor.fetchall()))


def first_in_cells(
    workspace: Workspace, cells: Sequence[tuple[datetime, datetime]], limit: int
) -> list[int]:
    """The ids of the first `limit` posts of each cell, in one query."""
    if not cells:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            _FIRST_SQL,
            [[start for start, _ in cells], [end for _, end in cells], workspace.pk, limit],
        )
        return [row[0] for row in cursor.fetchall()]


def cards_between(
    workspace: Workspace,
    start: datetime,
    end: datetime,
    zone: zoneinfo.ZoneInfo,
    *,
    can_move: bool,
    ids: Sequence[int] | None = None,
) -> list[Card]:
    """The cards of a workspace's timed publications in [start, end) (only those of `ids`
    when given), cancelled ones left out, in time order: one query per table, each
    reading only the columns a card shows as plain rows (a week holds hundreds of cards,
    and building a model instance of every row cost more than the rest of the page)."""
    if ids is not None and not ids:
        return []
    publications = Publication.objects.for_workspace(workspace)
    if ids is not None:
        publications = publications.filter(pk__in=ids)
    rows = list(
        publications.filter(scheduled_at__gte=start, scheduled_at__lt=end)
        .exclude(status=Publication.Status.CANCELLED)
        .annotate(in_series=Exists(SeriesOccurrence.objects.filter(publication=OuterRef("pk"))))
        .order_by("scheduled_at", "pk")
        .values_list("pk", "status", "revision", "scheduled_at", "in_series")
    )
    pks = [row[0] for row in rows]
    segments: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for segment_id, publication_id, text in (
        PublicationSegment.objects.filter(publication_id__in=pks)
        .order_by("publication_id", "position")
        .values_list("pk", "publication_id", "text")
    ):
        segments[publication_id].append((segment_id, text))
    # Each segment's first image (a video has no thumbnail), with its alt text.
    images: dict[int, tuple[int, str]] = {}
    for segment_id, media_id, alt_text, media_alt_text in (
        SegmentMedia.objects.filter(segment__publication_id__in=pks)
        .exclude(media__kind=MediaAsset.Kind.VIDEO)
        .order_by("segment_id", "position")
        .values_list("segment_id", "media_id", "alt_text", "media__alt_text")
    ):
        images.setdefault(segment_id, (media_id, alt_text or media_alt_text))
    renditions = _renditions_of(pks)
    cards = []
    for pk, status, revision, scheduled_at, in_series in rows:
        assert scheduled_at is not None  # rows are filtered on a range of it
        texts = segments.get(pk, [])
        thumbnail = next((images[s] for s, _ in texts if s in images), (None, ""))
        every = renditions.get(pk, [])
        # "needs_attention" while an outcome is unknown, as status_key shows it.
        shown = NEEDS_ATTENTION if any(r[1] for r in every) else str(status)
        live = [r for r in every if r[0] != Rendition.Status.CANCELLED]
        cards.append(
            Card(
                pk=pk,
                revision=revision,
                local=scheduled_at.astimezone(zone),
                status=shown,
                text=next((text for _, text in texts if text), ""),
                parts=len(texts),
                destinations=[
                    Destination(platform, handle, st) for st, _, platform, handle in live
                ],
                thumbnail_id=thumbnail[0],
                thumbnail_alt=thumbnail[1],
                recurring=bool(in_series),
                movable=can_move and any(r[0] in Rendition.NOT_STARTED for r in live),
            )
        )
    return cards


def _renditions_of(pks: list[int]) -> dict[int, list[tuple[str, bool, str, str]]]:
    """Each publication's renditions as (status, ambiguous, platform, handle), in order.

    By publication only, sorted here and the handles read apart: with an ORDER BY id,
    or a join to the accounts, the planner may read every rendition of the workspace's
    few accounts (or walk the primary key) and filter, where the lookup by publication
    reads the shown rows only."""
    renditions: dict[int, list[tuple[str, bool, str, str]]] = defaultdict(list)
    rows_of = sorted(
        Rendition.objects.filter(publication_id__in=pks).values_list(
            "pk", "publication_id", "status", "ambiguous", "platform", "social_account_id"
        )
    )
    handles = dict(
        SocialAccount.objects.filter(pk__in={row[5] for row in rows_of}).values_list("pk", "handle")
    )
    for _, publication_id, status, ambiguous, platform, account_id in rows_of:
        renditions[publication_id].append((status, ambiguous, platform, handles[account_id]))
    return renditions
