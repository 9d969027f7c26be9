"""Running one claimed job: its handler, under the job's lease, and the outcome it led to
(not written here: the worker's loop writes outcomes).

While the handler runs, its thread carries a guard (apps.common.send_guard) that the
platform HTTP plumbing calls before every request: one read of the job's row on the
database clock, so a worker that lost its lease (paused past it, cut off, past its time
limit) sends nothing. A database error escaping the handler decided nothing: the result
says so (`interrupted`), the loop recovers the job, and the thread's connection is closed
so the next job does not inherit a dead one.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

from apps.common import send_guard
from apps.jobs import lease_check
from apps.jobs.errors import DATABASE_ERROR, LeaseLost, is_database_error
from apps.jobs.models import Job
from apps.jobs.outcomes import decide
from apps.jobs.queue import Transition
from apps.jobs.registry import JobType, get_job_type

logger = logging.getLogger(__name__)


@dataclass
class Result:
    """What running one job produced: `change` None means done; `lost` means the handler
    found its lease gone (LeaseLost) and nothing is to be written; `interrupted` (the
    error's description) means a database error stopped the handler: nothing was decided,
    and the job is recovered (apps.jobs.services.job_recover_interrupted)."""

    job: Job
    change: Transition | None
    started_delay_s: float
    lost: bool = False
    interrupted: dict | None = None


def lease_of(job: Job) -> uuid.UUID:
    """The lease of a job this worker claimed. A processing job always has one (a database
    constraint), so a missing lease is a bug in the caller, never a lost claim."""
    if job.lease is None:
        raise RuntimeError(f"Job {job.pk} was never claimed: it has no lease.")
    return job.lease


def type_or_none(name: str) -> JobType | None:
    try:
        return get_job_type(name)
    except LookupError:
        return None


def execute(job: Job, *, worker: str) -> Result:
    """Run the job's handler and decide the outcome, without writing it."""
    started = time.monotonic()
    delay = max(0.0, started - getattr(job, "_claimed_mono", started))
    try:
        job_type = get_job_type(job.type)
    except LookupError:
        error = {"kind": "unknown_type", "message": f"No handler for {job.type!r}."}
        return Result(job, Transition(status=Job.Status.FAILED, last_error=error), delay)
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("Job %s (%s) started.", job.pk, job.type, extra={"job_id": job.pk})
    try:
        with send_guard.guarding(_lease_guard(job, job_type)):
            job_type.handler(job)
    except LeaseLost:
        return Result(job, None, delay, lost=True)
    except BaseException as exc:  # a handler's SystemExit must not end a pool thread
        if is_database_error(exc):
            return _interrupted(job, exc, delay, worker=worker)
        try:
            change = decide(job, job_type, exc, worker=worker)
        except Exception as inner:  # e.g. a naive retry_at: still an outcome, never a crash
            if is_database_error(inner):
                return _interrupted(job, inner, delay, worker=worker)
            change = decide(job, job_type, inner, worker=worker)
        return Result(job, change, delay)
    return Result(job, None, delay)


def _lease_guard(job: Job, job_type: JobType):
    stale_s = getattr(job, "_stale_after_s", settings.WORKER_STALE_AFTER_S)

    def check() -> None:
        lease_check.ensure_held(job, stale_s=stale_s, time_limit_s=job_type.time_limit_s)

    return check


def _interrupted(job: Job, exc: BaseException, delay: float, *, worker: str) -> Result:
    """A database error stopped the handler: describe it, and drop the thread's connection
    (dead, or in a state no one should inherit)."""
    logger.warning(
        "Job %s (%s) stopped on a database error (%s: %s); it will be recovered.",
        job.pk,
        job.type,
        type(exc).__name__,
        str(exc).strip()[:300],
        extra={"job_id": job.pk},
    )
    with contextlib.suppress(Exception):
        connection.close()
    error = {
        "kind": DATABASE_ERROR,
        "message": f"{type(exc).__name__}: {str(exc).strip()[:500]}",
        "worker": worker,
        "attempt": job.attempts,
    }
    return Result(job, None, delay, interrupted=error)


def reset_thread_connection(job: Job) -> None:
    """A handler must leave its thread's connection as it found it (autocommit, outside
    any transaction); if it did not, close it so the next job starts clean."""
    if connection.connection is not None and (
        connection.in_atomic_block or not connection.get_autocommit()
    ):
        logger.error(
            "Job %s (%s) left a transaction open; its connection is closed.",
            job.pk,
            job.type,
            extra={"job_id": job.pk},
        )
        connection.close()
