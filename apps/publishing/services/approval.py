"""Approval bound to what was approved.

In a workspace whose approval rule is on, a post by someone who needs approval reaches the
schedule only through an admin's approval (``apps.approvals.rule``). Once it is there (or
anywhere past draft), that person may not change what was approved: its content, media,
destinations, first comment or times. The change is refused with APPROVAL_REQUIRED and
nothing of it is written; they may take the post back to draft (which takes it off the
schedule) and submit it again, or ask an admin, whose edits are not gated.

The rule is enforced where publications are edited (``publication_update`` and
``publication_reschedule``), by comparing what the post says before and after the edit,
inside its transaction: every client (API, web composer, calendar, queue, MCP) goes
through those services, and an edit that changes nothing (a form sent back as it was, a
status-only change) passes. The same digest is what a review records when it approves.

A client's approval, given through a link (``apps.approvals.portal``), binds everyone:
the client is not there to see a later change. Once anything it covers changes, by
whoever (an admin too), the post goes back to review and off the schedule, and the
client sees it again through the link (``client_approval_check``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.utils import timezone

from apps.accounts.models import User
from apps.approvals.models import Review, ReviewComment
from apps.approvals.records import review_record
from apps.approvals.rule import ApprovalRequired, needs_approval
from apps.publications.models import Publication, PublicationSegment, SegmentMedia
from apps.publishing.services.checks import save_publication
from apps.publishing.services.edits import unschedule
from apps.publishing.services.status import publication_refresh_status
from apps.renditions.models import Rendition, RenditionMedia, RenditionSegment

P = Publication.Status

# What an approval covers, in the order a refusal names them.
PARTS = ("content", "media", "destinations", "first_comment", "time")

Parts = dict[str, str]


def _digest(value: Any) -> str:
    return hashlib.sha256(
        json.dumps(value, sort_keys=True, default=str, separators=(",", ":")).encode()
    ).hexdigest()


def approval_parts(publication: Publication) -> Parts:
    """A digest of each part of the publication an approval covers, read from the
    database (five queries) and from the instance's own fields (first comment, time).
    Cancelled destinations no longer count; the rest are keyed by account, so each part
    changes only when what it names does (a new destination is not a new text)."""
    live = Rendition.objects.filter(publication_id=publication.pk).exclude(
        status=Rendition.Status.CANCELLED
    )
    texts = list(
        PublicationSegment.objects.filter(publication_id=publication.pk)
        .order_by("position")
        .values_list("position", "text")
    )
    media = list(
        SegmentMedia.objects.filter(segment__publication_id=publication.pk)
        .order_by("segment__position", "position")
        .values_list("segment__position", "position", "media_id", "alt_text")
    )
    destinations = list(
        live.order_by("social_account_id").values_list(
            "social_account_id", "settings", "scheduled_at"
        )
    )
    # A destination that follows the source says what the source says: only the texts
    # and media of those with their own are read, so adding one is a destination change.
    own_texts = list(
        RenditionSegment.objects.filter(rendition__in=live, rendition__overrides_content=True)
        .order_by("rendition__social_account_id", "position")
        .values_list("rendition__social_account_id", "position", "own_text")
    )
    own_media = list(
        RenditionMedia.objects.filter(
            rendition_segment__rendition__in=live,
            rendition_segment__rendition__overrides_content=True,
        )
        .order_by(
            "rendition_segment__rendition__social_account_id",
            "rendition_segment__position",
            "position",
        )
        .values_list(
            "rendition_segment__rendition__social_account_id",
            "rendition_segment__position",
            "position",
            "media_id",
            "alt_text",
        )
    )
    return {
        "content": _digest([texts, own_texts]),
        "media": _digest([media, own_media]),
        "destinations": _digest([(account, settings) for account, settings, _ in destinations]),
        "first_comment": _digest(publication.first_comment or ""),
        "time": _digest(
            [
                publication.scheduled_at,
                [(account, at) for account, _, at in destinations if at is not None],
            ]
        ),
    }


def approval_hash(parts: Parts) -> str:
    """One digest of every part: what a review records as approved."""
    return _digest([parts[name] for name in PARTS])


def approval_watch(publication: Publication, actor: User | None) -> Parts | None:
    """Before an edit of the (locked) publication: what to compare once the edit is
    applied, or None when the edit is free (a draft, or an actor whose posts need no
    approval: an admin, work without a person, a workspace without the rule)."""
    if publication.status == P.DRAFT or not needs_approval(publication.workspace, actor):
        return None
    return approval_parts(publication)


def check_approval_kept(publication: Publication, before: Parts | None) -> None:
    """After the edit, inside its transaction: refuse it (APPROVAL_REQUIRED, so the
    transaction rolls back) when it changed an approved part of a post that is still
    not a draft. Taking the post back to draft is always allowed."""
    if before is None or publication.status == P.DRAFT:
        return
    after = approval_parts(publication)
    changed = [name for name in PARTS if before[name] != after[name]]
    if not changed:
        return
    raise ApprovalRequired(
        "This workspace needs an admin's approval for your posts, and this one is "
        f"{publication.get_status_display().lower()}: your change to its "
        f"{', '.join(name.replace('_', ' ') for name in changed)} was not saved. Move it "
        "back to draft (which takes it off the schedule), change it and submit it for "
        "review, or ask an admin to make the change.",
        # A tuple (a JSON list on the wire): it names parts, not form fields with messages.
        details={"publication_id": publication.pk, "changed": tuple(changed)},
    )


def _client_review(publication_id: int) -> Review | None:
    """The post's review, locked, when a client approved it through a link."""
    return (
        Review.objects.select_for_update()
        .select_related("decided_via")
        .filter(publication_id=publication_id, state=Review.State.APPROVED)
        .exclude(decided_via=None)
        .first()
    )


def _send_back(
    publication: Publication, review: Review, actor: User | None, what: str
) -> Publication:
    """Take the (locked) post off the schedule and put it back in review, saying why."""
    link = review.decided_via
    assert link is not None  # a client's approval (_client_review)
    scheduled = Rendition.objects.select_for_update().filter(
        publication_id=publication.pk, status=Rendition.Status.SCHEDULED
    )
    for rendition in scheduled:
        unschedule(rendition, remove=False)
    review.state = Review.State.IN_REVIEW
    review.requested_by = actor
    review.requested_at = timezone.now()
    review.decided_by = review.decided_via = review.decided_at = None
    review.approved_revision = None
    review.approved_hash = ""
    review.save()
    note = (
        f"{what} changed after {link.label} approved it through a client link: back in "
        "review, and off the schedule until it is approved again."
    )
    review_record(publication, review, actor, ReviewComment.Kind.SUBMITTED, note)
    return publication_refresh_status(publication)


def client_approval_check(publication: Publication, actor: User | None) -> Publication:
    """After an edit of the (locked) publication, inside its transaction: when a client
    approved it through a link and the edit changed what they approved, take it off the
    schedule and put it back in review (the link shows it again). Returns the
    publication, its status refreshed."""
    review = _client_review(publication.pk)
    if review is None or approval_hash(approval_parts(publication)) == review.approved_hash:
        return publication
    return _send_back(publication, review, actor, "It")


def client_approvals_withdraw(*, publication_ids: list[int], actor: User | None, what: str) -> None:
    """A change made outside the posts that changes what they show (``what``: a media
    file's default alt text): each of them a client approved goes back to review, as
    after an edit (its revision moves on). Inside the change's transaction."""
    locked = Publication.objects.select_for_update().filter(pk__in=publication_ids).order_by("pk")
    for publication in locked:
        review = _client_review(publication.pk)
        if review is None:
            continue
        publication.revision += 1
        save_publication(publication)
        _send_back(publication, review, actor, what)
