"""The worker's loop in this process: a pool of threads with their own connections, so
the rows are committed (transactional test)."""

from datetime import timedelta

import pytest
from django.db import transaction

from apps.jobs.errors import RetryableError
from apps.jobs.models import Job, WorkerProcess
from apps.jobs.queue import fleet_allow
from apps.jobs.registry import Backoff
from apps.jobs.services import JobSpec, job_enqueue_many
from apps.jobs.worker import Worker
from tests.factories import OrganizationFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _worker(**options):
    defaults = {
        "threads": 2,
        "batch_size": 8,
        "poll_s": 0.05,
        "heartbeat_s": 1,
        "stale_after_s": 30,
        "grace_s": 1,
        "name": "loop",
    }
    return Worker(**{**defaults, **options})


def test_a_burst_runs_everything_due_then_stops(job_types):
    ran = []
    job_types("t.record", lambda job: ran.append(job.payload["n"]))
    orgs = OrganizationFactory.create_batch(2, inflight_cap=3)
    with transaction.atomic():
        job_enqueue_many(
            JobSpec(type="t.record", organization_id=orgs[n % 2].pk, payload={"n": n})
            for n in range(40)
        )

    worker = _worker(types=["t.record"])
    worker.run(burst=True)

    assert sorted(ran) == list(range(40))
    assert Job.objects.filter(type="t.record", status="done").count() == 40
    assert worker.jobs_done == 40
    row = WorkerProcess.objects.get(name="loop")
    assert row.stopped_at is not None and row.jobs_done == 40


def test_a_failing_handler_is_retried_later_and_the_loop_carries_on(job_types, monkeypatch):
    monkeypatch.setattr("random.uniform", lambda low, high: high / 2)  # the jitter
    job_types(
        "t.broken",
        lambda job: 1 / 0,
        backoff=Backoff(base_s=30, cap_s=60),
    )
    job_types("t.ok", lambda job: None)
    org = OrganizationFactory()
    with transaction.atomic():
        job_enqueue_many(
            [
                JobSpec(type="t.broken", organization_id=org.pk),
                JobSpec(type="t.ok", organization_id=org.pk),
            ]
        )

    worker = _worker()
    worker.run(burst=True)  # returns: the failed job is not due again for a while

    broken = Job.objects.get(type="t.broken")
    assert broken.status == "pending" and broken.attempts == 1
    assert broken.last_error["kind"] == "errored"
    assert (broken.run_at - broken.updated_at).total_seconds() == pytest.approx(15, abs=0.5)
    assert Job.objects.get(type="t.ok").status == "done"


def test_once_runs_a_single_batch(job_types):
    job_types("t.ok", lambda job: None)
    org = OrganizationFactory(inflight_cap=100)
    with transaction.atomic():
        job_enqueue_many(JobSpec(type="t.ok", organization_id=org.pk) for _ in range(12))

    _worker(batch_size=5, types=["t.ok"]).run(once=True)

    # One batch: all one organization may hold of this lone worker's five (a fleet this
    # small keeps no seat in reserve, see queue.fleet_allow).
    taken = fleet_allow(capacity=5, workers=1, due_orgs=1)
    assert taken == 5
    assert Job.objects.filter(type="t.ok", status="done").count() == taken
    assert Job.objects.filter(type="t.ok", status="pending").count() == 12 - taken


def test_retryable_errors_honour_retry_after_through_the_loop(job_types):
    job_types(
        "t.limited",
        lambda job: (_ for _ in ()).throw(
            RetryableError("rate_limited", "429", retry_at=timedelta(seconds=90))
        ),
        retry_kinds={"rate_limited"},
        backoff=Backoff(base_s=1, cap_s=2),
    )
    org = OrganizationFactory()
    with transaction.atomic():
        job_enqueue_many([JobSpec(type="t.limited", organization_id=org.pk)])

    _worker(types=["t.limited"]).run(burst=True)

    job = Job.objects.get(type="t.limited")
    assert job.status == "pending"
    assert 89 <= (job.run_at - job.updated_at).total_seconds() <= 91
