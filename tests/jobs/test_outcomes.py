"""What run_one writes for each way a handler can end, always under the claim's lease."""

from datetime import timedelta

import pytest

from apps.jobs.errors import (
    PermanentError,
    RetryableError,
    Snooze,
    Waiting,
)
from apps.jobs.models import Job
from apps.jobs.registry import Backoff
from apps.jobs.services import holding_lease, job_recover_stale
from tests.factories import JobFactory, OrganizationFactory
from tests.jobs.conftest import age_heartbeat, db_now, seconds_from_now


def _claim_one(worker, **job_fields):
    job = JobFactory(**job_fields)
    [claimed] = worker.claim_batch()
    assert claimed.pk == job.pk
    return claimed


def _raiser(exc):
    def handler(job):
        raise exc

    return handler


def test_a_handler_that_returns_marks_the_job_done(worker):
    job = _claim_one(worker)

    assert worker.run_one(job) == "done"

    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    assert job.finished_at == db_now()
    assert job.attempts == 1
    assert job.locked_by == "w1"  # who ran it stays visible
    assert worker.jobs_done == 1


def test_a_retryable_error_of_a_retried_kind_goes_back_to_pending_with_backoff(worker, job_types):
    job_types(
        "t.flaky",
        _raiser(RetryableError("provider_unavailable", "502 from upstream")),
        retry_kinds={"provider_unavailable"},
        backoff=Backoff(base_s=10, cap_s=60),
    )
    job = _claim_one(worker, type="t.flaky")

    assert worker.run_one(job) == "pending"

    job.refresh_from_db()
    assert job.status == Job.Status.PENDING
    assert job.attempts == 1  # spent
    assert 0 <= seconds_from_now(job.run_at) <= 10  # first retry: [0, base]
    assert job.lease is None and job.locked_by == "" and job.locked_at is None
    assert job.last_error["kind"] == "provider_unavailable"
    assert job.last_error["message"] == "502 from upstream"
    assert job.last_error["retryable"] is True
    assert job.last_error["attempt"] == 1


def test_retry_after_is_the_floor_of_the_next_attempt(worker, job_types):
    error = RetryableError("rate_limited", "429", retry_at=timedelta(seconds=120))
    job_types(
        "t.limited",
        _raiser(error),
        retry_kinds={"rate_limited"},
        backoff=Backoff(base_s=1, cap_s=2),
    )
    job = _claim_one(worker, type="t.limited")

    worker.run_one(job)

    job.refresh_from_db()
    assert 120 <= seconds_from_now(job.run_at) <= 120.01


def test_an_exact_retry_time_is_kept_as_given(worker, job_types):
    error = RetryableError("provider_unavailable", "503", retry_at=timedelta(seconds=5), exact=True)
    job_types(
        "t.exact",
        _raiser(error),
        retry_kinds={"provider_unavailable"},
        backoff=Backoff(base_s=600, cap_s=3600),  # jitter would land far later
    )
    job = _claim_one(worker, type="t.exact")

    worker.run_one(job)

    job.refresh_from_db()
    assert job.status == "pending"
    assert 4.9 <= seconds_from_now(job.run_at) <= 5.01


def test_a_kind_not_listed_for_retry_fails_the_job(worker, job_types):
    job_types(
        "t.rejected",
        _raiser(RetryableError("content_rejected", "too long")),
        retry_kinds={"rate_limited"},
    )
    job = _claim_one(worker, type="t.rejected")

    assert worker.run_one(job) == "failed"

    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.finished_at is not None
    assert job.last_error["kind"] == "content_rejected"
    assert job.last_error["retryable"] is False


def test_the_last_attempt_fails_the_job_even_for_a_retried_kind(worker, job_types):
    job_types(
        "t.flaky", _raiser(RetryableError("rate_limited", "429")), retry_kinds={"rate_limited"}
    )
    job = _claim_one(worker, type="t.flaky", attempts=2, max_attempts=3)
    assert job.attempts == 3 and job.is_last_attempt

    assert worker.run_one(job) == "failed"


def test_a_permanent_error_fails_at_once(worker, job_types):
    job_types(
        "t.perm",
        _raiser(PermanentError("auth_expired", "token revoked")),
        retry_kinds={"auth_expired"},
    )
    job = _claim_one(worker, type="t.perm")

    assert worker.run_one(job) == "failed"
    job.refresh_from_db()
    assert job.last_error["kind"] == "auth_expired"


def test_an_unexpected_exception_is_errored_with_its_traceback_and_retried(worker, job_types):
    def buggy(job):
        return {}["missing"]

    job_types("t.buggy", buggy)
    job = _claim_one(worker, type="t.buggy")

    assert worker.run_one(job) == "pending"

    job.refresh_from_db()
    assert job.last_error["kind"] == "errored"
    assert job.last_error["message"] == "KeyError: 'missing'"
    assert "Traceback" in job.last_error["traceback"]
    assert 'return {}["missing"]' in job.last_error["traceback"]


def test_errored_is_not_retried_when_the_type_leaves_it_out(worker, job_types):
    job_types("t.unsafe", _raiser(ValueError("boom")), retry_kinds=frozenset())
    job = _claim_one(worker, type="t.unsafe")
    assert worker.run_one(job) == "failed"


def test_a_broken_retry_at_still_ends_in_an_outcome(worker, job_types):
    naive = db_now().replace(tzinfo=None)
    job_types("t.naive", _raiser(RetryableError("rate_limited", "x", retry_at=naive)))
    job = _claim_one(worker, type="t.naive")
    assert worker.run_one(job) == "pending"
    job.refresh_from_db()
    assert job.last_error["kind"] == "errored"


def test_snooze_does_not_spend_an_attempt(worker, job_types):
    job_types("t.snooze", _raiser(Snooze(timedelta(seconds=30), "rate limit window")))
    job = _claim_one(worker, type="t.snooze")

    assert worker.run_one(job) == "pending"

    job.refresh_from_db()
    assert job.attempts == 0
    assert job.snoozed_s == 30
    assert seconds_from_now(job.run_at) == pytest.approx(30, abs=0.01)
    assert job.last_error["kind"] == "snoozed"


def test_snoozing_past_the_budget_fails_the_job(worker, job_types):
    job_types("t.snooze", _raiser(Snooze(60, "still limited")), snooze_budget_s=100)
    job = _claim_one(worker, type="t.snooze", snoozed_s=50)

    assert worker.run_one(job) == "failed"

    job.refresh_from_db()
    assert job.last_error["kind"] == "snooze_budget_exhausted"


def test_waiting_parks_the_job_outside_the_cap_then_it_runs_again(worker, job_types):
    job_types("t.poll", _raiser(Waiting(timedelta(seconds=5), "processing", state={"c": "x1"})))
    org = OrganizationFactory(inflight_cap=1)
    job = _claim_one(worker, type="t.poll", organization=org, payload={"a": 1})

    assert worker.run_one(job) == "waiting"

    job.refresh_from_db()
    assert job.status == Job.Status.WAITING
    assert job.attempts == 0 and job.waited_s == 5
    assert job.payload == {"a": 1, "c": "x1"}
    assert seconds_from_now(job.run_at) == pytest.approx(5, abs=0.01)
    # Its seat is free: another job of the organization is claimed meanwhile.
    other = JobFactory(organization=org)
    assert [j.pk for j in worker.claim_batch()] == [other.pk]
    # Not promoted before its time; promoted after.
    assert worker.promote_waiting() == 0
    Job.objects.filter(pk=job.pk).update(run_at=db_now())
    assert worker.promote_waiting() == 1
    job.refresh_from_db()
    assert job.status == Job.Status.PENDING


def test_waiting_past_the_budget_fails_the_job(worker, job_types):
    job_types("t.poll", _raiser(Waiting(60)), wait_budget_s=100)
    job = _claim_one(worker, type="t.poll", waited_s=90)
    assert worker.run_one(job) == "failed"
    job.refresh_from_db()
    assert job.last_error["kind"] == "wait_budget_exhausted"


def test_a_job_of_an_unknown_type_fails(worker):
    job = _claim_one(worker, type="t.gone")
    assert worker.run_one(job) == "failed"
    job.refresh_from_db()
    assert job.last_error["kind"] == "unknown_type"


def test_the_start_time_is_the_claim_plus_the_wait_in_the_worker(worker):
    job = _claim_one(worker)
    job._claimed_mono -= 2.0  # as if it had waited two seconds in the worker's queue
    worker.run_one(job)
    job.refresh_from_db()
    assert (job.started_at - job.locked_at).total_seconds() == pytest.approx(2.0, abs=0.05)


# -- fencing ------------------------------------------------------------------------------


def test_a_worker_that_lost_its_lease_cannot_overwrite_the_new_owner(worker, other_worker):
    job = _claim_one(worker)
    age_heartbeat(job, worker.stale_after_s + 1)
    assert job_recover_stale(stale_s=worker.stale_after_s) == 1  # requeued
    [taken] = other_worker.claim_batch()
    assert taken.pk == job.pk and taken.lease != job.lease

    assert worker.run_one(job) == "lost"

    job.refresh_from_db()
    assert job.status == Job.Status.PROCESSING
    assert job.locked_by == "w2" and job.lease == taken.lease
    assert other_worker.run_one(taken) == "done"


def test_a_failure_is_not_written_without_the_lease(worker, other_worker, job_types):
    job_types("t.perm", _raiser(PermanentError("x", "y")))
    job = _claim_one(worker, type="t.perm")
    age_heartbeat(job, worker.stale_after_s + 1)
    job_recover_stale(stale_s=worker.stale_after_s)
    [taken] = other_worker.claim_batch()

    assert worker.run_one(job) == "lost"

    taken.refresh_from_db()
    assert taken.status == Job.Status.PROCESSING and taken.last_error["kind"] == "stale"


def test_a_lease_whose_heartbeat_went_stale_is_forfeit_before_recovery(worker):
    job = _claim_one(worker)
    age_heartbeat(job, worker.stale_after_s + 1)
    assert worker.run_one(job) == "lost"
    job.refresh_from_db()
    assert job.status == Job.Status.PROCESSING  # left for stale recovery


def test_a_handler_writes_its_outcome_only_while_holding_the_lease(worker, job_types):
    from apps.accounts.models import Organization

    def handler(job):
        # Another worker recovered the job while this one was busy.
        age_heartbeat(job, worker.stale_after_s + 1)
        job_recover_stale(stale_s=worker.stale_after_s)
        with holding_lease(job):
            Organization.objects.filter(pk=job.organization_id).update(name="written")

    job_types("t.fenced", handler)
    job = _claim_one(worker, type="t.fenced")

    assert worker.run_one(job) == "lost"

    assert Organization.objects.get(pk=job.organization_id).name != "written"
    job.refresh_from_db()
    assert job.status == Job.Status.PENDING  # as recovery left it


def test_heartbeat_refreshes_held_leases_and_reports_lost_ones(worker):
    from apps.jobs.models import WorkerProcess

    worker.register()
    org = OrganizationFactory(inflight_cap=10)
    kept, lost = JobFactory.create_batch(2, organization=org)
    worker.claim_batch()
    age_heartbeat(kept, 5)
    age_heartbeat(lost, worker.stale_after_s + 1)
    job_recover_stale(stale_s=worker.stale_after_s)

    assert worker.heartbeat() == {lost.pk}

    kept.refresh_from_db()
    assert kept.locked_at == db_now()
    row = WorkerProcess.objects.get(name="w1")
    assert row.last_seen_at >= db_now() and row.jobs_running == 2


# -- periodic jobs ------------------------------------------------------------------------


def test_a_finished_periodic_job_schedules_its_next_run(worker, job_types):
    from apps.jobs.services import ensure_periodic_jobs

    job_types("t.sweep", lambda job: None, periodic_every=timedelta(minutes=5))
    assert ensure_periodic_jobs(["t.sweep"]) == 1
    assert ensure_periodic_jobs(["t.sweep"]) == 0  # exactly one unfinished instance
    [job] = worker.claim_batch()

    assert worker.run_one(job) == "done"

    [following] = Job.objects.unfinished().filter(type="t.sweep")
    assert following.pk != job.pk
    assert following.dedupe_key == "periodic:t.sweep"
    assert seconds_from_now(following.run_at) == pytest.approx(300, abs=0.01)
    assert following.organization is None
