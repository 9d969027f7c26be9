"""Wall-clock limits per job type: a handler past its `time_limit_s` has its job settled by
the type's stale policy (kind "timed_out") under the claim's lease, its thread is replaced,
and whatever it does afterwards is discarded; the worker stays healthy."""

import threading
import time

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from apps.jobs import registry
from apps.jobs.constants import DEFAULT_TIME_LIMIT_S
from apps.jobs.errors import TimeLimitExceeded
from apps.jobs.models import Job
from apps.jobs.registry import StalePolicy
from apps.jobs.services import job_enqueue
from apps.jobs.worker import Worker
from tests.factories import OrganizationFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _worker(**options):
    defaults = {
        "threads": 1,
        "batch_size": 4,
        "poll_s": 0.05,
        "heartbeat_s": 1,
        "stale_after_s": 30,
        "grace_s": 1,
        "name": "limits",
    }
    return Worker(**{**defaults, **options})


def _enqueue(type_name: str, org) -> Job:
    with transaction.atomic():
        return job_enqueue(type=type_name, payload={}, organization=org)


def _wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_every_type_has_a_time_limit_with_a_default():
    types = registry.job_types()
    assert types and all(t.time_limit_s > 0 for t in types.values())
    assert types["jobs.prune"].time_limit_s == DEFAULT_TIME_LIMIT_S


def test_a_time_limit_must_be_positive():
    with pytest.raises(ImproperlyConfigured, match="time_limit_s"):
        registry.job_type("t.bad_limit", time_limit_s=0)


@pytest.fixture
def stuck(job_types):
    """A handler that blocks (in C, out of reach of the interruption) until released."""
    release = threading.Event()
    started = threading.Event()
    after = []

    def handler(job):
        after.append(threading.current_thread())
        started.set()
        release.wait(10)  # a blocking call: the interruption waits for it to return

    return release, started, after, handler


def test_a_handler_past_its_limit_is_requeued_and_its_late_result_discarded(job_types, stuck):
    release, started, after, handler = stuck
    job_types("t.stuck", handler, time_limit_s=0.2, stale_policy=StalePolicy.REQUEUE)
    ran = []
    job_types("t.ok", lambda job: ran.append(job.pk))
    org = OrganizationFactory()
    job = _enqueue("t.stuck", org)
    worker = _worker(types=["t.stuck", "t.ok"])
    worker._pool.start()
    try:
        [claimed] = worker.claim_batch()
        worker._pool.submit(claimed)
        assert started.wait(5)
        assert worker.expire_overdue() == []  # not yet past the limit
        time.sleep(0.25)
        assert worker.expire_overdue() == [job.pk]

        job.refresh_from_db()
        assert job.status == "pending" and job.attempts == 0 and job.lease is None
        assert job.last_error["kind"] == "timed_out"
        assert job.last_error["time_limit_s"] == 0.2
        assert "0.2s time limit" in job.last_error["message"]

        # A fresh thread took the stuck one's place: other work runs at once.
        ok = _enqueue("t.ok", org)
        Job.objects.filter(pk=job.pk).update(run_at=job.run_at.replace(year=2100))
        for claimed_ok in worker.claim_batch():
            worker._pool.submit(claimed_ok)
        assert _wait_for(lambda: ran == [ok.pk] and len(worker._pool._results) == 1)
        worker._collect_results()
        worker._flush_done(force=True)

        release.set()  # the stuck handler's wait ends: the interruption lands...
        assert _wait_for(lambda: not after[0].is_alive())  # ...and its thread exits
        worker._collect_results()
        job.refresh_from_db()
        assert job.status == "pending"  # ...and its "done" is never written
        assert Job.objects.get(pk=ok.pk).status == "done"
        assert worker.jobs_done == 1
    finally:
        release.set()
        worker._pool.stop()


def test_a_timed_out_job_with_a_fail_policy_fails(job_types, stuck):
    release, started, _, handler = stuck
    job_types("t.stuck_fail", handler, time_limit_s=0.1, stale_policy=StalePolicy.FAIL)
    job = _enqueue("t.stuck_fail", OrganizationFactory())
    worker = _worker()
    worker._pool.start()
    try:
        [claimed] = worker.claim_batch()
        worker._pool.submit(claimed)
        assert started.wait(5)
        time.sleep(0.15)
        assert worker.expire_overdue() == [job.pk]
        job.refresh_from_db()
        assert (job.status, job.last_error["kind"]) == ("failed", "timed_out")
    finally:
        release.set()
        worker._pool.stop()


def test_the_stale_callback_runs_for_a_timed_out_job(job_types, stuck):
    release, started, _, handler = stuck
    called = []
    job_types(
        "t.stuck_cb",
        handler,
        time_limit_s=0.1,
        stale_policy=StalePolicy.CALLBACK,
        on_stale=lambda job: called.append((job.pk, job.last_error["kind"])),
    )
    job = _enqueue("t.stuck_cb", OrganizationFactory())
    worker = _worker()
    worker._pool.start()
    try:
        [claimed] = worker.claim_batch()
        worker._pool.submit(claimed)
        assert started.wait(5)
        time.sleep(0.15)
        worker.expire_overdue()
        assert called == [(job.pk, "timed_out")]
    finally:
        release.set()
        worker._pool.stop()


def test_a_handler_spinning_in_python_is_interrupted(job_types):
    seen = []

    def spin(job):
        try:
            while True:
                sum(range(100))
        except TimeLimitExceeded:
            seen.append("interrupted")
            raise

    job_types("t.spin", spin, time_limit_s=0.1)
    job = _enqueue("t.spin", OrganizationFactory())
    worker = _worker()
    worker._pool.start()
    try:
        [claimed] = worker.claim_batch()
        worker._pool.submit(claimed)
        time.sleep(0.15)
        assert _wait_for(lambda: worker.expire_overdue() == [job.pk] or seen)
        assert _wait_for(lambda: seen == ["interrupted"])
        assert _wait_for(lambda: sum(t.is_alive() for t in worker._pool._threads) == 1)
    finally:
        worker._pool.stop()


def test_a_job_whose_lease_was_taken_over_is_left_to_its_new_holder(job_types, stuck):
    release, started, _, handler = stuck
    job_types("t.stuck_lost", handler, time_limit_s=0.1)
    job = _enqueue("t.stuck_lost", OrganizationFactory())
    worker = _worker()
    worker._pool.start()
    try:
        [claimed] = worker.claim_batch()
        worker._pool.submit(claimed)
        assert started.wait(5)
        # Another worker recovered and re-claimed it meanwhile: a different lease.
        Job.objects.filter(pk=job.pk).update(lease="00000000-0000-0000-0000-000000000001")
        time.sleep(0.15)
        assert worker.expire_overdue() == []
        job.refresh_from_db()
        assert job.status == "processing"
        assert str(job.lease) == "00000000-0000-0000-0000-000000000001"
    finally:
        release.set()
        worker._pool.stop()


def test_the_loop_enforces_limits_and_finishes_a_burst(job_types):
    seen = []

    def spin(job):
        while True:
            try:
                time.sleep(0.01)
            except TimeLimitExceeded:
                seen.append(job.pk)
                raise

    job_types("t.loop_spin", spin, time_limit_s=0.2, stale_policy=StalePolicy.FAIL)
    job_types("t.loop_ok", lambda job: None)
    org = OrganizationFactory()
    slow = _enqueue("t.loop_spin", org)
    fine = _enqueue("t.loop_ok", org)
    worker = _worker(threads=2)
    started = time.monotonic()
    worker.run(burst=True)
    assert time.monotonic() - started < 5
    assert Job.objects.get(pk=slow.pk).status == "failed"
    assert Job.objects.get(pk=slow.pk).last_error["kind"] == "timed_out"
    assert Job.objects.get(pk=fine.pk).status == "done"
    # The interruption lands when the retired thread next runs; the loop need not wait.
    assert _wait_for(lambda: seen == [slow.pk])
