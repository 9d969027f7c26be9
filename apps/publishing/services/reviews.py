"""The approval workflow of a publication: submit for review, approve (which schedules it),
request changes, put on hold (which takes it off the schedule until it is approved), comment.

A publication in review stays a draft; its review row holds the state. Approving goes
through ``publication_update`` like any scheduling, so the catalog, quota and daily-cap
checks hold, under the publication's row lock and revision. Each step records a comment
(the note, possibly empty), emits PUBLICATION_REVIEW_CHANGED (webhooks, the audit log)
and emails the people who act next once the transaction commits.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.approvals.models import MAX_COMMENT_LENGTH, PortalLink, Review, ReviewComment
from apps.approvals.records import review_record
from apps.approvals.rule import is_approver
from apps.common.errors import Conflict, PermissionDenied, ValidationFailed
from apps.publications.models import Publication
from apps.publishing.services.approval import approval_hash, approval_parts
from apps.publishing.services.publications import _lock_for_edit, publication_update

P = Publication.Status
S = Review.State


def _note(text: str | None, *, required: bool = False) -> str:
    note = (text or "").strip()
    if required and not note:
        raise ValidationFailed(
            "Say what should change.", details={"note": ["Say what should change."]}
        )
    if len(note) > MAX_COMMENT_LENGTH:
        raise ValidationFailed(
            f"At most {MAX_COMMENT_LENGTH} characters.",
            details={"note": [f"At most {MAX_COMMENT_LENGTH} characters."]},
        )
    return note


def _review(publication: Publication) -> Review | None:
    return Review.objects.filter(publication=publication).select_for_update().first()


def _record(
    publication: Publication,
    review: Review,
    actor: User | None,
    kind: str,
    note: str,
    via: PortalLink | None = None,
) -> None:
    review_record(publication, review, actor, kind, note, via=via)


def _require_approver(publication: Publication, actor: User | None) -> None:
    # None: an operator's token, made without a person (it is not gated either).
    if actor is not None and not is_approver(actor, publication.workspace):
        raise PermissionDenied(
            "Only a workspace admin approves posts or asks for changes.",
            details={"publication_id": publication.pk},
        )


@transaction.atomic
def review_submit(
    *, publication: Publication, expected_revision: int, actor: User | None, note: str = ""
) -> Review:
    """Ask for approval of a draft (again, after changes were requested)."""
    text = _note(note)
    publication = _lock_for_edit(publication, expected_revision)
    if publication.status != P.DRAFT:
        raise Conflict(
            "Only a draft is submitted for review; this post is already "
            f"{publication.get_status_display().lower()}.",
            code="NOT_A_DRAFT",
            details={"status": publication.status},
        )
    if not publication.renditions.exists():
        raise ValidationFailed(
            "Choose at least one destination before asking for approval.",
            details={"destinations": ["Choose at least one destination."]},
        )
    review = _review(publication)
    if review is not None and review.state == S.IN_REVIEW:
        raise Conflict("This post is already in review.", code="ALREADY_IN_REVIEW")
    now = timezone.now()
    review = review or Review(publication=publication, workspace_id=publication.workspace_id)
    review.state = S.IN_REVIEW
    review.requested_by = actor
    review.requested_at = now
    review.decided_by = None
    review.decided_via = None
    review.decided_at = None
    review.approved_revision = None
    review.approved_hash = ""
    review.save()
    _record(publication, review, actor, ReviewComment.Kind.SUBMITTED, text)
    return review


def _in_review(publication: Publication) -> Review:
    """The post's review, locked, waiting for a decision: in review, or on hold."""
    review = _review(publication)
    if review is None or review.state not in (S.IN_REVIEW, S.ON_HOLD):
        raise Conflict(
            "This post is not waiting for a review.",
            code="NOT_IN_REVIEW",
            details={"state": review.state if review else None},
        )
    return review


@transaction.atomic
def review_approve(
    *,
    publication: Publication,
    expected_revision: int,
    actor: User | None,
    note: str = "",
    scheduled_at: str | datetime | None = None,
    local_time: str | datetime | None = None,
    timezone_name: str | None = None,
    via: PortalLink | None = None,
) -> Review:
    """Approve a post in review and schedule it: at its own time, or at the time given
    (the approver may move a time that has passed). Refused as the scheduling would be.
    The review records the revision and content hash it approved; from then on, the
    author may not change what was approved while the post is scheduled
    (``apps.publishing.services.approval``). ``via``: a client's decision through that
    link (``actor`` is then the link's maker, whose powers it uses); any later change of
    what the client approved sends the post back to review."""
    text = _note(note)
    _require_approver(publication, actor)
    publication = _lock_for_edit(publication, expected_revision)
    review = _in_review(publication)
    changes: dict = {"status": P.SCHEDULED}
    if scheduled_at is not None:
        changes["scheduled_at"] = scheduled_at
    if local_time is not None:
        changes["local_time"] = local_time
    if timezone_name is not None:
        changes["timezone"] = timezone_name
    publication = publication_update(
        publication=publication, expected_revision=publication.revision, actor=actor, **changes
    )
    review.state = S.APPROVED
    review.decided_by = None if via is not None else actor
    review.decided_via = via
    review.decided_at = timezone.now()
    # What stands approved: the post as scheduled by this approval (see Review).
    review.approved_revision = publication.revision
    review.approved_hash = approval_hash(approval_parts(publication))
    review.save()
    _record(publication, review, actor, ReviewComment.Kind.APPROVED, text, via)
    return review


@transaction.atomic
def review_request_changes(
    *,
    publication: Publication,
    expected_revision: int,
    actor: User | None,
    note: str,
    via: PortalLink | None = None,
) -> Review:
    """Send a post in review back to its author, saying what should change (``via``: as
    in ``review_approve``)."""
    text = _note(note, required=True)
    _require_approver(publication, actor)
    publication = _lock_for_edit(publication, expected_revision)
    review = _in_review(publication)
    review.state = S.CHANGES_REQUESTED
    review.decided_by = None if via is not None else actor
    review.decided_via = via
    review.decided_at = timezone.now()
    review.save()
    _record(publication, review, actor, ReviewComment.Kind.CHANGES_REQUESTED, text, via)
    return review


@transaction.atomic
def review_hold(
    *,
    publication: Publication,
    expected_revision: int,
    actor: User | None,
    note: str = "",
    via: PortalLink | None = None,
) -> Review:
    """Put a post on hold: one in review, or approved and not yet gone out. A scheduled
    post comes off the schedule (back to draft) and its approval is withdrawn; it waits
    until someone approves it (or asks for changes). ``via``: as in ``review_approve``.
    Errors: Conflict NOT_HOLDABLE (no review in those states), PUBLICATION_STARTED (a
    destination already went out or is in flight), REVISION_CONFLICT."""
    text = _note(note)
    _require_approver(publication, actor)
    publication = _lock_for_edit(publication, expected_revision)
    review = _review(publication)
    if review is None or review.state not in (S.IN_REVIEW, S.APPROVED):
        raise Conflict(
            "Only a post in review, or approved and not yet out, can be put on hold.",
            code="NOT_HOLDABLE",
            details={"state": review.state if review else None},
        )
    if publication.status != P.DRAFT:
        publication = publication_update(
            publication=publication,
            expected_revision=publication.revision,
            actor=actor,
            status=P.DRAFT,
        )
    review.state = S.ON_HOLD
    review.decided_by = None if via is not None else actor
    review.decided_via = via
    review.decided_at = timezone.now()
    review.approved_revision = None
    review.approved_hash = ""
    review.save()
    _record(publication, review, actor, ReviewComment.Kind.ON_HOLD, text, via)
    return review


def review_comment(*, publication: Publication, actor: User | None, body: str) -> ReviewComment:
    """A comment on a post, at any step (no state changes, nobody is emailed)."""
    text = _note(body)
    if not text:
        raise ValidationFailed("Write a comment.", details={"body": ["Write a comment."]})
    return ReviewComment.objects.create(
        publication=publication,
        workspace_id=publication.workspace_id,
        author=actor,
        kind=ReviewComment.Kind.COMMENT,
        body=text,
    )
