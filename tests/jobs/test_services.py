"""Enqueue, dedupe, cancel, retry, leases and pruning."""

from datetime import timedelta

import pytest
from django.db import connection, transaction

from apps.common.errors import ValidationFailed
from apps.jobs.errors import LeaseLost
from apps.jobs.models import Job, WorkerProcess
from apps.jobs.services import (
    JobSpec,
    holding_lease,
    job_cancel,
    job_enqueue,
    job_enqueue_many,
    job_retry_now,
    jobs_prune_finished,
    lease_is_held,
)
from tests.factories import JobFactory, OrganizationFactory, WorkspaceFactory
from tests.jobs.conftest import age_heartbeat, db_now


def test_enqueue_adds_a_pending_job_due_now_on_the_database_clock(db):
    workspace = WorkspaceFactory()

    job = job_enqueue(type="noop", payload={"x": 1}, organization=None, workspace=workspace)

    assert job.pk is not None
    job.refresh_from_db()
    assert job.status == Job.Status.PENDING
    assert job.organization_id == workspace.organization_id
    assert job.workspace_id == workspace.pk
    assert job.payload == {"x": 1}
    assert job.run_at == db_now()
    assert job.attempts == 0 and job.max_attempts == 5  # the type's default


def test_enqueue_takes_run_at_and_max_attempts(db):
    org = OrganizationFactory()
    later = db_now() + timedelta(hours=2)
    job = job_enqueue(type="noop", payload={}, organization=org, run_at=later, max_attempts=2)
    assert job.run_at == later and job.max_attempts == 2


def test_enqueue_inside_a_rolled_back_transaction_creates_nothing(db):
    org = OrganizationFactory()
    with pytest.raises(RuntimeError), transaction.atomic():
        job_enqueue(type="noop", payload={}, organization=org)
        raise RuntimeError("the caller's transaction fails")
    assert not Job.objects.exists()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"type": "no.such.type"}, "Unknown job type"),
        ({"payload": ["not", "a", "dict"]}, "JSON object"),
        ({"payload": {"when": object()}}, "JSON-serializable"),
        ({"max_attempts": 0}, "max_attempts"),
        ({"dedupe_key": "k" * 256}, "dedupe_key"),
    ],
)
def test_enqueue_refuses_invalid_jobs(db, changes, message):
    org = OrganizationFactory()
    arguments = {"type": "noop", "payload": {}, "organization": org, **changes}
    with pytest.raises(ValidationFailed, match=message):
        job_enqueue(**arguments)


def test_enqueue_refuses_a_naive_run_at_and_a_foreign_workspace(db):
    org = OrganizationFactory()
    with pytest.raises(ValidationFailed, match="aware"):
        job_enqueue(type="noop", payload={}, organization=org, run_at=db_now().replace(tzinfo=None))
    with pytest.raises(ValidationFailed, match="workspace"):
        job_enqueue(type="noop", payload={}, organization=org, workspace=WorkspaceFactory())


def test_a_dedupe_key_held_by_an_unfinished_job_returns_that_job(db):
    org = OrganizationFactory()
    first = job_enqueue(type="noop", payload={"v": 1}, organization=org, dedupe_key="k")

    second = job_enqueue(type="noop", payload={"v": 2}, organization=org, dedupe_key="k")

    assert second.pk == first.pk
    assert second.payload == {"v": 1}
    assert Job.objects.count() == 1


def test_a_dedupe_key_is_free_again_once_its_job_finished(db):
    org = OrganizationFactory()
    first = job_enqueue(type="noop", payload={}, organization=org, dedupe_key="k")
    Job.objects.filter(pk=first.pk).update(status=Job.Status.DONE)

    second = job_enqueue(type="noop", payload={}, organization=org, dedupe_key="k")

    assert second.pk != first.pk


def test_enqueue_many_skips_held_dedupe_keys(db):
    org = OrganizationFactory()
    job_enqueue(type="noop", payload={}, organization=org, dedupe_key="a")
    specs = [
        JobSpec(type="noop", organization_id=org.pk, dedupe_key="a"),
        JobSpec(type="noop", organization_id=org.pk, dedupe_key="b"),
        JobSpec(type="noop", organization_id=org.pk, dedupe_key="b"),
        JobSpec(type="noop", organization_id=org.pk, payload={"n": 1}),
    ]

    assert job_enqueue_many(specs, chunk_size=2) == 2

    assert Job.objects.count() == 3
    assert Job.objects.get(payload={"n": 1}).run_at == db_now()


def test_cancel_by_id_or_dedupe_key_only_while_pending_or_waiting(db):
    pending = JobFactory(dedupe_key="p")
    waiting = JobFactory(status=Job.Status.WAITING)
    running = JobFactory(status=Job.Status.PROCESSING, lease="00000000-0000-0000-0000-000000000001")

    assert job_cancel(dedupe_key="p", reason="post deleted") is True
    assert job_cancel(job_id=waiting.pk) is True
    assert job_cancel(job_id=running.pk) is False
    assert job_cancel(job_id=pending.pk) is False  # already cancelled

    pending.refresh_from_db()
    assert pending.status == Job.Status.CANCELLED
    assert pending.last_error == {"kind": "cancelled", "message": "post deleted"}
    with pytest.raises(ValueError):
        job_cancel()


def test_retry_now_gives_a_failed_job_one_more_attempt(db):
    failed = JobFactory(
        status=Job.Status.FAILED,
        attempts=5,
        max_attempts=5,
        run_at=db_now() + timedelta(days=1),
        finished_at=db_now(),
    )
    done = JobFactory(status=Job.Status.DONE)

    assert job_retry_now(job_ids=[failed.pk, done.pk]) == 1

    failed.refresh_from_db()
    assert failed.status == Job.Status.PENDING
    assert failed.run_at == db_now() and failed.finished_at is None
    assert failed.max_attempts == 6


def test_retry_now_leaves_a_failed_job_whose_key_was_taken(db):
    failed = JobFactory(status=Job.Status.FAILED, dedupe_key="k")
    JobFactory(status=Job.Status.PENDING, dedupe_key="k")
    assert job_retry_now(job_ids=[failed.pk]) == 0


def test_lease_is_held_only_by_the_current_claim(worker, settings):
    settings.WORKER_STALE_AFTER_S = worker.stale_after_s
    job = JobFactory()
    [claimed] = worker.claim_batch()
    with transaction.atomic():
        assert lease_is_held(claimed) is True
    stale_copy = Job.objects.get(pk=job.pk)
    stale_copy.lease = "00000000-0000-0000-0000-000000000009"
    with transaction.atomic():
        assert lease_is_held(stale_copy) is False
    age_heartbeat(job, worker.stale_after_s + 1)
    with transaction.atomic():
        assert lease_is_held(claimed) is False
    with pytest.raises(LeaseLost), holding_lease(claimed):
        pass


def test_lease_is_held_must_run_in_a_transaction(worker, settings):
    JobFactory()
    [claimed] = worker.claim_batch()
    connection.in_atomic_block, saved = False, connection.in_atomic_block
    try:
        with pytest.raises(RuntimeError):
            lease_is_held(claimed)
    finally:
        connection.in_atomic_block = saved


def test_prune_deletes_finished_jobs_past_retention_only(db, settings):
    settings.JOB_RETENTION_DAYS = 7
    old = db_now() - timedelta(days=8)
    recent = db_now() - timedelta(days=6)
    gone = JobFactory(status=Job.Status.DONE, finished_at=old)
    JobFactory(status=Job.Status.FAILED, finished_at=old)
    kept_recent = JobFactory(status=Job.Status.DONE, finished_at=recent)
    kept_unfinished = JobFactory(status=Job.Status.PENDING)
    Job.objects.update(created_at=old)
    WorkerProcess.objects.create(name="gone", host="h", pid=1)
    WorkerProcess.objects.update(last_seen_at=old)

    assert jobs_prune_finished(chunk=1) == 2

    assert not Job.objects.filter(pk=gone.pk).exists()
    assert set(Job.objects.values_list("pk", flat=True)) == {kept_recent.pk, kept_unfinished.pk}
    assert not WorkerProcess.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_workers_are_notified_when_the_enqueuing_transaction_commits_only():
    import select

    from apps.jobs.listener import Listener

    org = OrganizationFactory()
    listener = Listener()
    listener.connect()
    try:
        with pytest.raises(RuntimeError), transaction.atomic():
            job_enqueue(type="noop", payload={}, organization=org)
            raise RuntimeError("rolled back")
        select.select([listener.fileno()], [], [], 0.2)
        assert listener.drain() == 0

        with transaction.atomic():
            job_enqueue(type="noop", payload={}, organization=org)
            select.select([listener.fileno()], [], [], 0.2)
            assert listener.drain() == 0  # not before the commit
        readable, _, _ = select.select([listener.fileno()], [], [], 5)
        assert readable and listener.drain() == 1
    finally:
        listener.close()
