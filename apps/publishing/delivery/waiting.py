"""Accepted work: a segment a platform accepted and is still processing (a container, an
upload session, a publish id).

The rendition keeps it in ``checkpoint["pending"]`` and the waiting state owns it: a rate
limit or an outage on a status poll polls again later, and no path (retry, sweep, stale
recovery) sends the segment again. It ends published, failed because the platform said the
processing failed, or handed to a person (an ambiguous failure) when we cannot tell.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from apps.common.db_clock import db_now
from apps.providers.base import Adapter
from apps.publishing.delivery.context import write_checkpoint
from apps.publishing.delivery.enqueue import enqueue_poll
from apps.publishing.delivery.run import Run
from apps.renditions.models import DeliveryAttempt, Rendition

logger = logging.getLogger(__name__)

# How often an asynchronous platform is asked about a pending segment.
POLL_INTERVAL = timedelta(seconds=30)


def accepted_work(rendition: Rendition) -> dict | None:
    """The segment a platform accepted and is still processing, if any (see the module
    docstring): {"position", "pending_id", "accepted_at"}."""
    return (rendition.checkpoint or {}).get("pending")


def next_poll_delay(adapter: Adapter, *, polls_done: int, accepted_at: datetime) -> float | None:
    """Seconds until the next poll, by the platform's schedule; None once its time budget
    is spent."""
    schedule = getattr(adapter, "poll_schedule", None)
    if schedule is None:
        return POLL_INTERVAL.total_seconds()
    elapsed = (db_now() - accepted_at).total_seconds()
    return schedule.next_delay(polls_done=polls_done, elapsed_s=elapsed)


def resume_waiting(rendition: Rendition) -> None:
    """Put a rendition whose segment the platform accepted back under its poll job,
    whatever path found it (a publish job, stale recovery). Runs under the caller's locks."""
    accepted = accepted_work(rendition)
    assert accepted is not None, "only a rendition with accepted work resumes waiting"
    if rendition.status == Rendition.Status.FAILED:
        rendition.mark_scheduled()
    if rendition.status == Rendition.Status.SCHEDULED:
        rendition.transition_to(Rendition.Status.PUBLISHING, next_retry_at=None)
    for attempt in rendition.delivery_attempts.in_flight():
        attempt.close(DeliveryAttempt.Outcome.LOST, note="The run stopped; waiting resumes.")
    rendition.mark_waiting()
    enqueue_poll(rendition, {**accepted, "polls": 0}, POLL_INTERVAL.total_seconds())
    logger.info("accepted work resumes waiting", extra={"rendition_id": rendition.pk})


def forget_accepted_work(rendition: Rendition) -> None:
    """A person checked the platform and found nothing: nothing is waited for any more."""
    checkpoint = dict(rendition.checkpoint or {})
    if checkpoint.pop("pending", None) is not None:
        write_checkpoint(rendition, checkpoint)


def clear_accepted(run: Run) -> None:
    """The accepted segment is settled (published, or failed at the platform)."""
    if run.ctx.checkpoint.pop("pending", None) is not None:
        write_checkpoint(run.rendition, dict(run.ctx.checkpoint))
