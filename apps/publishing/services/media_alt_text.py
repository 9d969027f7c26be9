"""A media file's default alt text, held to the approval rule.

An attachment with no alt text of its own shows (and, once its destinations are written
again, sends) the file's default alt text. So changing the default changes every post that
uses the file that way, and for someone whose posts need approval it is the same change to
an approved part ("media") as editing those posts: refused with APPROVAL_REQUIRED while any
of them is past draft with something left to send (published and cancelled posts send
nothing more), nothing written (``apps.publishing.services.approval``). Every path
that edits a file's alt text (the web media library, the API's ``PATCH /media/{id}``) goes
through ``media_alt_text_set``.
"""

from __future__ import annotations

from django.db import transaction

from apps.accounts.models import User
from apps.approvals.rule import ApprovalRequired, needs_approval
from apps.common import events
from apps.publications.models import MediaAsset, Publication
from apps.publications.services.media_library import (
    media_alt_text_check,
    media_asset_set_alt_text,
)
from apps.publishing.services.approval import client_approvals_withdraw
from apps.renditions.models import Rendition, RenditionMedia

# Destinations whose media may still be sent: not in flight, not out, not cancelled (a
# failed one may be retried).
_UNSENT = (Rendition.Status.DRAFT, Rendition.Status.SCHEDULED, Rendition.Status.FAILED)

# Posts that can send nothing more: a change to them changes no post that goes out.
_SETTLED = (Publication.Status.DRAFT, Publication.Status.PUBLISHED, Publication.Status.CANCELLED)


def posts_showing_default_alt_text(asset: MediaAsset) -> list[int]:
    """Ids of the posts past draft with something left to send (not published in full,
    not cancelled) that attach the file with no alt text of their own."""
    return list(
        Publication.objects.filter(workspace_id=asset.workspace_id)
        .exclude(status__in=_SETTLED)
        .filter(segments__media_links__media=asset, segments__media_links__alt_text="")
        .distinct()
        .order_by("pk")
        .values_list("pk", flat=True)
    )


@transaction.atomic
def media_alt_text_set(*, asset: MediaAsset, alt_text: str, actor: User | None) -> MediaAsset:
    """Set the file's default alt text (``media_asset_set_alt_text``). Refused
    (ApprovalRequired APPROVAL_REQUIRED, ``details.publications`` naming the posts) when the
    actor's posts need approval and a post past draft shows this default; an admin's
    change, or one to no such post, goes through. A change that touches posts past draft
    is audited on each of them, and sends those a client approved back to review."""
    media_alt_text_check(alt_text)
    locked = MediaAsset.objects.select_for_update().get(pk=asset.pk)
    previous = locked.alt_text
    if alt_text == previous:
        return media_asset_set_alt_text(asset=locked, alt_text=alt_text)
    shown_by = posts_showing_default_alt_text(locked)
    if shown_by and needs_approval(locked.workspace, actor):
        count = len(shown_by)
        raise ApprovalRequired(
            "This workspace needs an admin's approval for your posts, and "
            f"{count} post{'s' if count != 1 else ''} past draft show{'' if count != 1 else 's'} "
            "this file with its default alt text: changing it would change what was "
            "approved, so it was not saved. Ask an admin to change it, or move those posts "
            "back to draft and give the image its own alt text there.",
            details={"media_id": locked.pk, "changed": ("media",), "publications": shown_by},
        )
    result = media_asset_set_alt_text(asset=locked, alt_text=alt_text)
    _rewrite_unsent_destinations(locked, previous=previous, alt_text=alt_text)
    if shown_by:
        # What a client approved changed with it: those posts go back to review.
        client_approvals_withdraw(
            publication_ids=shown_by, actor=actor, what="A media file's default alt text"
        )
        events.emit(
            events.MEDIA_ALT_TEXT_CHANGED,
            asset=result,
            previous=previous,
            publications=shown_by,
            actor=actor,
        )
    return result


def _rewrite_unsent_destinations(asset: MediaAsset, *, previous: str, alt_text: str) -> int:
    """Destinations are written with the alt text they will send: those that carry the old
    default and have not sent the segment yet carry the new one, so what goes out is what
    the post's page shows. Returns how many attachments changed."""
    return (
        RenditionMedia.objects.filter(
            media_id=asset.pk,
            alt_text=previous,
            rendition_segment__provider_post_id="",
            rendition_segment__rendition__status__in=_UNSENT,
        )
        .exclude(alt_text=alt_text)
        .update(alt_text=alt_text)
    )
