"""What a job handler raises to tell the worker how its attempt ended.

Returning normally means done. Everything else is one of these exceptions; any other
exception is "errored" (a bug in the handler: the traceback is kept in `last_error`).

Times given as `retry_at` / `until` may be an aware datetime, a timedelta or a number of
seconds. They are turned into a delay once, on the worker, and the delay is added to the
database clock, so a skewed worker host cannot move a job earlier than intended. An aware
datetime (a schedule another process wrote, a platform's reset instant) is measured against
the database clock too: a worker whose own clock is slow would otherwise wait too long.

A database error escaping a handler (the connection lost, the server restarting, a lock
or statement timeout) is none of these: nothing was decided. The worker recovers the job
(see `is_database_error` and `apps.jobs.services.job_recover_interrupted`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import psycopg
from django.db import InterfaceError, OperationalError

from apps.common.db_clock import db_now

Until = datetime | timedelta | float | int

# Job-level error kinds (handlers bring their own, e.g. the providers' ErrorKind values).
ERRORED = "errored"  # an unexpected exception: a bug, not a refusal
STALE = "stale"  # the worker stopped heart-beating (crashed, killed, partitioned)
TIMED_OUT = "timed_out"  # the handler ran past its type's time_limit_s
SNOOZE_BUDGET_EXHAUSTED = "snooze_budget_exhausted"
WAIT_BUDGET_EXHAUSTED = "wait_budget_exhausted"
CANCELLED = "cancelled"
DATABASE_ERROR = "database_error"  # the database failed under the handler: nothing decided

# What the database layer raises when the server or the connection failed (lost, restarted,
# shutting down, out of connections) or a bound ended a statement (lock or statement
# timeout, deadlock): Django's wrappers and psycopg's own classes (raw cursors raise those).
DATABASE_ERRORS: tuple[type[Exception], ...] = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)


def is_database_error(exc: BaseException) -> bool:
    """True for an infrastructure failure of the database (see DATABASE_ERRORS)."""
    return isinstance(exc, DATABASE_ERRORS)


def delay_seconds(until: Until | None, *, now: Callable[[], datetime] = db_now) -> float:
    """Seconds from now until `until` (0 when None or in the past). An aware datetime is
    measured against the database clock (`now`); the database is asked only then."""
    if until is None:
        return 0.0
    if isinstance(until, datetime):
        if until.tzinfo is None or until.utcoffset() is None:
            raise ValueError("retry_at/until must be an aware datetime.")
        seconds = (until - now()).total_seconds()
    elif isinstance(until, timedelta):
        seconds = until.total_seconds()
    else:
        seconds = float(until)
    return max(seconds, 0.0)


class JobOutcome(Exception):  # noqa: N818 - control flow, not only errors
    """Base class of everything a handler may raise on purpose."""


class RetryableError(JobOutcome):
    """A failure that may succeed later. Retried with backoff only if `kind` is in the job
    type's `retry_kinds` and attempts remain; otherwise the job fails. `retry_at` (from a
    Retry-After or rate-limit reset header) is the earliest next attempt. With `exact`, the
    handler has already applied the backoff and `retry_at` is the next attempt itself (so
    the time it recorded elsewhere, e.g. on a rendition, is the job's run_at)."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        retry_at: Until | None = None,
        details: dict | None = None,
        exact: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind = str(kind)
        self.message = message
        self.retry_at = retry_at
        self.details = details or {}
        self.exact = exact and retry_at is not None


class PermanentError(JobOutcome):
    """A failure that will not get better by retrying: the job fails at once."""

    def __init__(self, kind: str, message: str, *, details: dict | None = None) -> None:
        super().__init__(message)
        self.kind = str(kind)
        self.message = message
        self.details = details or {}


class Snooze(JobOutcome):  # noqa: N818
    """Put the job back to pending until `until` without spending an attempt (rate limited
    before doing anything). Bounded by the type's `snooze_budget_s` in total; past it, the
    job fails with kind `snooze_budget_exhausted`."""

    def __init__(self, until: Until, reason: str = "") -> None:
        super().__init__(reason or "snoozed")
        self.until = until
        self.reason = reason


class Waiting(JobOutcome):  # noqa: N818
    """Park the job in `waiting` until `until`, then run it again, without spending an
    attempt and without holding a seat of the organization's in-flight cap (a platform is
    processing something asynchronously; the next run polls it). `state` is merged into
    the payload so the next run can pick up where this one stopped. Bounded by the type's
    `wait_budget_s` in total."""

    def __init__(self, until: Until, reason: str = "", *, state: dict | None = None) -> None:
        super().__init__(reason or "waiting")
        self.until = until
        self.reason = reason
        self.state = state or {}


class TimeLimitExceeded(BaseException):  # noqa: N818 - raised into a handler, like SystemExit
    """Raised inside a handler that ran past its type's `time_limit_s` (a BaseException,
    so a handler's `except Exception` does not swallow it). The job has already been
    settled by its type's stale policy; whatever the handler does next is discarded."""


class LeaseLost(Exception):  # noqa: N818
    """The worker no longer holds the job's lease: another worker recovered or took it."""


# A run ended by these decided nothing a handler should settle on its own: another worker
# holds the job (LeaseLost), or the database failed under it (the job is recovered and its
# next run finds what this one left). Handlers let them through untouched.
INTERRUPTIONS: tuple[type[Exception], ...] = (LeaseLost, *DATABASE_ERRORS)
