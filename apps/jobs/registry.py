"""Job types: each declares its handler and policies with `@job_type(...)`.

    @job_type(
        "renditions.publish",
        max_attempts=8,
        backoff=Backoff(base_s=30, cap_s=3600),
        retry_kinds=frozenset({"rate_limited", "provider_unavailable"}),
        stale_policy=StalePolicy.CALLBACK,
        on_stale=mark_rendition_ambiguous,
    )
    def publish(job: Job) -> None: ...

`time_limit_s` is the wall-clock time one run of the handler may take (default
DEFAULT_TIME_LIMIT_S, 10 minutes). Past it the worker settles the job as if its worker had
died, by the type's `stale_policy`, with kind "timed_out", and runs the next jobs on a
fresh thread (see apps.jobs.timelimits).

`seat` names the organization budget the type's running jobs count against: "publish"
(the default: Organization.inflight_cap), "webhook" (Organization.webhook_inflight_cap),
or None for jobs that hold no seat (status polls, lookups: claimed without a cap, still
shared fairly between organizations, never for a suspended one).

Apps declare their types in `apps/<app>/jobs.py`; the jobs app imports those modules when
Django starts, so every process (web, worker, commands) knows every type.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured

from apps.jobs.constants import DEFAULT_TIME_LIMIT_S, Seat
from apps.jobs.errors import ERRORED

if TYPE_CHECKING:
    from apps.jobs.models import Job

Handler = Callable[["Job"], None]


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with full jitter: the n-th retry waits a uniformly random time
    in [0, min(cap_s, base_s * 2**(n-1))]. A provider's Retry-After is a floor on top."""

    base_s: float = 10.0
    cap_s: float = 3600.0

    def __post_init__(self) -> None:
        if self.base_s <= 0 or self.cap_s < self.base_s:
            raise ImproperlyConfigured("Backoff needs 0 < base_s <= cap_s.")

    def ceiling(self, attempt: int) -> float:
        """Upper bound of the wait after the `attempt`-th failed attempt (1-based)."""
        exponent = min(max(attempt, 1) - 1, 62)  # 2**62 s is already past any cap
        return min(self.cap_s, self.base_s * 2.0**exponent)

    def delay(
        self, attempt: int, *, floor_s: float = 0.0, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before the next attempt; never less than `floor_s`."""
        jittered = (rng or random).uniform(0.0, self.ceiling(attempt))
        return max(jittered, floor_s)


class StalePolicy(enum.StrEnum):
    """What recovery does with a job whose worker stopped heart-beating.

    REQUEUE: back to pending, the attempt is not spent (read-only and housekeeping work).
    CLOSE: closed as superseded (cancelled), e.g. a periodic sweep the next run replaces.
    FAIL: failed with kind `stale`.
    CALLBACK: failed with kind `stale`, and the type's `on_stale(job)` runs in the same
    transaction (mark a publish ambiguous, or enqueue a reconciliation job).
    """

    REQUEUE = "requeue"
    CLOSE = "close"
    FAIL = "fail"
    CALLBACK = "callback"


@dataclass(frozen=True)
class JobType:
    """A registered job type and its policies. Build it with `@job_type`."""

    name: str
    handler: Handler
    max_attempts: int = 5
    backoff: Backoff = field(default_factory=Backoff)
    retry_kinds: frozenset[str] = frozenset({ERRORED})
    stale_policy: StalePolicy = StalePolicy.REQUEUE
    on_stale: Handler | None = None
    periodic_every: timedelta | None = None
    snooze_budget_s: float = 6 * 3600.0
    wait_budget_s: float = 24 * 3600.0
    seat: Seat = Seat.PUBLISH
    time_limit_s: float = DEFAULT_TIME_LIMIT_S

    @property
    def is_periodic(self) -> bool:
        return self.periodic_every is not None

    @property
    def periodic_dedupe_key(self) -> str:
        return f"periodic:{self.name}"

    def may_retry(self, kind: str, attempts: int, max_attempts: int) -> bool:
        """Whether a failure of `kind` after `attempts` attempts is retried."""
        return kind in self.retry_kinds and attempts < max_attempts


_REGISTRY: dict[str, JobType] = {}


def job_type(
    name: str,
    *,
    max_attempts: int = 5,
    backoff: Backoff | None = None,
    retry_kinds: frozenset[str] | set[str] = frozenset({ERRORED}),
    stale_policy: StalePolicy = StalePolicy.REQUEUE,
    on_stale: Handler | None = None,
    periodic_every: timedelta | None = None,
    snooze_budget_s: float = 6 * 3600.0,
    wait_budget_s: float = 24 * 3600.0,
    seat: str | None = Seat.PUBLISH,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of job type `name`.

    `retry_kinds` lists the error kinds retried automatically; "errored" (an unexpected
    exception) is in the default set, drop it for types where a blind re-run is unsafe.
    `seat` is the budget its jobs count against (see the module docstring).
    """
    if stale_policy == StalePolicy.CALLBACK and on_stale is None:
        raise ImproperlyConfigured(f"Job type {name!r}: StalePolicy.CALLBACK needs on_stale.")
    if on_stale is not None and stale_policy != StalePolicy.CALLBACK:
        raise ImproperlyConfigured(f"Job type {name!r}: on_stale needs StalePolicy.CALLBACK.")
    if max_attempts < 1:
        raise ImproperlyConfigured(f"Job type {name!r}: max_attempts must be >= 1.")
    if periodic_every is not None and periodic_every <= timedelta(0):
        raise ImproperlyConfigured(f"Job type {name!r}: periodic_every must be positive.")
    if not time_limit_s > 0:
        raise ImproperlyConfigured(f"Job type {name!r}: time_limit_s must be positive.")
    if seat is None:
        seat = Seat.NONE
    if seat not in Seat.values:
        raise ImproperlyConfigured(
            f"Job type {name!r}: seat must be one of {', '.join(Seat.values)} or None."
        )

    def register(handler: Handler) -> Handler:
        existing = _REGISTRY.get(name)
        if existing is not None and existing.handler is not handler:
            raise ImproperlyConfigured(
                f"Job type {name!r} is already registered by {_qualname(existing.handler)}."
            )
        _REGISTRY[name] = JobType(
            name=name,
            handler=handler,
            max_attempts=max_attempts,
            backoff=backoff or Backoff(),
            retry_kinds=frozenset(str(kind) for kind in retry_kinds),
            stale_policy=StalePolicy(stale_policy),
            on_stale=on_stale,
            periodic_every=periodic_every,
            snooze_budget_s=snooze_budget_s,
            wait_budget_s=wait_budget_s,
            seat=Seat(seat),
            time_limit_s=float(time_limit_s),
        )
        return handler

    return register


def _qualname(func: Callable) -> str:
    return f"{func.__module__}.{func.__qualname__}"


def get_job_type(name: str) -> JobType:
    """The registered type, or LookupError."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise LookupError(f"Unknown job type {name!r}.") from None


def job_types() -> dict[str, JobType]:
    """Every registered type by name (a copy)."""
    return dict(_REGISTRY)


def unregister(name: str) -> None:
    """Forget a type (tests that register throwaway types clean up with this)."""
    _REGISTRY.pop(name, None)
