"""Recovery of jobs whose worker stopped heart-beating, by each type's policy."""

import pytest

from apps.jobs.models import Job
from apps.jobs.registry import StalePolicy
from apps.jobs.services import job_enqueue, job_recover_stale, job_release
from tests.factories import JobFactory
from tests.jobs.conftest import age_heartbeat, db_now


def _stale_job(worker, **fields):
    JobFactory(**fields)
    [claimed] = worker.claim_batch()
    age_heartbeat(claimed, worker.stale_after_s + 1)
    return claimed


def test_a_live_heartbeat_is_left_alone(worker):
    job = JobFactory()
    worker.claim_batch()
    age_heartbeat(job, worker.stale_after_s - 1)
    assert job_recover_stale(stale_s=worker.stale_after_s) == 0


def test_requeue_puts_it_back_without_spending_the_attempt(worker):
    job = _stale_job(worker, type="noop")

    assert worker.recover_stale() == 1

    job.refresh_from_db()
    assert job.status == Job.Status.PENDING
    assert job.attempts == 0 and job.recoveries == 1
    assert job.run_at == db_now()
    assert job.lease is None and job.locked_by == ""
    assert job.last_error["kind"] == "stale" and job.last_error["worker"] == "w1"


def test_requeue_gives_up_after_as_many_recoveries_as_attempts(worker):
    job = _stale_job(worker, type="noop", max_attempts=2, recoveries=2)
    worker.recover_stale()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert "gave up" in job.last_error["message"]


@pytest.mark.parametrize(
    ("policy", "status"),
    [(StalePolicy.CLOSE, Job.Status.CANCELLED), (StalePolicy.FAIL, Job.Status.FAILED)],
)
def test_close_and_fail_policies(worker, job_types, policy, status):
    job_types("t.policy", lambda job: None, stale_policy=policy)
    job = _stale_job(worker, type="t.policy")

    worker.recover_stale()

    job.refresh_from_db()
    assert job.status == status
    assert job.finished_at == db_now()
    assert job.last_error["kind"] == "stale"


def test_the_callback_runs_in_the_transaction_that_closes_the_job(worker, job_types):
    def reconcile(job):
        assert Job.objects.get(pk=job.pk).status == Job.Status.FAILED  # same transaction
        job_enqueue(
            type="noop",
            payload={"reconcile": job.pk},
            organization=job.organization,
            dedupe_key=f"reconcile:{job.pk}",
        )

    job_types("t.publish", lambda job: None, stale_policy=StalePolicy.CALLBACK, on_stale=reconcile)
    job = _stale_job(worker, type="t.publish")

    worker.recover_stale()

    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.last_error["kind"] == "stale"
    assert Job.objects.filter(dedupe_key=f"reconcile:{job.pk}").exists()


def test_a_failing_callback_leaves_the_job_for_a_later_pass(worker, job_types):
    def broken(job):
        job_enqueue(type="noop", payload={}, organization=job.organization, dedupe_key="r")
        raise RuntimeError("cannot reconcile now")

    job_types("t.publish", lambda job: None, stale_policy=StalePolicy.CALLBACK, on_stale=broken)
    job = _stale_job(worker, type="t.publish")

    assert worker.recover_stale() == 0

    job.refresh_from_db()
    assert job.status == Job.Status.PROCESSING
    assert job.locked_at == db_now()  # another full window before the next try
    assert not Job.objects.filter(dedupe_key="r").exists()  # rolled back with it


def test_a_closed_periodic_job_gets_its_next_run(worker, job_types):
    from datetime import timedelta

    job_types(
        "t.sweep",
        lambda job: None,
        periodic_every=timedelta(minutes=1),
        stale_policy=StalePolicy.CLOSE,
    )
    _stale_job(worker, type="t.sweep", organization=None, dedupe_key="periodic:t.sweep")

    worker.recover_stale()

    assert Job.objects.unfinished().filter(type="t.sweep").count() == 1


def test_release_recovers_a_processing_job_now_by_policy(worker):
    job = JobFactory()
    worker.claim_batch()
    assert job_release(job_ids=[job.pk]) == 1
    job.refresh_from_db()
    assert job.status == Job.Status.PENDING and job.attempts == 0


def test_a_job_of_an_unknown_type_is_failed(worker):
    job = _stale_job(worker, type="t.gone")
    worker.recover_stale()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
