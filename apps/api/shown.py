"""Reading publications with everything their representation shows, in few queries.

``prefetch_related`` costs one query per relation: for a publication that is its
segments, their media, its renditions, their segments, their media and their delivery
attempts. The innermost relations here are small lists that are shown whole, so they are
read inside their parent's query instead, as a JSON array per row (``ARRAY(SELECT
jsonb_build_object(...) ...)``), and turned back into model instances in the prefetch
cache, exactly where ``prefetch_related`` would put them: the serializers read
``segment.media_links.all()`` and never know. A publication, whatever its number of
destinations, is then read with three queries after its own: its segments, its renditions
(with their accounts and attempts) and their segments.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.contrib.postgres.expressions import ArraySubquery
from django.db import connection
from django.db.models import F, Model, OuterRef, Prefetch, QuerySet
from django.db.models.functions import JSONObject
from django.db.models.query import ModelIterable

from apps.accounts.models import SocialAccount
from apps.common.json_rows import JsonQuery, Nested, Shape, cache_related, json_object, load
from apps.publications.models import MediaAsset, Publication, PublicationSegment, SegmentMedia
from apps.renditions.models import (
    DeliveryAttempt,
    FirstComment,
    Rendition,
    RenditionMedia,
    RenditionSegment,
)

# A relation read as JSON: (relation name on the parent, child model, its foreign key to
# the parent, its ordering, related objects of the child to read too: {fk name: fields}).
_Spec = tuple[str, type[Model], str, tuple[str, ...], dict[str, tuple[str, ...]]]


def _annotation(name: str) -> str:
    return f"shown_{name}_json"


def _json_rows(spec: _Spec) -> ArraySubquery:
    _name, model, parent_fk, ordering, related = spec
    columns: dict[str, Any] = {f.attname: F(f.attname) for f in model._meta.concrete_fields}
    for fk, fields in related.items():
        columns.update({f"{fk}__{name}": F(f"{fk}__{name}") for name in fields})
    rows = model._default_manager.filter(**{parent_fk: OuterRef("pk")}).order_by(*ordering)
    return ArraySubquery(rows.values(row=JSONObject(**columns)))


def _instance(model: type[Model], data: dict[str, Any]) -> Model:
    """A model instance as the database would have loaded it, from its JSON row (fields
    absent from the row are deferred)."""
    fields = [f for f in model._meta.concrete_fields if f.attname in data]
    return model.from_db(
        connection.alias,
        [f.attname for f in fields],
        [f.to_python(data[f.attname]) for f in fields],
    )


def _child(spec: _Spec, data: dict[str, Any]) -> Model:
    _name, model, _fk, _ordering, related = spec
    child = _instance(model, data)
    for fk, fields in related.items():
        target = model._meta.get_field(fk).related_model
        values = {name: data[f"{fk}__{name}"] for name in fields}
        setattr(child, fk, _instance(target, values))
    return child


def with_json_relations(queryset: QuerySet, *specs: _Spec) -> QuerySet:
    """queryset whose rows come with the relations of ``specs`` already in their prefetch
    cache, read in the same query."""
    annotated = queryset.annotate(**{_annotation(spec[0]): _json_rows(spec) for spec in specs})

    class Iterable(ModelIterable):
        def __iter__(self) -> Iterator[Model]:
            for obj in super().__iter__():
                for spec in specs:
                    rows = getattr(obj, _annotation(spec[0])) or []
                    cache_related(obj, spec[0], [_child(spec, row) for row in rows])
                yield obj

    annotated._iterable_class = Iterable
    return annotated


SEGMENT_MEDIA: _Spec = (
    "media_links",
    SegmentMedia,
    "segment",
    ("position",),
    {"media": ("id", "alt_text")},
)
RENDITION_MEDIA: _Spec = ("media", RenditionMedia, "rendition_segment", ("position",), {})
ATTEMPTS: _Spec = (
    "delivery_attempts",
    DeliveryAttempt,
    "rendition",
    tuple(DeliveryAttempt._meta.ordering or ("pk",)),
    {},
)


def with_shown_relations(queryset: QuerySet) -> QuerySet:
    """Publications with what their representation shows (segments and their media,
    renditions with their account, segments, media and attempts): three queries after the
    publications', whatever their number."""
    segments = with_json_relations(PublicationSegment.objects.all(), SEGMENT_MEDIA)
    renditions = with_json_relations(
        Rendition.objects.select_related("social_account", "first_comment").order_by("pk"), ATTEMPTS
    )
    rendition_segments = with_json_relations(RenditionSegment.objects.all(), RENDITION_MEDIA)
    return queryset.prefetch_related(
        Prefetch("segments", queryset=segments),
        Prefetch("renditions", queryset=renditions),
        Prefetch("renditions__segments", queryset=rendition_segments),
    )


# --- one publication, read whole with one query compiled once ------------------------------
#
# The detail read is the API's most frequent request. The prefetches above cost little in
# PostgreSQL but much in Python: the ORM builds and compiles four querysets per request. Here
# the publication and every relation its representation shows come back as one JSON value,
# from SQL the ORM compiles once per process (apps.common.json_rows).

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


def read_shown_publication(*, workspace_id: int, pk: int) -> Publication | None:
    """The workspace's publication ``pk`` with everything its representation shows (as
    ``with_shown_relations`` leaves it), or None: one query."""
    rows = _SHOWN_QUERY.rows(pk=pk, workspace=workspace_id)
    if not rows:
        return None
    publication = load(_SHOWN, rows[0])
    assert isinstance(publication, Publication)
    # A destination's inherited text is its source segment's: the publication's own rows.
    by_id = {segment.pk: segment for segment in publication.segments.all()}
    source = RenditionSegment._meta.get_field("source_segment")
    for rendition in publication.renditions.all():
        for segment in rendition.segments.all():
            source.set_cached_value(segment, by_id.get(segment.source_segment_id))
    return publication
