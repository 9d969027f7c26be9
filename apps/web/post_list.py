"""The posts list's order, read a page at a time from where the last page stopped.

The order: upcoming posts first, soonest first; then everything else, most recent first
(by its time, or when it was written if it has none); ties by id. An offset page would
sort the whole workspace to skip to row N, so a page starts after the last row of the one
before instead (a cursor: which part, the time and the id), and each part is read in its
own order from an index, at most a page of it:

- upcoming: ``scheduled_at >= now``, not cancelled, by ``(scheduled_at, id)``, forwards
  on ``publication_ws_scheduled``;
- the rest, by ``(coalesce(scheduled_at, created_at), id)`` backwards, merged from three
  reads: posts whose time has passed (the same index, backwards from now), cancelled posts
  whose time has not come, and posts with no time (by ``created_at``).

A page of 25 reads at most 26 rows of each part, whatever the size of the workspace.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Q, QuerySet

from apps.publications.models import Publication
from apps.publishing.selectors import publication_page

PAGE_SIZE = 25
UPCOMING, REST = "u", "r"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Cursor:
    """Where a page starts: after the row of this part with this (time, id)."""

    part: str
    at: datetime
    pk: int

    def encode(self) -> str:
        micros = (self.at - _EPOCH) // timedelta(microseconds=1)
        return f"{self.part}.{micros}.{self.pk}"

    @classmethod
    def decode(cls, raw: str | None) -> Cursor | None:
        """The cursor of a `?after=` value; None for none, or one that is not ours (the
        list starts over)."""
        part, _, rest = (raw or "").partition(".")
        micros, _, pk = rest.partition(".")
        if part not in (UPCOMING, REST) or not micros.lstrip("-").isdigit() or not pk.isdigit():
            return None
        if len(micros) > 20 or len(pk) > 18:
            return None
        try:
            at = _EPOCH + timedelta(microseconds=int(micros))
        except OverflowError:
            return None
        return cls(part, at, int(pk))


@dataclass
class Page:
    posts: list[Publication]
    next_cursor: str | None
    is_first: bool
    past: frozenset[int] = frozenset()  # the pks of the posts shown from the history

    def is_past(self, post: Publication) -> bool:
        return post.pk in self.past


def _after(field: str, cursor: Cursor, *, forwards: bool) -> Q:
    """Rows after the cursor in (field, id) order. The bound on the field alone comes
    first so the index range starts there; the id breaks the tie."""
    if forwards:
        return Q(**{f"{field}__gte": cursor.at}) & (
            Q(**{f"{field}__gt": cursor.at}) | Q(pk__gt=cursor.pk)
        )
    return Q(**{f"{field}__lte": cursor.at}) & (
        Q(**{f"{field}__lt": cursor.at}) | Q(pk__lt=cursor.pk)
    )


def _keys(rows: QuerySet, field: str, n: int) -> list[tuple[datetime, int]]:
    return [(at, pk) for pk, at in rows.values_list("pk", field)[:n]]


def _upcoming(publications: QuerySet, now: datetime, cursor: Cursor | None, n: int):
    rows = publications.filter(scheduled_at__gte=now).exclude(status=Publication.Status.CANCELLED)
    if cursor is not None:
        rows = rows.filter(_after("scheduled_at", cursor, forwards=True))
    return _keys(rows.order_by("scheduled_at", "pk"), "scheduled_at", n)


def _rest(publications: QuerySet, now: datetime, cursor: Cursor | None, n: int):
    parts = [
        (publications.filter(scheduled_at__lt=now), "scheduled_at"),
        (
            publications.filter(scheduled_at__gte=now, status=Publication.Status.CANCELLED),
            "scheduled_at",
        ),
        (publications.filter(scheduled_at__isnull=True), "created_at"),
    ]
    streams = []
    for rows, field in parts:
        if cursor is not None:
            rows = rows.filter(_after(field, cursor, forwards=False))
        streams.append(_keys(rows.order_by(f"-{field}", "-pk"), field, n))
    merged = heapq.merge(*streams, reverse=True)
    return [key for key, _ in zip(merged, range(n), strict=False)]


def read_page(
    publications: QuerySet, *, now: datetime, after: str | None, size: int = PAGE_SIZE
) -> Page:
    """The page of `publications` (already filtered) after the cursor `after`, the posts
    read whole by the one read of a publication (one query for the page)."""
    cursor = Cursor.decode(after)
    keys: list[tuple[str, datetime, int]] = []
    rest_cursor = None
    if cursor is None or cursor.part == UPCOMING:
        keys = [(UPCOMING, at, pk) for at, pk in _upcoming(publications, now, cursor, size + 1)]
    else:
        rest_cursor = cursor
    if len(keys) <= size:
        wanted = size + 1 - len(keys)
        keys += [(REST, at, pk) for at, pk in _rest(publications, now, rest_cursor, wanted)]
    shown, extra = keys[:size], keys[size:]
    next_cursor = Cursor(*shown[-1]).encode() if extra and shown else None
    parts = {pk: part for part, _at, pk in shown}
    posts = publication_page(publications, list(parts))
    past = frozenset(pk for pk, part in parts.items() if part == REST)
    return Page(posts, next_cursor, is_first=cursor is None, past=past)
