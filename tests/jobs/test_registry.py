"""Job type declarations, and the retry arithmetic (backoff with full jitter, Retry-After)."""

from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.jobs.errors import RetryableError
from apps.jobs.models import Job
from apps.jobs.outcomes import decide
from apps.jobs.queue import Transition
from apps.jobs.registry import Backoff, JobType, StalePolicy, get_job_type, job_type


def test_builtin_types_are_registered():
    assert get_job_type("noop").stale_policy == StalePolicy.REQUEUE
    assert get_job_type("jobs.prune").periodic_every == timedelta(hours=1)


@pytest.mark.parametrize(
    "options",
    [
        {"stale_policy": StalePolicy.CALLBACK},
        {"on_stale": lambda job: None},
        {"max_attempts": 0},
        {"periodic_every": timedelta(0)},
    ],
)
def test_inconsistent_declarations_are_refused(options):
    with pytest.raises(ImproperlyConfigured):
        job_type("t.bad", **options)


def test_a_name_cannot_be_taken_by_another_handler(job_types):
    job_types("t.once", lambda job: None)
    with pytest.raises(ImproperlyConfigured, match="already registered"):
        job_type("t.once")(lambda job: None)


def test_backoff_refuses_nonsense():
    with pytest.raises(ImproperlyConfigured):
        Backoff(base_s=0)
    with pytest.raises(ImproperlyConfigured):
        Backoff(base_s=10, cap_s=5)


# Arithmetic only, but on a loaded runner generating examples can look slow: neither the
# too-slow health check nor the per-example deadline may fail these tests (the examples
# drawn and what each asserts are unchanged).
on_any_load = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)

backoffs = st.builds(
    lambda base, factor: Backoff(base_s=base, cap_s=base * factor),
    st.floats(min_value=0.01, max_value=3600),
    st.floats(min_value=1, max_value=1000),
)


@on_any_load
@given(backoff=backoffs, attempt=st.integers(min_value=1, max_value=200))
def test_the_ceiling_doubles_per_attempt_up_to_the_cap(backoff, attempt):
    ceiling = backoff.ceiling(attempt)
    assert ceiling <= backoff.cap_s
    assert ceiling == min(backoff.cap_s, backoff.base_s * 2 ** (attempt - 1))
    assert backoff.ceiling(attempt + 1) >= ceiling


@on_any_load
@given(
    backoff=backoffs,
    attempt=st.integers(min_value=1, max_value=200),
    floor=st.floats(min_value=0, max_value=86_400),
)
def test_full_jitter_stays_within_bounds_and_respects_the_floor(backoff, attempt, floor):
    delay = backoff.delay(attempt, floor_s=floor)
    assert floor <= delay <= max(floor, backoff.ceiling(attempt))


def _job(attempts, max_attempts=10):
    return Job(id=1, type="t", attempts=attempts, max_attempts=max_attempts, snoozed_s=0)


@on_any_load
@given(
    attempt=st.integers(min_value=1, max_value=9),
    retry_after=st.floats(min_value=0, max_value=86_400),
)
def test_a_retryable_error_is_rescheduled_no_earlier_than_retry_after(attempt, retry_after):
    kind = JobType(
        name="t",
        handler=lambda job: None,
        retry_kinds=frozenset({"rate_limited"}),
        backoff=Backoff(base_s=5, cap_s=300),
    )
    retry_at = timedelta(seconds=retry_after)
    retry_after = retry_at.total_seconds()  # timedelta keeps microseconds
    error = RetryableError("rate_limited", "429", retry_at=retry_at)

    change = decide(_job(attempt), kind, error)

    assert isinstance(change, Transition)
    assert change.status == Job.Status.PENDING
    assert retry_after <= change.delay_s <= max(retry_after, kind.backoff.ceiling(attempt))
    assert change.last_error["retry_in_s"] == pytest.approx(change.delay_s, abs=0.001)


def test_a_job_is_not_retried_once_its_attempts_are_spent():
    kind = JobType(name="t", handler=lambda job: None, retry_kinds=frozenset({"rate_limited"}))
    change = decide(_job(10, max_attempts=10), kind, RetryableError("rate_limited", "429"))
    assert change.status == Job.Status.FAILED and change.delay_s is None
