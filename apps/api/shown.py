"""Reading publications with everything their representation shows, in one query.

``prefetch_related`` costs one query per relation, and much Python per request: for a
publication that is its segments, their media, its renditions (with their accounts,
attempts and first comments), their segments and their media. Here a publication and every
relation its representation shows come back as one JSON value (apps.common.json_rows),
turned back into model instances with their relations in the caches ``select_related`` and
``prefetch_related`` would fill: the serializers read ``segment.media_links.all()`` and never
know. The detail read, the API's most frequent request, runs SQL compiled once per process;
lists read each publication's value in the query that lists them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet
from django.db.models.query import ModelIterable

from apps.accounts.models import SocialAccount
from apps.common.json_rows import JsonQuery, Nested, Shape, json_object, load
from apps.publications.models import MediaAsset, Publication, PublicationSegment, SegmentMedia
from apps.renditions.models import (
    DeliveryAttempt,
    FirstComment,
    Rendition,
    RenditionMedia,
    RenditionSegment,
)

_SHOWN = Shape(
    Publication,
    nested=(
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
                            SegmentMedia, joined={"media": Shape(MediaAsset, ("id", "alt_text"))}
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
                joined={"social_account": Shape(SocialAccount, ("id", "handle"))},
                nested=(
                    Nested(
                        "delivery_attempts",
                        "rendition",
                        Shape(DeliveryAttempt),
                        tuple(DeliveryAttempt._meta.ordering or ("pk",)),
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
    ),
)
_SHOWN_QUERY = JsonQuery(
    lambda pk, workspace: Publication.objects.filter(pk=pk, workspace_id=workspace).values(
        row=json_object(_SHOWN)
    ),
    pk=-7_000_000_001,
    workspace=-7_000_000_002,
)
# The annotation carrying each listed publication's value.
_ROW = "shown_row"


def _shown(data: dict[str, Any]) -> Publication:
    publication = load(_SHOWN, data)
    assert isinstance(publication, Publication)
    # A destination's inherited text is its source segment's: the publication's own rows.
    by_id = {segment.pk: segment for segment in publication.segments.all()}
    source = RenditionSegment._meta.get_field("source_segment")
    for rendition in publication.renditions.all():
        for segment in rendition.segments.all():
            source.set_cached_value(segment, by_id.get(segment.source_segment_id))
    return publication


def read_shown_publication(*, workspace_id: int, pk: int) -> Publication | None:
    """The workspace's publication ``pk`` with everything its representation shows, or
    None: one query."""
    rows = _SHOWN_QUERY.rows(pk=pk, workspace=workspace_id)
    return _shown(rows[0]) if rows else None


class _ShownIterable(ModelIterable):
    def __iter__(self) -> Iterator[Publication]:
        for listed in super().__iter__():
            yield _shown(getattr(listed, _ROW))


def with_shown_relations(queryset: QuerySet) -> QuerySet:
    """Publications (filtered, ordered and sliced as the caller likes) with everything their
    representation shows: each read whole, in the query that lists them."""
    shown = queryset.only("pk").annotate(**{_ROW: json_object(_SHOWN)})
    shown._iterable_class = _ShownIterable
    return shown
