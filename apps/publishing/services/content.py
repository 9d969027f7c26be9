"""Writing a publication's segments and copying them into its renditions.

Module-private to the publication services: callers hold the publication's row lock and
have already checked the inputs and that every referenced media asset and account belongs
to the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from django.db.models import Value

from apps.accounts.models import SocialAccount, Workspace
from apps.common.errors import NotFound
from apps.common.json_rows import Shape, json_object, load
from apps.publications.inputs import DestinationInput, MediaRef, SegmentInput
from apps.publications.models import MediaAsset, Publication, PublicationSegment, SegmentMedia
from apps.publishing.services import rows
from apps.renditions.models import Rendition, RenditionMedia, RenditionSegment

# (text, ((media id, alt text), ...)) per segment: what a rendition says, for comparisons.
SegmentContent = tuple[str, tuple[tuple[int, str], ...]]
Content = tuple[SegmentContent, ...]


def resolve_references(
    *,
    workspace: Workspace,
    segments: list[SegmentInput],
    destinations: list[DestinationInput],
) -> tuple[dict[int, SocialAccount], dict[int, MediaAsset]]:
    """Load the accounts and media the input names, from this workspace only.

    Another workspace's id is reported exactly like an id that does not exist: NotFound,
    with every offending field path in details.
    """
    accounts, media = read_references(
        workspace,
        account_ids={dest.account_id for dest in destinations},
        media_ids={ref.media_id for ref in media_refs(segments, destinations)},
    )
    missing = missing_references(segments, destinations, accounts, media)
    if missing is not None:
        raise missing
    return accounts, media


def media_refs(
    segments: list[SegmentInput], destinations: list[DestinationInput]
) -> list[MediaRef]:
    """Every media reference of an input: its segments' and each destination's own."""
    refs = [ref for seg in segments for ref in seg.media]
    for dest in destinations:
        refs += [ref for seg in dest.segments or [] for ref in seg.media]
    return refs


def missing_references(
    segments: list[SegmentInput],
    destinations: list[DestinationInput],
    accounts: dict[int, SocialAccount],
    media: dict[int, MediaAsset],
) -> NotFound | None:
    """NotFound naming every account or media of the input not among those loaded for the
    workspace (None when all are there)."""
    missing: dict[str, list[str]] = {}
    for ref in media_refs(segments, destinations):
        if ref.media_id not in media:
            missing[f"{ref.path}.id"] = ["No such media in this workspace."]
    for dest in destinations:
        if dest.account_id not in accounts:
            missing[f"{dest.path}.account"] = ["No such account in this workspace."]
    if not missing:
        return None
    return NotFound(
        "Some referenced accounts or media do not exist in this workspace.",
        details=missing,
    )


# What a create reads of the accounts and media it names (not the account's credentials).
_ACCOUNT = Shape(
    SocialAccount,
    tuple(
        f.attname for f in SocialAccount._meta.concrete_fields if f.name != "credentials_ciphertext"
    ),
)
_MEDIA = Shape(MediaAsset)


def read_references(
    workspace: Workspace, *, account_ids: set[int], media_ids: set[int]
) -> tuple[dict[int, SocialAccount], dict[int, MediaAsset]]:
    """The workspace's accounts and media of these ids (those of another workspace are
    left out); one query (a UNION ALL of the two as JSON rows) when media are named too,
    as every create holds accounts."""
    named = SocialAccount.objects.for_workspace(workspace).filter(pk__in=account_ids)
    if not media_ids:
        return {account.pk: account for account in named}, {}
    assets = MediaAsset.objects.for_workspace(workspace).filter(pk__in=media_ids)
    rows_read = named.values(named_kind=Value(0), row=json_object(_ACCOUNT)).union(
        assets.values(named_kind=Value(1), row=json_object(_MEDIA)), all=True
    )
    accounts: dict[int, SocialAccount] = {}
    media: dict[int, MediaAsset] = {}
    for read in rows_read:
        if read["named_kind"] == 0:
            account = load(_ACCOUNT, read["row"])
            accounts[account.pk] = account  # type: ignore[assignment]
        else:
            asset = load(_MEDIA, read["row"])
            media[asset.pk] = asset  # type: ignore[assignment]
    return accounts, media


def write_source_segments(
    publication: Publication, segments: list[SegmentInput], media: dict[int, MediaAsset]
) -> list[PublicationSegment]:
    """Make the publication's segments exactly ``segments``: rows are updated in place by
    position (so renditions keep their source links), extra rows are deleted, and media
    links are rewritten."""
    existing = {s.position: s for s in publication.segments.all()}
    result = []
    for position, seg in enumerate(segments):
        row = existing.pop(position, None) or PublicationSegment(
            publication=publication, position=position
        )
        row.text = seg.text
        row.full_clean(exclude=["publication"], validate_unique=False, validate_constraints=False)
        row.save()
        result.append(row)
    PublicationSegment.objects.filter(pk__in=[s.pk for s in existing.values()]).delete()
    SegmentMedia.objects.filter(segment__in=result).delete()
    links = [
        SegmentMedia(segment=row, media=media[ref.media_id], position=j, alt_text=ref.alt_text)
        for row, seg in zip(result, segments, strict=True)
        for j, ref in enumerate(seg.media)
    ]
    SegmentMedia.objects.bulk_create(links)
    return result


def source_content(publication: Publication) -> Content:
    return tuple(
        (
            seg.text,
            tuple(
                (link.media_id, link.alt_text or link.media.alt_text)
                for link in seg.media_links.all()
            ),
        )
        for seg in publication.segments.order_by("position").prefetch_related("media_links__media")
    )


def input_content(segments: list[SegmentInput], media: dict[int, MediaAsset]) -> Content:
    return tuple(
        (
            seg.text,
            tuple(
                (ref.media_id, ref.alt_text or media[ref.media_id].alt_text) for ref in seg.media
            ),
        )
        for seg in segments
    )


def rendition_content(rendition: Rendition) -> Content:
    return tuple(
        (seg.text, tuple((link.media_id, link.alt_text) for link in seg.media.all()))
        for seg in rendition.segments.order_by("position").prefetch_related("media")
    )


def write_rendition_content(
    rendition: Rendition, content: Content, sources: list[PublicationSegment]
) -> None:
    """Replace the rendition's segments with content; segment i links to source i."""
    rendition.segments.all().delete()
    rows = RenditionSegment.objects.bulk_create(_segment_rows(rendition, content, sources))
    RenditionMedia.objects.bulk_create(_media_rows(rows, list(content)))


def _segment_rows(
    rendition: Rendition, content: Content, sources: list[PublicationSegment]
) -> list[RenditionSegment]:
    """Unsaved segment rows of content; segment i links to source i. A rendition that
    follows the source stores no text of its own (``RenditionSegment.text`` reads the
    source's)."""
    inherits = not rendition.overrides_content
    return [
        RenditionSegment(
            rendition=rendition,
            source_segment=sources[i] if i < len(sources) else None,
            position=i,
            own_text=None if inherits and i < len(sources) else text,
        )
        for i, (text, _media) in enumerate(content)
    ]


def freeze_inherited_text(renditions: list[Rendition]) -> None:
    """Give renditions that follow the source but can no longer change (they went out,
    or are in flight) their text as their own, before the source changes under them:
    what a platform holds stays what the rendition says it sent."""
    for rendition in renditions:
        if rendition.overrides_content or rendition.is_content_editable:
            continue
        for segment in rendition.segments.all():
            if segment.is_inherited:
                segment.own_text = segment.text
                segment.save(update_fields=["own_text", "updated_at"])


def _media_rows(
    segments: list[RenditionSegment], contents: list[SegmentContent]
) -> list[RenditionMedia]:
    """Unsaved media links of saved segments, each paired with its (text, media) content."""
    return [
        RenditionMedia(rendition_segment=row, media_id=media_id, position=j, alt_text=alt)
        for row, (_text, items) in zip(segments, contents, strict=True)
        for j, (media_id, alt) in enumerate(items)
    ]


def create_source_segments(
    publication: Publication, segments: list[SegmentInput], media: dict[int, MediaAsset]
) -> list[PublicationSegment]:
    """The segments and media links of a publication that has none yet, in one insert
    each (write_source_segments is for replacing existing ones)."""
    rows = []
    for position, seg in enumerate(segments):
        row = PublicationSegment(publication=publication, position=position, text=seg.text)
        row.full_clean(exclude=["publication"], validate_unique=False, validate_constraints=False)
        rows.append(row)
    rows = PublicationSegment.objects.bulk_create(rows)
    SegmentMedia.objects.bulk_create(
        [
            SegmentMedia(segment=row, media=media[ref.media_id], position=j, alt_text=ref.alt_text)
            for row, seg in zip(rows, segments, strict=True)
            for j, ref in enumerate(seg.media)
        ]
    )
    return rows


def new_rendition(
    *,
    publication: Publication,
    account: SocialAccount,
    destination: DestinationInput,
    scheduled_at: datetime | None,
) -> Rendition:
    """An unsaved draft rendition for account, checked (Django's ValidationError by
    field)."""
    rendition = Rendition(
        publication=publication,
        # The publication's workspace object, so delivery reads no row it already has.
        workspace=publication.workspace,
        social_account=account,
        platform=account.platform,
        settings=destination.settings,
        overrides_content=destination.segments is not None,
        scheduled_at=scheduled_at,
        status=Rendition.Status.DRAFT,
    )
    rendition.full_clean(
        exclude=["publication", "workspace", "social_account"],
        validate_unique=False,
        validate_constraints=False,
    )
    return rendition


def create_rendition(
    *,
    publication: Publication,
    account: SocialAccount,
    destination: DestinationInput,
    content: Content,
    sources: list[PublicationSegment],
    scheduled_at: datetime | None,
) -> Rendition:
    """A new draft rendition for account, with its content copied in."""
    rendition = new_rendition(
        publication=publication,
        account=account,
        destination=destination,
        scheduled_at=scheduled_at,
    )
    rendition.save()
    write_rendition_content(rendition, content, sources)
    return rendition


class NewPublication(NamedTuple):
    """A new publication built in memory and checked: its source segments, its renditions
    (unsaved, from ``new_rendition``) and each rendition's content, in order."""

    publication: Publication
    segments: list[SegmentInput]
    renditions: list[Rendition]
    contents: list[Content]


@dataclass
class NewRows:
    """Every row of new publications, built in memory with their ids (see ``rows``):
    ``insert()`` writes them all in one statement."""

    publications: list[Publication] = field(default_factory=list)
    segments: list[PublicationSegment] = field(default_factory=list)
    links: list[SegmentMedia] = field(default_factory=list)
    renditions: list[Rendition] = field(default_factory=list)
    rendition_segments: list[RenditionSegment] = field(default_factory=list)
    rendition_media: list[RenditionMedia] = field(default_factory=list)

    def insert(self) -> None:
        rows.insert_rows(
            self.publications,
            self.segments,
            self.links,
            self.renditions,
            self.rendition_segments,
            self.rendition_media,
        )


def new_publications_rows(
    new: list[NewPublication], media: dict[int, MediaAsset], *, cache: bool = False
) -> NewRows:
    """The unsaved rows of new publications (checked like their ``full_clean``), with the
    ids of every row of every table allocated in one query, whatever their number.

    cache: each object's relations are cached as written, so a caller that shows the
    publications at once reads nothing back (a later ``.all()`` would not see changes).
    """
    built = NewRows()
    sources: list[list[PublicationSegment]] = []
    link_rows: list[list[list[SegmentMedia]]] = []
    for item in new:
        own = []
        for position, seg in enumerate(item.segments):
            row = PublicationSegment(publication=item.publication, position=position, text=seg.text)
            row.full_clean(
                exclude=["publication"], validate_unique=False, validate_constraints=False
            )
            own.append(row)
        links = [
            [
                SegmentMedia(
                    segment=row, media=media[ref.media_id], position=j, alt_text=ref.alt_text
                )
                for j, ref in enumerate(seg.media)
            ]
            for row, seg in zip(own, item.segments, strict=True)
        ]
        sources.append(own)
        link_rows.append(links)
        built.publications.append(item.publication)
        built.segments += own
        built.links += [link for segment_links in links for link in segment_links]
        built.renditions += item.renditions
    contents = [segment for item in new for content in item.contents for segment in content]
    ids = rows.allocate_ids(
        [
            (Publication, len(built.publications)),
            (PublicationSegment, len(built.segments)),
            (SegmentMedia, len(built.links)),
            (Rendition, len(built.renditions)),
            (RenditionSegment, len(contents)),
            (RenditionMedia, sum(len(items) for _text, items in contents)),
        ]
    )
    rows.assign_ids(built.publications, ids[0])
    rows.assign_ids(built.segments, ids[1])
    rows.assign_ids(built.links, ids[2])
    rows.assign_ids(built.renditions, ids[3])
    # Assigned before the children are built: each child reads its parent's id.
    for item, own in zip(new, sources, strict=True):
        for rendition, content in zip(item.renditions, item.contents, strict=True):
            segments = _segment_rows(rendition, content, own)
            built.rendition_segments += segments
            if cache:
                rows.cache_related(rendition, "segments", segments)
                rows.cache_related(rendition, "delivery_attempts", [])
    rows.assign_ids(built.rendition_segments, ids[4])
    built.rendition_media = _media_rows(built.rendition_segments, contents)
    rows.assign_ids(built.rendition_media, ids[5])
    for media_row in built.rendition_media:
        media_row.media = media[media_row.media_id]
    if cache:
        _cache_new_rows(built, new, sources, link_rows)
    return built


def _cache_new_rows(
    built: NewRows,
    new: list[NewPublication],
    sources: list[list[PublicationSegment]],
    link_rows: list[list[list[SegmentMedia]]],
) -> None:
    by_segment: dict[int, list[RenditionMedia]] = {s.pk: [] for s in built.rendition_segments}
    for media_row in built.rendition_media:
        by_segment[media_row.rendition_segment_id].append(media_row)
    for segment in built.rendition_segments:
        rows.cache_related(segment, "media", by_segment[segment.pk])
    for item, own, links in zip(new, sources, link_rows, strict=True):
        for row, segment_links in zip(own, links, strict=True):
            rows.cache_related(row, "media_links", segment_links)
        rows.cache_related(item.publication, "segments", own)
        rows.cache_related(item.publication, "renditions", item.renditions)
