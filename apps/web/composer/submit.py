"""Handing a composer draft to the publication services: save a draft, schedule, or
publish now. The services decide everything; this only chooses the arguments."""

from __future__ import annotations

from django.utils import timezone

from apps.accounts.models import User, Workspace
from apps.common.errors import ValidationFailed
from apps.planning.services import publication_queue, queued_publication_create
from apps.publications.models import Publication
from apps.publishing.services import publication_create, publication_update
from apps.publishing.services.reviews import review_submit
from apps.web.composer.draft import Draft

SAVE_DRAFT, SCHEDULE, PUBLISH_NOW = "save_draft", "schedule", "publish_now"
ADD_TO_QUEUE = "add_to_queue"
SUBMIT_REVIEW = "submit_review"  # save the draft and ask an admin to approve it
SUBMIT_OPS = (SAVE_DRAFT, SCHEDULE, PUBLISH_NOW, ADD_TO_QUEUE, SUBMIT_REVIEW)


def _schedule_args(draft: Draft, op: str) -> dict:
    """The time arguments for op: a wall-clock time in the draft's zone, now, or none."""
    error = draft.time_error()
    if error:
        raise ValidationFailed(error, details={"local_time": [error]})
    if op == PUBLISH_NOW:
        return {"scheduled_at": timezone.now(), "timezone": draft.zone}
    if op == SCHEDULE and not draft.has_time:
        message = "Pick a date and time, or use Publish now."
        raise ValidationFailed(message, code="SCHEDULE_REQUIRED", details={"local_time": [message]})
    if draft.has_time:
        return {"local_time": draft.local_time(), "timezone": draft.zone}
    return {}


def draft_submit(
    *,
    draft: Draft,
    op: str,
    workspace: Workspace,
    user: User,
    publication: Publication | None = None,
) -> Publication:
    """Create (or, with publication, update at draft.revision) the publication: a draft
    for SAVE_DRAFT, scheduled at the draft's time for SCHEDULE, due now for PUBLISH_NOW,
    at the next free queue slot for ADD_TO_QUEUE.
    Raises the services' DomainErrors unchanged."""
    if op == SUBMIT_REVIEW:
        saved = draft_submit(
            draft=draft, op=SAVE_DRAFT, workspace=workspace, user=user, publication=publication
        )
        review_submit(publication=saved, expected_revision=saved.revision, actor=user)
        return saved
    if op == ADD_TO_QUEUE:  # the next free slot; the date and time fields are not read
        segments, destinations = draft.segments_payload(), draft.destinations_payload()
        if publication is None:
            return queued_publication_create(
                workspace=workspace,
                author=user,
                segments=segments,
                destinations=destinations,
                first_comment=draft.first_comment,
            )
        revision = draft.revision if draft.revision is not None else -1
        return publication_queue(
            publication=publication,
            expected_revision=revision,
            actor=user,
            segments=segments,
            destinations=destinations,
            first_comment=draft.first_comment,
        )
    status = "draft" if op == SAVE_DRAFT else "scheduled"
    times = _schedule_args(draft, op)
    if publication is None:
        return publication_create(
            workspace=workspace,
            author=user,
            segments=draft.segments_payload(),
            destinations=draft.destinations_payload(),
            first_comment=draft.first_comment,
            status=status,
            **times,
        )
    if not times and op == SAVE_DRAFT:
        times = {"scheduled_at": None}  # the person cleared the date and time
    return publication_update(
        publication=publication,
        expected_revision=draft.revision if draft.revision is not None else -1,
        actor=user,
        segments=draft.segments_payload(),
        destinations=draft.destinations_payload(),
        first_comment=draft.first_comment,
        status=status,
        **times,
    )
