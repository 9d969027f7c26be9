"""Outcomes: the transition a handler's exception leads to, and how a written one is logged."""

from __future__ import annotations

import logging
import traceback

from apps.jobs.errors import (
    ERRORED,
    SNOOZE_BUDGET_EXHAUSTED,
    WAIT_BUDGET_EXHAUSTED,
    PermanentError,
    RetryableError,
    Snooze,
    Waiting,
    delay_seconds,
)
from apps.jobs.models import Job
from apps.jobs.queue import Transition
from apps.jobs.registry import JobType

logger = logging.getLogger(__name__)

_TRACEBACK_MAX = 8000

FAILED, PENDING, WAITING = Job.Status.FAILED, Job.Status.PENDING, Job.Status.WAITING


def decide(job: Job, job_type: JobType, exc: BaseException, *, worker: str = "") -> Transition:
    """The transition an exception raised by the handler leads to. No write: at most one
    read of the database clock, when the exception names an instant (`delay_seconds`)."""
    attempt = {"attempt": job.attempts, "max_attempts": job.max_attempts, "worker": worker}
    if isinstance(exc, Snooze):
        delay = delay_seconds(exc.until)
        if job.snoozed_s + delay > job_type.snooze_budget_s:
            error = {
                "kind": SNOOZE_BUDGET_EXHAUSTED,
                "message": f"Snoozed {job.snoozed_s:.0f}s already; {exc.reason or 'snooze'}.",
                "retryable": False,
                **attempt,
            }
            return Transition(status=FAILED, last_error=error)
        error = {"kind": "snoozed", "message": exc.reason, "retry_in_s": delay, **attempt}
        return Transition(
            status=PENDING, last_error=error, delay_s=delay, refund_attempt=True, snoozed_s=delay
        )
    if isinstance(exc, Waiting):
        delay = delay_seconds(exc.until)
        if job.waited_s + delay > job_type.wait_budget_s:
            error = {
                "kind": WAIT_BUDGET_EXHAUSTED,
                "message": f"Waited {job.waited_s:.0f}s already; {exc.reason or 'waiting'}.",
                "retryable": False,
                **attempt,
            }
            return Transition(status=FAILED, last_error=error)
        return Transition(
            status=WAITING,
            delay_s=delay,
            refund_attempt=True,
            waited_s=delay,
            payload_patch=exc.state or None,
        )
    if isinstance(exc, RetryableError | PermanentError):
        kind, message, details = exc.kind, exc.message, exc.details
        floor = delay_seconds(exc.retry_at) if isinstance(exc, RetryableError) else 0.0
    else:
        kind, message, details, floor = ERRORED, f"{type(exc).__name__}: {exc}", {}, 0.0
    error = {"kind": kind, "message": message, "details": details, **attempt}
    if kind == ERRORED:
        error["traceback"] = "".join(traceback.format_exception(exc))[-_TRACEBACK_MAX:]
    retry = not isinstance(exc, PermanentError) and job_type.may_retry(
        kind, job.attempts, job.max_attempts
    )
    error["retryable"] = retry
    if not retry:
        return Transition(status=FAILED, last_error=error)
    if isinstance(exc, RetryableError) and exc.exact:
        delay = floor
    else:
        delay = job_type.backoff.delay(job.attempts, floor_s=floor)
    error["retry_in_s"] = round(delay, 3)
    return Transition(status=PENDING, last_error=error, delay_s=delay)


def log_transition(job: Job, change: Transition) -> None:
    extra = {
        "job_id": job.pk,
        "organization_id": job.organization_id,
        "workspace_id": job.workspace_id,
    }
    error = change.last_error or {}
    if change.status == Job.Status.DONE:
        logger.debug("Job %s (%s) done.", job.pk, job.type, extra=extra)
    elif change.status == PENDING and error.get("kind") == "snoozed":
        logger.info(
            "Job %s (%s) snoozed %.1fs: %s",
            job.pk,
            job.type,
            change.delay_s,
            error["message"],
            extra=extra,
        )
    elif change.status == PENDING:
        logger.info(
            "Job %s (%s) attempt %s/%s failed (%s: %s); retry in %.1fs.",
            job.pk,
            job.type,
            job.attempts,
            job.max_attempts,
            error.get("kind"),
            error.get("message"),
            change.delay_s,
            extra=extra,
        )
    elif change.status == WAITING:
        logger.info("Job %s (%s) waiting %.1fs.", job.pk, job.type, change.delay_s, extra=extra)
    else:
        level = logging.ERROR if error.get("kind") == ERRORED else logging.WARNING
        logger.log(
            level,
            "Job %s (%s) failed after attempt %s/%s (%s: %s).",
            job.pk,
            job.type,
            job.attempts,
            job.max_attempts,
            error.get("kind"),
            error.get("message"),
            extra=extra,
        )
