"""Running one claimed job: its handler, under the job's lease, and the outcome it led to
(not written here: the worker's loop writes outcomes)."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass

from django.db import connection

from apps.jobs.errors import LeaseLost
from apps.jobs.models import Job
from apps.jobs.outcomes import decide
from apps.jobs.queue import Transition
from apps.jobs.registry import JobType, get_job_type

logger = logging.getLogger(__name__)


@dataclass
class Result:
    """What running one job produced: `change` None means done; `lost` means the handler
    found its lease gone (LeaseLost) and nothing is to be written."""

    job: Job
    change: Transition | None
    started_delay_s: float
    lost: bool = False


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
        job_type.handler(job)
    except LeaseLost:
        return Result(job, None, delay, lost=True)
    except BaseException as exc:  # a handler's SystemExit must not end a pool thread
        try:
            change = decide(job, job_type, exc, worker=worker)
        except Exception as inner:  # e.g. a naive retry_at: still an outcome, never a crash
            change = decide(job, job_type, inner, worker=worker)
        return Result(job, change, delay)
    return Result(job, None, delay)


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
