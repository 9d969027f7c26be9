"""The one read of a publication, for every door: the token API, MCP and the web app.

A publication and every relation its pages and representation show come back as one JSON
value (apps.common.json_rows), turned back into model instances with their relations in the
caches ``select_related`` and ``prefetch_related`` would fill: its segments and their media,
its renditions with their accounts, delivery attempts, first comments, segments and media;
for the post's page also its author, review and review comments. The code reading them
(serializers, templates) calls ``publication.renditions.all()`` and never knows. So reading
one publication, or a page of any length, costs one query:

- ``publication_detail``: one publication of a workspace, or None (SQL compiled once per
  process);
- ``publication_page``: publications of a queryset by id, in the order asked (a page
  whose order the caller worked out, as the posts list does);
- ``with_publication_read``: a queryset (filtered, ordered and sliced as the caller likes)
  whose rows come out read whole, in the query that lists them;
- ``publish_due_times``: when each rendition's pending publish job runs, for many
  renditions in one query (the web app reads no job table itself).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connection, connections
from django.db.models import F, OrderBy, QuerySet
from django.db.models.query import ModelIterable
from django.db.models.sql import Query

from apps.accounts.models import SocialAccount, User
from apps.approvals.models import PortalLink, Review, ReviewComment
from apps.common.json_rows import JsonQuery, Nested, Shape, json_object, load
from apps.jobs.models import Job
from apps.publications.models import MediaAsset, Publication, PublicationSegment, SegmentMedia
from apps.publishing.delivery.enqueue import publish_dedupe_key
from apps.renditions.models import (
    DeliveryAttempt,
    FirstComment,
    Rendition,
    RenditionMedia,
    RenditionSegment,
)

_USER = ("id", "name", "email")


def _shape(*, for_page: bool) -> Shape:
    """The publication with what every door shows; with its author, review and review
    comments too when ``for_page`` (the web app's post page)."""
    nested: tuple[Nested, ...] = (
        Nested(
            "segments",
            "publication",
            Shape(
                PublicationSegment,
                nested=(
                    Nested(
                        "media_links",
                        "segment",
                        Shape(
                            SegmentMedia,
                            joined={"media": Shape(MediaAsset, ("id", "alt_text", "kind"))},
                        ),
                        ("position",),
                    ),
                ),
            ),
            ("position",),
        ),
        Nested(
            "renditions",
            "publication",
            Shape(
                Rendition,
                joined={
                    "social_account": Shape(SocialAccount, ("id", "handle", "platform", "status"))
                },
                nested=(
                    Nested(
                        "delivery_attempts",
                        "rendition",
                        Shape(DeliveryAttempt),
                        ("started_at", "pk"),  # its Meta ordering, within one rendition
                    ),
                    Nested(
                        "segments",
                        "rendition",
                        Shape(
                            RenditionSegment,
                            nested=(
                                Nested(
                                    "media",
                                    "rendition_segment",
                                    Shape(RenditionMedia),
                                    ("position",),
                                ),
                            ),
                        ),
                        ("position",),
                    ),
                    Nested("first_comment", "rendition", Shape(FirstComment), one=True),
                ),
            ),
        ),
    )
    if not for_page:
        return Shape(Publication, nested=nested)
    client = Shape(PortalLink, ("id", "label"))  # a client's decision, through a link
    people = {
        "requested_by": Shape(User, _USER),
        "decided_by": Shape(User, _USER),
        "decided_via": client,
    }
    nested += (
        Nested("review", "publication", Shape(Review, joined=people), one=True),
        Nested(
            "review_comments",
            "publication",
            Shape(ReviewComment, joined={"author": Shape(User, _USER), "portal_link": client}),
            ("created_at", "pk"),
        ),
    )
    return Shape(Publication, joined={"author": Shape(User, _USER)}, nested=nested)


_SHOWN = _shape(for_page=False)
_PAGE = _shape(for_page=True)


def _query(shape: Shape) -> JsonQuery:
    return JsonQuery(
        lambda pk, workspace: Publication.objects.filter(pk=pk, workspace_id=workspace).values(
            row=json_object(shape)
        ),
        pk=-7_000_000_001,
        workspace=-7_000_000_002,
    )


_QUERIES = {False: _query(_SHOWN), True: _query(_PAGE)}
_TABLE = Publication._meta.db_table


def _loaded(shape: Shape, data: dict[str, Any]) -> Publication:
    publication = load(shape, data)
    assert isinstance(publication, Publication)
    # A destination's inherited text is its source segment's: the publication's own rows.
    by_id = {segment.pk: segment for segment in publication.segments.all()}
    source = RenditionSegment._meta.get_field("source_segment")
    for rendition in publication.renditions.all():
        for segment in rendition.segments.all():
            source_id = segment.source_segment_id
            source.set_cached_value(segment, by_id.get(source_id) if source_id else None)
    return publication


def publication_detail(*, workspace_id: int, pk: int, for_page: bool = False) -> Publication | None:
    """The workspace's publication ``pk`` with everything it shows (and its author, review
    and review comments when ``for_page``), or None: one query."""
    rows = _QUERIES[for_page].rows(pk=pk, workspace=workspace_id)
    return _loaded(_PAGE if for_page else _SHOWN, rows[0]) if rows else None


def _select_shown() -> str:
    """The compiled SELECT list of a publication's value (up to its FROM clause), written
    once per process: compiling it cost more than the rest of a page of fifty."""
    sql = _QUERIES[False].sql()
    where = f" FROM {connection.ops.quote_name(_TABLE)} WHERE "
    select = sql[: sql.find(where)]
    if sql.count(where) != 1 or "%s" in select.replace("%%", ""):
        raise RuntimeError("the publication's read no longer compiles as expected")
    return select


_SELECT_SHOWN: list[str] = []  # filled on first use (compiling needs the database)


# A list by id (the API's, newest first) is ordered with the nulls where the index
# publication_ws_id holds them: ids are never null, so the order is the same, and only that
# index gives it. Ordered as plain `id DESC`, the primary key gives it too, and a large
# workspace's list was planned as that key walked back past every newer row of every
# other workspace.
_BY_ID: dict[tuple[Any, ...], OrderBy] = {
    ("-id",): OrderBy(F("id"), descending=True, nulls_last=True),
    ("-pk",): OrderBy(F("id"), descending=True, nulls_last=True),
    ("id",): OrderBy(F("id"), nulls_first=True),
    ("pk",): OrderBy(F("id"), nulls_first=True),
}


def _by_workspace_ids(query: Query) -> Query:
    order = _BY_ID.get(tuple(query.order_by))
    if order is None:
        return query
    query = query.clone()
    query.order_by = (order,)
    return query


def _listed_rows(queryset: QuerySet) -> list[dict[str, Any]] | None:
    """The values of the publications a queryset of their ids lists, in its order: its
    SQL (compiled per call, small) inside the value's SQL (compiled once). None when the
    queryset selects more than the id (the caller's annotations or joins)."""
    query = _by_workspace_ids(queryset.query)
    if (
        query.combinator
        or query.annotations
        or query.extra_select
        or query.select_related
        or query.distinct  # ordered by other columns, it selects them too
    ):
        return None
    compiler = query.get_compiler(queryset.db)
    try:
        listed, params = compiler.as_sql()
    except EmptyResultSet:  # a filter nothing can match (an empty list of ids)
        return []
    if len(compiler.select) != 1:
        return None
    if not _SELECT_SHOWN:
        _SELECT_SHOWN.append(_select_shown())
    table = connection.ops.quote_name(_TABLE)
    sql = (
        f"{_SELECT_SHOWN[0]} FROM unnest(ARRAY({listed})) WITH ORDINALITY AS listed(id, n)"
        f' JOIN {table} ON {table}."id" = listed.id ORDER BY listed.n'
    )
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(sql, params)
        return [row if isinstance(row, dict) else json.loads(row) for (row,) in cursor]


def _rows_in_order(queryset: QuerySet) -> list[dict[str, Any]]:
    """The values of the publications a queryset lists, in its order."""
    rows = _listed_rows(queryset)
    if rows is None:  # the ids first, then their values
        pks = list(queryset.values_list("pk", flat=True))
        read = _listed_rows(Publication.objects.filter(pk__in=pks).only("pk")) or []
        by_pk = {data["id"]: data for data in read}
        rows = [by_pk[pk] for pk in pks if pk in by_pk]
    return rows


class _ReadIterable(ModelIterable):
    def __iter__(self) -> Iterator[Publication]:
        for data in _rows_in_order(self.queryset):
            yield _loaded(_SHOWN, data)


class _RowsIterable(ModelIterable):
    def __iter__(self) -> Iterator[dict[str, Any]]:
        yield from _rows_in_order(self.queryset)


def with_publication_read(queryset: QuerySet) -> QuerySet:
    """Publications (filtered, ordered and sliced as the caller likes) with everything they
    show: each read whole, in the query that lists them (one query: the list's SQL inside
    the publication's value's, compiled once per process)."""
    shown = queryset.only("pk")
    shown._iterable_class = _ReadIterable
    return shown


def with_publication_rows(queryset: QuerySet) -> QuerySet:
    """As ``with_publication_read``, but each publication comes out as its JSON value (a
    dict; its relations under ``apps.common.json_rows.related_key(name)``, a destination's
    inherited text not filled in), no model instance made: for a caller that writes the
    rows out itself (the API's list)."""
    shown = queryset.only("pk")
    shown._iterable_class = _RowsIterable
    return shown


def publication_page(publications: QuerySet, pks: Sequence[int]) -> list[Publication]:
    """The publications of ``publications`` (a workspace's, filtered as the caller likes)
    with the ids ``pks``, each read whole, in the order given (ids it does not hold are
    left out): one query, for a page whose order the caller worked out."""
    read = with_publication_read(publications.filter(pk__in=list(pks)).order_by())
    by_pk = {publication.pk: publication for publication in read}
    return [by_pk[pk] for pk in pks if pk in by_pk]


def publish_due_times(renditions: Iterable[Rendition]) -> dict[int, datetime]:
    """When each rendition's pending publish job runs (a manual retry runs now, whatever
    the post's own time), by rendition id; renditions with none are left out. One query
    for any number of renditions."""
    keys = {publish_dedupe_key(rendition.pk): rendition.pk for rendition in renditions}
    if not keys:
        return {}
    jobs = Job.objects.unfinished().filter(dedupe_key__in=keys, status=Job.Status.PENDING)
    return {keys[key]: run_at for key, run_at in jobs.values_list("dedupe_key", "run_at")}
