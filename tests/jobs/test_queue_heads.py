"""Queue heads: the claim reads only organizations with work due, organizations take
turns, and one organization never holds more than its share of the fleet while another
waits (apps.jobs.models.QueueHead, apps.jobs.queue)."""

import threading
import time
from datetime import timedelta

import psycopg
import pytest
from django.db import connection

from apps.jobs import queue
from apps.jobs.models import Job, QueueHead, WorkerProcess
from apps.jobs.services import JobSpec, job_enqueue_many
from tests.factories import JobFactory, OrganizationFactory
from tests.jobs.conftest import db_now


def _head(org, seat="publish"):
    return QueueHead.objects.get(organization=org, seat=seat).next_run_at


def _done(jobs):
    Job.objects.filter(pk__in=[job.pk for job in jobs]).update(status="done")


def test_a_head_follows_the_earliest_pending_job_on_every_path(worker):
    org = OrganizationFactory(inflight_cap=100)
    now = db_now()
    later = JobFactory(organization=org, run_at=now + timedelta(hours=2))
    assert _head(org) == later.run_at

    # Enqueued earlier (one statement for many jobs, in descending order): lowered.
    job_enqueue_many(
        JobSpec(type="noop", organization_id=org.pk, run_at=now - timedelta(seconds=s))
        for s in range(1, 50)
    )
    assert _head(org) == now - timedelta(seconds=49)

    # Claimed: raised to the earliest job left.
    assert len(worker.claim_batch(limit=100)) == 49
    assert _head(org) == later.run_at

    # A job made pending again earlier (a retry, a release, an operator's retry): lowered.
    retried = Job.objects.filter(organization=org, status="processing").first()
    Job.objects.filter(pk=retried.pk).update(status="pending", run_at=now + timedelta(minutes=5))
    assert _head(org) == now + timedelta(minutes=5)

    # Rescheduled later while pending: the head may stay early (never later than a job).
    Job.objects.filter(pk=later.pk).update(run_at=now + timedelta(hours=3))
    assert _head(org) <= now + timedelta(minutes=5)


def test_the_claim_reads_only_due_heads_whatever_the_organizations_with_future_work(worker):
    due_org = OrganizationFactory()
    JobFactory(organization=due_org)
    with connection.cursor() as cursor:
        # Statistics from before the idle organizations came (they lag behind in life).
        cursor.execute("ANALYZE accounts_organization")
        cursor.execute("ANALYZE jobs_queuehead")
    idle = OrganizationFactory.create_batch(300)
    job_enqueue_many(
        JobSpec(type="noop", organization_id=org.pk, run_at=db_now() + timedelta(days=d))
        for org in idle
        for d in (1, 2, 3)
    )
    with connection.cursor() as cursor:
        cursor.execute(queue._SESSION_SQL)
        cursor.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + queue._DUE_ORGS_SQL.format(type_filter=""),
            {"ns": 1, "heads_ns": 2, "stripes": 1024, "max_orgs": 16, "stale_s": 10.0, "types": []},
        )
        [[[plan]]] = cursor.fetchall()

    def nodes(node):
        yield node
        for child in node.get("Plans", ()):
            yield from nodes(child)

    heads = [n for n in nodes(plan["Plan"]) if n.get("Relation Name") == "jobs_queuehead"]
    assert heads and all(n["Node Type"] != "Seq Scan" for n in heads), heads
    assert "queue_head_due" in {n.get("Index Name") for n in nodes(plan["Plan"])}
    # The one due head, not the 300 organizations' heads days ahead, and its organization
    # looked up alone (not a hash of every organization).
    assert sum(n["Actual Rows"] * n["Actual Loops"] for n in heads) == 1
    orgs = [n for n in nodes(plan["Plan"]) if n.get("Relation Name") == "accounts_organization"]
    assert orgs and sum(n["Actual Rows"] * n["Actual Loops"] for n in orgs) == 1, orgs
    assert not [
        n
        for n in nodes(plan["Plan"])
        if n.get("Relation Name") == "jobs_job" and n["Node Type"] == "Seq Scan"
    ]


def test_due_organizations_take_turns_when_seats_are_scarce(worker):
    first, second, third = (OrganizationFactory(inflight_cap=100) for _ in range(3))
    now = db_now()
    JobFactory.create_batch(5, organization=first, run_at=now - timedelta(minutes=5))
    JobFactory(organization=second, run_at=now - timedelta(minutes=1))
    JobFactory(organization=third, run_at=now - timedelta(seconds=30))

    served = []
    for _ in range(4):  # one seat at a time, each job over before the next claim
        [job] = worker.claim_batch(limit=1)
        served.append(job.organization_id)
        _done([job])

    # The earliest backlog does not keep every seat: each organization in its turn.
    assert served == [first.pk, second.pk, third.pk, first.pk]


def test_one_organization_holds_no_more_than_its_share_of_the_fleet_while_another_waits(
    worker,
):
    # One live worker holding 10 jobs at most: the fleet.
    WorkerProcess.objects.create(name="w1", host="h", pid=1, threads=1)
    hanging = OrganizationFactory(inflight_cap=100)
    JobFactory.create_batch(20, organization=hanging, run_at=db_now() - timedelta(minutes=1))

    # Alone, it may take all but the reserve (its requests then hang, holding them).
    assert len(worker.claim_batch()) == queue.fleet_allow(capacity=10, workers=1, due_orgs=1)
    assert queue.fleet_allow(capacity=10, workers=1, due_orgs=1) == 9

    # Another organization's post falls due: it starts at once, though the first one's
    # backlog is older and seats are free for it.
    other = OrganizationFactory(inflight_cap=100)
    waiting = JobFactory(organization=other)
    assert [job.pk for job in worker.claim_batch()] == [waiting.pk]


def test_fleet_share():
    assert queue.fleet_allow(capacity=8, workers=0, due_orgs=5) > 10**6  # none registered
    assert queue.fleet_allow(capacity=8, workers=1, due_orgs=1) == 7  # one kept in reserve
    assert queue.fleet_allow(capacity=8, workers=1, due_orgs=2) == 4
    assert queue.fleet_allow(capacity=8, workers=4, due_orgs=3) == 10  # 28 shared by 3
    assert queue.fleet_allow(capacity=2, workers=1, due_orgs=1) == 2  # too small to reserve
    assert queue.fleet_allow(capacity=4, workers=1, due_orgs=3) == 2  # no thread kept idle
    assert queue.fleet_allow(capacity=8, workers=1, due_orgs=100) == 1


@pytest.mark.django_db(transaction=True)
def test_a_head_is_never_raised_past_a_job_being_enqueued(worker):
    org = OrganizationFactory(inflight_cap=100)
    first = JobFactory(organization=org)
    params = connection.get_connection_params()
    for key in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(key, None)
    with psycopg.connect(**params) as enqueuer:
        # Another transaction is enqueueing a due job of the organization...
        cursor = enqueuer.execute(
            "INSERT INTO jobs_job (organization_id, type, seat, payload, status, run_at,"
            " attempts, max_attempts, locked_by, recoveries, snoozed_s, waited_s,"
            " created_at, updated_at)"
            " VALUES (%s, 'noop', 'publish', '{}', 'pending', now() - interval '1 second',"
            " 0, 5, '', 0, 0, 0, now(), now()) RETURNING id",
            [org.pk],
        )
        [(second_id,)] = cursor.fetchall()
        # ...while a claim takes the one it can see: the head stays (raising it past
        # the job this claim cannot see yet would leave that job unclaimed for good).
        assert [job.pk for job in worker.claim_batch()] == [first.pk]
        assert _head(org) is not None
        enqueuer.commit()

    assert [job.pk for job in worker.claim_batch()] == [second_id]
    assert _head(org) is None


def test_enqueueing_for_many_organizations_holds_a_bounded_number_of_locks(db):
    from apps.accounts.models import Organization
    from apps.jobs.constants import HEADS_LOCK_STRIPES

    orgs = Organization.objects.bulk_create(
        Organization(name=f"o{i}", slug=f"many-{i}") for i in range(HEADS_LOCK_STRIPES + 500)
    )
    job_enqueue_many(JobSpec(type="noop", organization_id=org.pk) for org in orgs)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory'"
        )
        [(held,)] = cursor.fetchall()
    # One per stripe, not one per organization (the lock table has room for a few
    # thousand locks across every session).
    assert held == HEADS_LOCK_STRIPES
    assert QueueHead.objects.filter(next_run_at__isnull=False).count() == len(orgs)


def test_a_suspended_organizations_heads_are_parked_until_it_is_active_again(worker):
    from apps.accounts.models import Organization

    org = OrganizationFactory(state=Organization.State.SUSPENDED)
    now = db_now()
    early = JobFactory(organization=org, run_at=now - timedelta(minutes=5))
    other = OrganizationFactory()

    result = queue.claim(worker="w", limit=10, stale_s=10, types=None)
    # Its jobs wait, and it is not counted as due work another worker holds.
    assert result.jobs == [] and not result.contended and not result.found_due
    assert _head(org) is None  # parked: no later claim reads it
    # A job enqueued while it is suspended lowers the head again, later than the first;
    # the next claim parks it again.
    JobFactory(organization=org, run_at=now - timedelta(minutes=1))
    assert queue.claim(worker="w", limit=10, stale_s=10, types=None).jobs == []
    assert _head(org) is None
    # Other organizations are not held up meanwhile.
    JobFactory(organization=other)
    assert [j.organization_id for j in worker.claim_batch()] == [other.pk]

    # Active again: the head is back at its earliest pending job, and both are claimed.
    Organization.objects.filter(pk=org.pk).update(state=Organization.State.ACTIVE)
    assert _head(org) == early.run_at
    assert {j.organization_id for j in worker.claim_batch()} == {org.pk}
    assert Job.objects.filter(organization=org, status="processing").count() == 2


def test_a_burst_worker_ends_while_a_suspended_organization_has_due_jobs(db):
    from apps.accounts.models import Organization
    from apps.jobs.worker import Worker

    org = OrganizationFactory(state=Organization.State.SUSPENDED)
    JobFactory(organization=org)
    worker = Worker(threads=1, batch_size=10, poll_s=0.05, heartbeat_s=1, stale_after_s=30)
    # Run here (its connection sees this test's rows); stopped after 10 s if it never ends.
    watchdog = threading.Timer(10, worker.request_stop)
    watchdog.start()
    started = time.monotonic()
    try:
        worker.run(burst=True)
    finally:
        watchdog.cancel()
    assert time.monotonic() - started < 5  # it ended: nothing it may run is due
    assert Job.objects.get(organization=org).status == "pending"
