"""`run_worker` as real processes against the test database: races, the cap, SIGKILL,
SIGTERM, a lost database connection, and wake-up latency.

Each test starts workers with `manage.py run_worker`, pointed at the test database, and
watches the rows they write. Every wait is bounded.
"""

import re
import signal
import time
from collections import Counter
from pathlib import Path

import pytest
from django.db import connection, transaction

from apps.jobs.models import Job, WorkerProcess
from apps.jobs.services import JobSpec, job_enqueue, job_enqueue_many
from tests.factories import OrganizationFactory
from tests.processes import WorkerProcess as WorkerChild
from tests.processes import wait_until as _wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STARTED = re.compile(r"Job (\d+) \(noop\) started")


class WorkerProc(WorkerChild):
    """A `run_worker` child process that runs only noop jobs (other apps' periodic jobs
    stay out of these tests), logging at DEBUG."""

    def __init__(self, tmp_path: Path, name: str, *args: str, **env: str) -> None:
        super().__init__(tmp_path, name, "--types", "noop", *args, **{"LOG_LEVEL": "DEBUG", **env})

    def wait_registered(self, timeout: float = 30) -> None:
        _wait_until(
            lambda: WorkerProcess.objects.filter(name=self.name).exists(),
            timeout,
            f"{self.name} to register ({self.output()})",
        )

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        return super().stop(sig, timeout)

    def started_job_ids(self) -> list[int]:
        return [int(found) for found in STARTED.findall(self.output())]


@pytest.fixture
def start_worker(tmp_path):
    procs = []

    def start(name: str, *args: str, **env: str) -> WorkerProc:
        proc = WorkerProc(tmp_path, name, *args, **env)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.kill()


def _job(pk: int) -> Job:
    return Job.objects.get(pk=pk)


def test_racing_workers_never_run_a_job_twice(start_worker):
    workers = [start_worker(f"race-{i}", "--threads", "2", "--batch-size", "25") for i in range(3)]
    for worker in workers:
        worker.wait_registered()
    orgs = OrganizationFactory.create_batch(3, inflight_cap=1000)
    with transaction.atomic():
        job_enqueue_many(JobSpec(type="noop", organization_id=orgs[i % 3].pk) for i in range(600))

    noop = Job.objects.filter(type="noop")
    _wait_until(lambda: noop.filter(status="done").count() == 600, 60, "600 jobs done")

    assert [worker.stop() for worker in workers] == [0, 0, 0]
    runs = Counter(pk for worker in workers for pk in worker.started_job_ids())
    assert set(runs) == set(noop.values_list("pk", flat=True))
    assert max(runs.values()) == 1
    assert sum(1 for worker in workers if worker.started_job_ids()) >= 2  # a real race
    assert not noop.exclude(attempts=1).exists()


def test_the_cap_holds_per_organization_across_workers(start_worker):
    workers = [start_worker(f"cap-{i}", "--threads", "4") for i in range(2)]
    for worker in workers:
        worker.wait_registered()
    capped = OrganizationFactory(inflight_cap=2)
    other = OrganizationFactory(inflight_cap=10)
    with transaction.atomic():
        job_enqueue_many(
            JobSpec(type="noop", organization_id=org.pk, payload={"sleep_s": 0.2})
            for org in (capped, other)
            for _ in range(8)
        )

    peak = {capped.pk: 0, other.pk: 0}

    def sample() -> bool:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT organization_id, count(*) FROM jobs_job WHERE status = 'processing'"
                " AND organization_id IS NOT NULL GROUP BY organization_id"
            )
            for org_id, running in cursor.fetchall():
                peak[org_id] = max(peak[org_id], running)
        return Job.objects.filter(type="noop", status="done").count() == 16

    _wait_until(sample, 60, "16 jobs done", interval=0.01)

    assert peak[capped.pk] == 2  # reached, never passed
    assert peak[other.pk] > 2  # the other organization was not held back
    assert [worker.stop() for worker in workers] == [0, 0]


def test_a_job_of_a_killed_worker_is_recovered_by_its_policy(start_worker):
    # A stale window of 4 s: heartbeats every 0.3 s keep the survivor's lease through a
    # loaded machine's stalls (a lease lost there would rightly stop it handing the job
    # back), and a killed worker's job is still recovered within seconds.
    timing = {"WORKER_HEARTBEAT_S": "0.3", "WORKER_STALE_AFTER_S": "4.0", "WORKER_GRACE_S": "0.2"}
    doomed = start_worker("doomed", **timing)
    doomed.wait_registered()
    org = OrganizationFactory()
    pk = job_enqueue(type="noop", payload={"sleep_s": 60}, organization=org).pk
    _wait_until(lambda: _job(pk).status == "processing", 20, "the job to start")

    doomed.stop(signal.SIGKILL)
    killed_at = time.monotonic()
    survivor = start_worker("survivor", **timing)

    # noop's policy is REQUEUE: back to pending without spending the attempt, then the
    # surviving worker claims it again.
    _wait_until(lambda: _job(pk).locked_by == "survivor", 30, "the survivor to take the job")
    recovered_after = time.monotonic() - killed_at
    job = _job(pk)
    assert job.status == "processing"
    assert job.recoveries == 1 and job.attempts == 1
    assert job.last_error["kind"] == "stale" and job.last_error["worker"] == "doomed"
    assert recovered_after < 15  # the 4 s window, plus the survivor's start-up
    # Its grace period over, the survivor hands the still-running job back by policy too.
    assert survivor.stop() == 0
    job = _job(pk)
    assert job.status == "pending" and job.attempts == 0 and job.recoveries == 2


def test_sigterm_finishes_running_jobs_releases_the_rest_and_exits_0(start_worker):
    worker = start_worker("graceful", "--threads", "1", "--batch-size", "2")
    worker.wait_registered()
    org = OrganizationFactory()
    with transaction.atomic():
        first = job_enqueue(type="noop", payload={"sleep_s": 1.0}, organization=org).pk
        second = job_enqueue(type="noop", payload={"sleep_s": 1.0}, organization=org).pk
    both = Job.objects.filter(pk__in=[first, second], status="processing")
    _wait_until(lambda: both.count() == 2, 20, "both claimed")

    stopping = time.monotonic()
    assert worker.stop() == 0
    assert time.monotonic() - stopping < 10

    assert _job(first).status == "done"
    released = _job(second)
    assert released.status == "pending" and released.attempts == 0 and released.lease is None
    assert WorkerProcess.objects.get(name="graceful").stopped_at is not None


def test_a_job_still_running_after_the_grace_period_is_recovered(start_worker):
    worker = start_worker("impatient", WORKER_GRACE_S="0.3")
    worker.wait_registered()
    pk = job_enqueue(type="noop", payload={"sleep_s": 60}, organization=OrganizationFactory()).pk
    _wait_until(lambda: _job(pk).status == "processing", 20, "the job to start")

    stopping = time.monotonic()
    assert worker.stop() == 0
    assert time.monotonic() - stopping < 10
    job = _job(pk)
    assert job.status == "pending" and job.attempts == 0


def test_it_survives_losing_its_database_connections(start_worker):
    worker = start_worker("resilient")
    worker.wait_registered()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        assert cursor.fetchone()[0] >= 1

    pk = job_enqueue(type="noop", payload={}, organization=OrganizationFactory()).pk

    _wait_until(lambda: _job(pk).status == "done", 30, "the job to run after reconnecting")
    assert worker.proc.poll() is None
    assert "Database unavailable" in worker.output()
    assert worker.stop() == 0


def test_notify_and_timers_wake_an_idle_worker_at_once(start_worker):
    # With a 30 s poll, only NOTIFY (immediate jobs) and the next-run_at timer (scheduled
    # jobs) can make these start quickly.
    worker = start_worker("sleepy", WORKER_POLL_S="30")
    worker.wait_registered()
    org = OrganizationFactory()
    time.sleep(0.3)  # let the worker settle into its idle wait
    now = job_enqueue(type="noop", payload={}, organization=org).pk
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp() + interval '1 second'")
        due = cursor.fetchone()[0]
    later = job_enqueue(type="noop", payload={}, organization=org, run_at=due).pk

    _wait_until(lambda: _job(later).status == "done", 20, "the scheduled job")

    immediate = _job(now)
    assert (immediate.started_at - immediate.created_at).total_seconds() < 1.0
    scheduled = _job(later)
    assert 0 <= (scheduled.started_at - scheduled.run_at).total_seconds() < 0.5
    assert worker.stop() == 0
