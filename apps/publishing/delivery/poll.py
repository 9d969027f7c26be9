"""The status poll job: ask the platform about a segment it accepted and is processing,
until it is published (the thread's next segments then go out), fails at the platform, or
is handed to a person. A failed read polls again later; the work is never sent again.
Where the platform's poll makes the post, a poll an earlier run left in flight is settled
by the ambiguity rules (looked up by reconciliation) before any poll is sent again."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction

from apps.common.db_clock import db_now
from apps.jobs.errors import INTERRUPTIONS, JobOutcome, Waiting
from apps.jobs.models import Job
from apps.jobs.registry import get_job_type
from apps.jobs.services import holding_lease
from apps.providers.base import PublishedSegment, SupportsStatusPoll
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.publishing.delivery import waiting
from apps.publishing.delivery.failures import fail, hand_over_unexpected
from apps.publishing.delivery.publish import deliver, prepare, recover_publishing
from apps.publishing.delivery.run import (
    Run,
    Stop,
    record_segment,
    save_checkpoint,
    seconds_until,
)
from apps.publishing.delivery.waiting import POLL_INTERVAL, accepted_work, clear_accepted
from apps.publishing.locks import lock_rendition
from apps.publishing.services.status import publication_refresh_status
from apps.renditions.models import DeliveryAttempt, Rendition

logger = logging.getLogger(__name__)

# Kinds after which we can no longer see the accepted work (the account lost its access,
# or an error we cannot read): a person decides, the work is never sent again.
_CANNOT_TELL = frozenset({ErrorKind.AUTH_EXPIRED, ErrorKind.PERMISSION_MISSING, ErrorKind.UNKNOWN})
# A person is asked this long before the poll job type's wait budget (counted from when
# the platform accepted the work) runs out, so the job never ends on its own with the
# rendition still waiting.
GIVE_UP_MARGIN = timedelta(hours=1)


def poll(job: Job) -> None:
    """Handler of ``renditions.poll``: ask the platform about a pending segment."""
    rendition_id = job.payload["rendition_id"]
    resumed: dict | None = None
    with holding_lease(job):
        rendition = lock_rendition(rendition_id)
        if rendition.status == Rendition.Status.PUBLISHING:
            # An earlier run of this job died while delivering the thread's next segments.
            resumed = accepted_work(rendition)
            if resumed:  # this job itself goes on waiting for the accepted segment
                for attempt in rendition.delivery_attempts.in_flight():
                    attempt.close(DeliveryAttempt.Outcome.LOST, note="The run stopped.")
                rendition.mark_waiting()
            else:
                recover_publishing(rendition, worker=job.locked_by)
            publication_refresh_status(rendition.publication)
        elif rendition.status != Rendition.Status.WAITING:
            return
    if rendition.status != Rendition.Status.WAITING:
        return
    if resumed:
        state = {**resumed, "polls": 0, "poll_errors": 0}
        raise Waiting(POLL_INTERVAL.total_seconds(), "waiting resumes", state=state)
    try:
        _poll(job, rendition)
    except Stop as stop:
        if stop.outcome is not None:
            raise stop.outcome from None
    except JobOutcome:
        raise
    except INTERRUPTIONS:
        raise  # a database error decided nothing: the job is recovered and polls again
    except Exception as exc:
        hand_over_unexpected(job, rendition_id, exc)
        raise


def _poll(job: Job, rendition: Rendition) -> None:
    accepted_at = datetime.fromisoformat(job.payload["accepted_at"])
    run = prepare(job, rendition, accepted=True)
    if not isinstance(run.adapter, SupportsStatusPoll):
        raise RuntimeError(f"{rendition.platform} cannot poll a pending segment.")
    segment = rendition.segments.get(position=job.payload["position"])
    if segment.is_published:
        # An earlier run stored the post, then stopped before moving on: never polled again.
        _go_on(job, run)
        return
    _settle_earlier_polls(job, run, segment.position)
    attempt = DeliveryAttempt.objects.create(
        started_at=db_now(),
        rendition=rendition,
        workspace_id=rendition.workspace_id,
        kind=DeliveryAttempt.Kind.POLL,
        segment_position=segment.position,
        job_id=job.pk,
        worker=job.locked_by,
    )
    pending = PublishedSegment(job.payload["pending_id"], pending=True)
    try:
        result = run.adapter.poll_segment(run.ctx, pending)
    except ProviderError as err:
        save_checkpoint(run)
        unknown = err.kind == ErrorKind.OUTCOME_UNKNOWN
        attempt.close(
            DeliveryAttempt.Outcome.UNKNOWN if unknown else DeliveryAttempt.Outcome.FAILED,
            error=err.as_dict(),
        )
        if err.retryable:
            # The read failed (rate limited, an outage) or the platform asks for patience:
            # the accepted work is untouched, so it is read again later. (An unknown outcome
            # comes from a create some platforms make in this step: never repeated blindly.)
            _poll_again_later(job, rendition, err, accepted_at)
        if err.kind in _CANNOT_TELL or err.kind == ErrorKind.OUTCOME_UNKNOWN:
            fail(job, rendition, err, hand_over=True)
        # The platform says its processing failed: nothing was published, so the work is
        # no longer accepted and a retry (by the policy or a person) may send it anew.
        clear_accepted(run)
        fail(job, rendition, err)
    save_checkpoint(run)
    if result.pending:
        attempt.close(DeliveryAttempt.Outcome.PENDING, provider_post_id=result.provider_post_id)
        polls = job.payload.get("polls", 0) + 1
        delay = waiting.next_poll_delay(run.adapter, polls_done=polls, accepted_at=accepted_at)
        if delay is None:
            # It may still appear: look for it (where the platform allows), or ask a person.
            fail(
                job,
                rendition,
                ProviderError(
                    ErrorKind.MEDIA_PROCESSING,
                    run.adapter.processing_timeout_message
                    or "The platform did not finish processing within its time budget; "
                    "the post may still appear.",
                    code="processing_timeout",
                    retryable=False,
                    action=Action.VERIFY,
                ),
                hand_over=True,
            )
        # The platform may hand a new handle for the next step (a carousel's
        # container replacing its children).
        raise Waiting(
            delay,
            "still processing",
            state={"pending_id": result.provider_post_id, "polls": polls, "poll_errors": 0},
        )
    # One commit: a run stopped before it leaves the attempt in flight (looked up by the
    # next run), never closed with a segment that looks unsent.
    with transaction.atomic():
        attempt.close(
            DeliveryAttempt.Outcome.PUBLISHED,
            provider_post_id=result.provider_post_id,
            provider_url=result.provider_url,
        )
        record_segment(segment, result)
    _go_on(job, run)


def _go_on(job: Job, run: Run) -> None:
    """The accepted segment is published: the thread's next segments go out."""
    clear_accepted(run)
    with holding_lease(job):
        current = lock_rendition(run.rendition.pk)
        current.transition_to(Rendition.Status.PUBLISHING)
    run.rendition.status = Rendition.Status.PUBLISHING
    deliver(run)


def _settle_earlier_polls(job: Job, run: Run, position: int) -> None:
    """Look before polling again: a poll of this segment left in flight by a run that
    stopped (its worker killed, the database gone mid-call) may have made the post, where
    the platform's poll makes it. Unless a repeat is harmless (the create goes under a key
    the platform honours), the rendition becomes an ambiguous failure settled by
    reconciliation, never a second create. A poll that only reads is simply read again."""
    earlier = list(
        run.rendition.delivery_attempts.in_flight().filter(
            kind=DeliveryAttempt.Kind.POLL, segment_position=position
        )
    )
    if not earlier:
        return

    def close_earlier() -> None:
        for attempt in earlier:
            attempt.close(
                DeliveryAttempt.Outcome.LOST,
                note=f"{attempt.worker or 'The worker'} stopped during the status check.",
            )

    adapter = run.adapter
    if not adapter.poll_makes_post or (
        adapter.is_retry_safe(run.account) and adapter.idempotency_window is None
    ):
        close_earlier()
        return
    fail(
        job,
        run.rendition,
        ProviderError(
            ErrorKind.OUTCOME_UNKNOWN,
            "A status check stopped while the platform may have made the post; it is "
            "looked up before anything is sent again.",
            code="worker_lost",
        ),
        hand_over=True,
        closing=close_earlier,
    )


def _poll_again_later(
    job: Job, rendition: Rendition, err: ProviderError, accepted_at: datetime
) -> None:
    """A status read failed; the accepted work is untouched, so read again after the
    platform's Retry-After (or a backoff). Never returns."""
    job_type = get_job_type(job.type)
    errors = job.payload.get("poll_errors", 0)
    floor_s = seconds_until(err.retry_at)
    if err.kind == ErrorKind.MEDIA_PROCESSING:  # still processing: not an error of ours
        delay_s = floor_s or POLL_INTERVAL.total_seconds()
    else:
        errors += 1
        delay_s = job_type.backoff.delay(errors, floor_s=floor_s)
    give_up_after = timedelta(seconds=job_type.wait_budget_s) - GIVE_UP_MARGIN
    if db_now() + timedelta(seconds=delay_s) - accepted_at > give_up_after:
        fail(job, rendition, err, hand_over=True)
    logger.info(
        "status poll failed (%s); polling again in %.0fs",
        err.kind,
        delay_s,
        extra={"rendition_id": rendition.pk, "job_id": job.pk},
    )
    raise Stop(Waiting(delay_s, err.message, state={"poll_errors": errors}))
