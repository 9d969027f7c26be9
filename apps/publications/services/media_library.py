"""The media library: finding a workspace's uploads, their default alt text, where they
are used, and deleting the ones nothing uses."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q, QuerySet

from apps.common.errors import Conflict, ValidationFailed
from apps.publications import constants
from apps.publications.models import MediaAsset, Publication


def media_search(queryset: QuerySet, *, q: str = "", kind: str = "") -> QuerySet:
    """Uploads newest first, matching q in the file name or alt text, of one kind."""
    if q:
        queryset = queryset.filter(Q(original_name__icontains=q) | Q(alt_text__icontains=q))
    if kind:
        queryset = queryset.filter(kind=kind)
    return queryset.order_by("-created_at", "-pk")


def media_usage(asset: MediaAsset) -> QuerySet:
    """The publications that link the asset, in their source or a destination's own text."""
    return (
        Publication.objects.for_workspace(asset.workspace_id)
        .filter(Q(segments__media_links__media=asset) | Q(renditions__segments__media__media=asset))
        .distinct()
        .order_by("-created_at", "-pk")
    )


def media_in_use(asset: MediaAsset) -> bool:
    return asset.segment_links.exists() or asset.rendition_links.exists()


def media_alt_text_check(alt_text: str) -> None:
    """Refuse (ValidationFailed) an alt text no file may have."""
    if not isinstance(alt_text, str) or len(alt_text) > constants.MAX_ALT_TEXT_LENGTH:
        raise ValidationFailed(
            "The alt text is too long.",
            details={"alt_text": [f"At most {constants.MAX_ALT_TEXT_LENGTH} characters."]},
        )


def media_asset_set_alt_text(*, asset: MediaAsset, alt_text: str) -> MediaAsset:
    """Set the asset's default alt text: offered when it is attached again, and used by
    every attachment that has no alt text of its own. People's edits go through
    ``apps.publishing.services.media_alt_text.media_alt_text_set``, which holds them to
    the approval rule."""
    media_alt_text_check(alt_text)
    asset.alt_text = alt_text
    asset.save(update_fields=["alt_text", "updated_at"])
    return asset


@transaction.atomic
def media_asset_delete(*, asset: MediaAsset) -> None:
    """Delete an unused upload and its stored file; one a post uses is MEDIA_IN_USE."""
    locked = MediaAsset.objects.select_for_update().get(pk=asset.pk)
    if media_in_use(locked):
        count = media_usage(locked).count()
        raise Conflict(
            f"This file is used by {count} post{'s' if count != 1 else ''}; remove it from "
            "them before deleting it.",
            code="MEDIA_IN_USE",
            details={"publications": list(media_usage(locked).values_list("pk", flat=True))},
        )
    storage, name = locked.file.storage, locked.file.name
    locked.delete()
    if name:
        # The bytes go only once the row is surely gone.
        transaction.on_commit(lambda: storage.delete(name))
