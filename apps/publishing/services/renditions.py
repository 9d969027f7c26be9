"""What people (web, API, admin, CLI) do to renditions: retry failed destinations, cancel
the ones that have not gone out, and settle ambiguous outcomes."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.common import events
from apps.common.errors import Conflict, ValidationFailed
from apps.publications.models import Publication
from apps.publishing.delivery.comment import start_first_comment
from apps.publishing.delivery.enqueue import rendition_cancel_delivery, schedule_publish
from apps.publishing.delivery.waiting import forget_accepted_work
from apps.publishing.locks import lock_rendition
from apps.publishing.services.status import publication_refresh_status
from apps.renditions.models import DeliveryAttempt, Rendition

MANUAL_RETRY_LIMIT = 6


class RetryRefused(Conflict):
    code = "NOT_RETRYABLE"


def _retry(rendition: Rendition) -> None:
    if rendition.manual_retry_count >= MANUAL_RETRY_LIMIT:
        raise Conflict(
            f"This destination was retried by hand {MANUAL_RETRY_LIMIT} times already.",
            code="MANUAL_RETRY_LIMIT",
            details={"rendition": rendition.pk, "limit": MANUAL_RETRY_LIMIT},
        )
    rendition.transition_to(
        Rendition.Status.SCHEDULED,
        next_retry_at=None,
        ambiguous=False,
        manual_retry_count=rendition.manual_retry_count + 1,
    )
    schedule_publish(rendition, run_at=timezone.now())


@transaction.atomic
def rendition_retry(*, rendition: Rendition, user: User | None = None) -> Rendition:
    """Retry one failed destination now. An ambiguous one is settled with
    ``rendition_resolve`` instead, so nobody resends a post that may exist by accident."""
    current = lock_rendition(rendition.pk)
    if current.status != Rendition.Status.FAILED:
        raise RetryRefused(
            f"Only a failed destination can be retried; this one is {current.status}.",
            details={"rendition": current.pk, "status": current.status},
        )
    if current.ambiguous:
        raise RetryRefused(
            "This destination's outcome is unknown: the post may exist. Check the platform "
            "and resolve it (published, failed or retry).",
            code="AMBIGUOUS_OUTCOME",
            details={"rendition": current.pk},
        )
    _retry(current)
    publication_refresh_status(current.publication)
    return current


@transaction.atomic
def publication_retry(*, publication: Publication, user: User | None = None) -> list[Rendition]:
    """Retry every failed, non-ambiguous destination of the publication; returns them.
    Published destinations are never sent again."""
    ids = list(
        publication.renditions.filter(status=Rendition.Status.FAILED, ambiguous=False)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if not ids:
        raise RetryRefused(
            "No destination of this publication can be retried.",
            details={"publication": publication.pk},
        )
    retried = []
    for pk in ids:
        current = lock_rendition(pk)
        if current.status == Rendition.Status.FAILED and not current.ambiguous:
            _retry(current)
            retried.append(current)
    publication_refresh_status(publication)
    return retried


@transaction.atomic
def rendition_cancel(*, rendition: Rendition, user: User | None = None) -> Rendition:
    """Cancel one destination that has not gone out (draft, scheduled, or failed). One that
    is publishing, waiting or published is left alone: it may already be on the platform."""
    current = lock_rendition(rendition.pk)
    if current.status not in (
        Rendition.Status.DRAFT,
        Rendition.Status.SCHEDULED,
        Rendition.Status.FAILED,
    ):
        raise Conflict(
            f"A {current.status} destination cannot be cancelled.",
            code="NOT_CANCELLABLE",
            details={"rendition": current.pk, "status": current.status},
        )
    if current.ambiguous:
        raise Conflict(
            "This destination's outcome is unknown; resolve it instead of cancelling.",
            code="AMBIGUOUS_OUTCOME",
            details={"rendition": current.pk},
        )
    rendition_cancel_delivery(current)
    current.mark_cancelled()
    publication_refresh_status(current.publication)
    return current


class Resolution:
    PUBLISHED = "published"
    FAILED = "failed"
    RETRY = "retry"
    CHOICES = (PUBLISHED, FAILED, RETRY)


@transaction.atomic
def rendition_resolve(
    *,
    rendition: Rendition,
    outcome: str,
    provider_url: str = "",
    provider_post_id: str = "",
    user: User | None = None,
) -> Rendition:
    """A person settles an ambiguous outcome after checking the platform:
    ``published`` (the post exists: give its URL), ``failed`` (it does not; leave it
    failed) or ``retry`` (it does not; send it again)."""
    if outcome not in Resolution.CHOICES:
        raise ValidationFailed(
            "outcome must be published, failed or retry.",
            details={"outcome": [f"Choose one of {', '.join(Resolution.CHOICES)}."]},
        )
    if outcome == Resolution.PUBLISHED and not (provider_url or provider_post_id):
        raise ValidationFailed(
            "Give the post's URL (or id) when it was published.",
            details={"provider_url": ["Required when the outcome is published."]},
        )
    current = lock_rendition(rendition.pk)
    if not (current.status == Rendition.Status.FAILED and current.ambiguous):
        raise Conflict(
            "Only a destination with an unknown outcome can be resolved.",
            code="NOT_AMBIGUOUS",
            details={"rendition": current.pk, "status": current.status},
        )
    who = user.email if user else "an API client"
    DeliveryAttempt.objects.create(
        rendition=current,
        workspace_id=current.workspace_id,
        kind=DeliveryAttempt.Kind.RESOLVE,
        outcome=DeliveryAttempt.Outcome.RESOLVED,
        provider_post_id=provider_post_id,
        provider_url=provider_url,
        note=f"Resolved as {outcome} by {who}.",
        finished_at=timezone.now(),
    )
    events.emit(events.RENDITION_RESOLVED, rendition=current, outcome=outcome)
    if outcome != Resolution.PUBLISHED:
        forget_accepted_work(current)  # the person found nothing on the platform
    if outcome == Resolution.PUBLISHED:
        segment = current.segments.filter(provider_post_id="").order_by("position").first()
        post_id = provider_post_id or provider_url
        if segment is not None:
            segment.mark_published(post_id, provider_url)
        current.mark_published(post_id, provider_url)
        if provider_post_id:  # a comment needs the post's own id, not its address
            start_first_comment(current)
        events.emit(events.RENDITION_PUBLISHED, rendition=current)
    elif outcome == Resolution.FAILED:
        error = dict(current.last_error or {})
        error.update(retryable=False, action=None, resolved_by=who)
        Rendition.objects.filter(pk=current.pk, status=Rendition.Status.FAILED).update(
            ambiguous=False, last_error=error, updated_at=timezone.now()
        )
        current.ambiguous, current.last_error = False, error
        events.emit(events.RENDITION_FAILED, rendition=current)
    else:
        _retry(current)
    publication_refresh_status(current.publication)
    return current
