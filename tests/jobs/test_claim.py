from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts.models import Organization
from apps.jobs.models import Job
from apps.jobs.services import job_enqueue
from tests.factories import JobFactory, OrganizationFactory, WorkspaceFactory
from tests.jobs.conftest import age_heartbeat, db_now

# Parameters of the claim's first statement, for EXPLAIN.
DUE_PARAMS = {"ns": 1, "heads_ns": 2, "stripes": 1024, "max_orgs": 16, "stale_s": 10.0, "types": []}


def test_it_claims_due_jobs_in_run_at_order(worker):
    org = OrganizationFactory(inflight_cap=100)
    now = db_now()
    late = JobFactory(organization=org, run_at=now - timedelta(seconds=1))
    early = JobFactory(organization=org, run_at=now - timedelta(seconds=30))
    JobFactory(organization=org, run_at=now + timedelta(seconds=30))  # not due

    claimed = worker.claim_batch()

    assert [job.pk for job in claimed] == [early.pk, late.pk]
    early.refresh_from_db()
    assert early.status == Job.Status.PROCESSING
    assert early.attempts == 1
    assert early.locked_by == "w1"
    assert early.locked_at == early.started_at == now
    assert early.lease is not None and early.lease == claimed[0].lease


def test_it_gives_a_fresh_lease_per_claim(worker):
    job = JobFactory()
    first = worker.claim_batch()[0].lease
    Job.objects.filter(pk=job.pk).update(status="pending", lease=None)
    second = worker.claim_batch()[0].lease
    assert first != second


def test_it_claims_at_most_the_limit(worker):
    org = OrganizationFactory(inflight_cap=100)
    JobFactory.create_batch(5, organization=org)
    assert len(worker.claim_batch(limit=3)) == 3
    assert len(worker.claim_batch(limit=3)) == 2
    assert worker.claim_batch(limit=3) == []


def test_it_never_claims_a_job_twice(worker, other_worker):
    JobFactory.create_batch(4, organization=OrganizationFactory(inflight_cap=100))
    a = {job.pk for job in worker.claim_batch(limit=2)}
    b = {job.pk for job in other_worker.claim_batch(limit=10)}
    assert len(a) == 2 and len(b) == 2 and not a & b


def test_the_cap_counts_processing_jobs_of_the_organization(worker):
    org = OrganizationFactory(inflight_cap=3)
    JobFactory(
        organization=org,
        status="processing",
        lease="00000000-0000-0000-0000-000000000001",
        locked_at=db_now(),
    )
    JobFactory.create_batch(5, organization=org)

    assert len(worker.claim_batch()) == 2
    assert worker.claim_batch() == []


def test_waiting_jobs_do_not_count_against_the_cap(worker):
    org = OrganizationFactory(inflight_cap=2)
    JobFactory.create_batch(3, organization=org, status="waiting")
    JobFactory.create_batch(3, organization=org)
    assert len(worker.claim_batch()) == 2


def test_a_processing_job_with_a_stale_heartbeat_does_not_count(worker):
    org = OrganizationFactory(inflight_cap=1)
    stale = JobFactory(
        organization=org, status="processing", lease="00000000-0000-0000-0000-000000000001"
    )
    age_heartbeat(stale, worker.stale_after_s + 1)
    JobFactory(organization=org)
    assert len(worker.claim_batch()) == 1


def test_the_cap_is_per_organization(worker):
    busy = OrganizationFactory(inflight_cap=1)
    other = OrganizationFactory(inflight_cap=1)
    JobFactory.create_batch(3, organization=busy)
    JobFactory.create_batch(3, organization=other)
    claimed = worker.claim_batch()
    assert sorted(job.organization_id for job in claimed) == sorted([busy.pk, other.pk])


@pytest.mark.parametrize("state", [Organization.State.SUSPENDED, Organization.State.DELETED])
def test_jobs_of_an_inactive_organization_wait_and_run_after_reactivation(worker, state):
    org = OrganizationFactory(state=state)
    job = JobFactory(organization=org)

    assert worker.claim_batch() == []
    job.refresh_from_db()
    assert job.status == Job.Status.PENDING and job.attempts == 0

    Organization.objects.filter(pk=org.pk).update(state=Organization.State.ACTIVE)
    assert [j.pk for j in worker.claim_batch()] == [job.pk]


def test_a_full_batch_is_shared_between_organizations(worker):
    big = OrganizationFactory(inflight_cap=1000)
    smalls = OrganizationFactory.create_batch(3, inflight_cap=1000)
    now = db_now()
    # The big organization's backlog is older than every small organization's job.
    JobFactory.create_batch(50, organization=big, run_at=now - timedelta(hours=1))
    for org in smalls:
        JobFactory.create_batch(2, organization=org, run_at=now - timedelta(seconds=1))

    claimed = worker.claim_batch(limit=8)

    by_org = {}
    for job in claimed:
        by_org[job.organization_id] = by_org.get(job.organization_id, 0) + 1
    assert len(claimed) == 8
    assert by_org == {big.pk: 2, **{org.pk: 2 for org in smalls}}


def test_system_jobs_are_claimed_without_an_organization(worker):
    job = JobFactory(organization=None, type="jobs.prune")
    assert [j.pk for j in worker.claim_batch()] == [job.pk]


def test_it_claims_only_its_types(db):
    from apps.jobs.worker import Worker

    picky = Worker(types=["jobs.prune"], threads=1, heartbeat_s=1, stale_after_s=10)
    JobFactory(type="noop")
    prune = JobFactory(type="jobs.prune")
    assert [j.pk for j in picky.claim_batch()] == [prune.pk]


def test_a_job_enqueued_now_is_claimable_at_once(worker):
    workspace = WorkspaceFactory()
    job = job_enqueue(type="noop", payload={"a": 1}, organization=None, workspace=workspace)
    [claimed] = worker.claim_batch()
    assert claimed.pk == job.pk
    assert claimed.payload == {"a": 1}
    assert claimed.organization_id == workspace.organization_id
    assert claimed.workspace_id == workspace.pk


def _bulk_insert(org, status, count, run_at_sql):
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO jobs_job (organization_id, type, payload, status, run_at, attempts,
                                  max_attempts, locked_by, recoveries, snoozed_s, waited_s,
                                  created_at, updated_at, finished_at)
            SELECT %s, 'noop', '{{}}', %s, {run_at_sql}, 0, 5, '', 0, 0, 0, now(), now(),
                   CASE WHEN %s = 'done' THEN now() END
              FROM generate_series(1, %s) AS i
            """,
            [org.pk, status, status, count],
        )


def _plans(orgs, *, analyze=True):
    from apps.jobs import queue

    with connection.cursor() as cursor:
        if analyze:
            cursor.execute("ANALYZE jobs_job")
        cursor.execute(queue._SESSION_SQL)  # as the claim does
        cursor.execute("EXPLAIN " + queue._DUE_ORGS_SQL.format(type_filter=""), DUE_PARAMS)
        due_plan = "\n".join(row[0] for row in cursor.fetchall())
        sql = queue.claim_sql(typed=False)
        params = {
            "orgs": orgs,
            "seats": ["publish"] * len(orgs),
            "lanes": [""] * len(orgs),
            "lane_counts": [1] * len(orgs),
            "limit": 10,
            "stale_s": 10,
            "allow": 1000,
            "worker": "w",
            "types": [],
        }
        cursor.execute("EXPLAIN " + sql, params)
        claim_plan = "\n".join(row[0] for row in cursor.fetchall())
    return due_plan, claim_plan


def test_the_claim_is_served_by_pending_indexes_whatever_the_history(worker):
    org = OrganizationFactory()
    _bulk_insert(org, "done", 100_000, "now() - i * interval '1 second'")
    JobFactory.create_batch(5, organization=org)

    due_plan, claim_plan = _plans([org.pk])

    for plan in (due_plan, claim_plan):
        assert "Seq Scan on jobs_job" not in plan, plan
        assert "using job_pending_" in plan, plan
    assert "job_processing_org" in claim_plan, claim_plan
    assert len(worker.claim_batch()) == 5


def test_the_claim_skip_scans_organizations_with_a_large_backlog(worker):
    orgs = OrganizationFactory.create_batch(3)
    _bulk_insert(orgs[0], "done", 50_000, "now() - i * interval '1 second'")
    for org in orgs:
        _bulk_insert(org, "pending", 20_000, "now() + i * interval '1 second'")
        JobFactory(organization=org)

    due_plan, claim_plan = _plans([org.pk for org in orgs])

    for plan in (due_plan, claim_plan):
        assert "Seq Scan on jobs_job" not in plan, plan
    assert "queue_head_due" in due_plan, due_plan
    assert "job_pending_org_lane_run_at" in claim_plan, claim_plan
    assert len(worker.claim_batch()) == 3


def test_the_claim_stays_on_its_indexes_when_statistics_are_stale(worker):
    orgs = OrganizationFactory.create_batch(3)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE jobs_job")  # statistics of an empty table...
    for org in orgs:  # ...then a burst
        _bulk_insert(org, "pending", 20_000, "now() - i * interval '1 millisecond'")

    due_plan, claim_plan = _plans([org.pk for org in orgs], analyze=False)

    for plan in (due_plan, claim_plan):
        assert "Seq Scan on jobs_job" not in plan, plan
        assert "jobs_job_organization_id" not in plan, plan  # the whole history
    assert "job_pending_org_lane_run_at" in claim_plan, claim_plan


def test_batched_writes_find_their_rows_by_primary_key(worker):
    from apps.jobs import queue

    org = OrganizationFactory()
    _bulk_insert(org, "done", 50_000, "now() - i * interval '1 second'")
    JobFactory.create_batch(3, organization=org)
    jobs = worker.claim_batch()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE jobs_job")
    written = queue.complete_done([(job.pk, job.lease, 0.0) for job in jobs], stale_s=10)
    assert written == {job.pk for job in jobs}

    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN UPDATE jobs_job j SET status = 'done' WHERE j.id = ANY(%s::bigint[])"
            " AND " + queue._LEASE_GUARD.replace("%(leases)s", "%s").replace("%(stale_s)s", "%s"),
            [[job.pk for job in jobs], [job.lease for job in jobs], 10.0],
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "jobs_job_pkey" in plan and "Seq Scan" not in plan, plan


def test_the_claim_statements_are_prepared_once_per_connection(worker):
    org = OrganizationFactory(inflight_cap=100)
    for _ in range(3):
        JobFactory(organization=org)
        assert len(worker.claim_batch()) == 1

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT statement FROM pg_prepared_statements"
            " WHERE statement LIKE '%%WITH due AS MATERIALIZED%%'"
            "    OR statement LIKE '%%WITH seats AS%%'"
            "    OR statement LIKE '%%UPDATE jobs_queuehead%%'"
        )
        assert len(cursor.fetchall()) == 3


def test_organization_jobs_are_claimed_with_for_update_skip_locked(worker):
    from apps.jobs import queue

    org = OrganizationFactory(inflight_cap=100)
    job = JobFactory(organization=org)

    with CaptureQueriesContext(connection) as captured:
        claimed = worker.claim_batch()

    assert [j.pk for j in claimed] == [job.pk]
    [claim] = [q["sql"] for q in captured.captured_queries if "UPDATE jobs_job" in q["sql"]]
    assert "FOR UPDATE SKIP LOCKED" in claim
    # The locking select is the one the ORM builds for select_for_update(skip_locked=True).
    assert queue._locked_sql() in claim
    # ... under the organization's claim lock, taken before.
    sqls = [q["sql"] for q in captured.captured_queries]
    assert any("pg_try_advisory_xact_lock" in sql for sql in sqls[: sqls.index(claim)])


@pytest.mark.django_db(transaction=True)
def test_a_job_locked_by_another_transaction_is_skipped_not_waited_for():
    import threading

    from django.db import connections

    from apps.jobs.worker import Worker

    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=10, name="w1")
    org = OrganizationFactory(inflight_cap=100)
    busy, free = JobFactory(organization=org), JobFactory(organization=org)
    locked, release = threading.Event(), threading.Event()

    def hold_row_lock() -> None:
        # Another transaction writing the job (a cancel, say) holds its row lock.
        other = connections.create_connection("default")
        try:
            with other.cursor() as cursor:
                cursor.execute("BEGIN")
                cursor.execute("SELECT 1 FROM jobs_job WHERE id = %s FOR UPDATE", [busy.pk])
                locked.set()
                release.wait(10)
                cursor.execute("ROLLBACK")
        finally:
            other.close()

    thread = threading.Thread(target=hold_row_lock)
    thread.start()
    try:
        assert locked.wait(10)
        claimed = worker.claim_batch()
    finally:
        release.set()
        thread.join()
    assert [j.pk for j in claimed] == [free.pk]
    busy.refresh_from_db()
    assert busy.status == Job.Status.PENDING and busy.attempts == 0


def test_the_table_is_vacuumed_after_a_fixed_number_of_dead_rows(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'jobs_job'")
        options = set(cursor.fetchone()[0])
    assert {"autovacuum_vacuum_scale_factor=0.0", "autovacuum_vacuum_threshold=5000"} <= options


@pytest.mark.django_db(transaction=True)
def test_a_full_batch_wakes_the_other_workers_and_a_partial_one_does_not():
    import select

    from apps.jobs.listener import Listener
    from apps.jobs.worker import Worker

    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=10, name="w1")
    JobFactory.create_batch(3, organization=OrganizationFactory(inflight_cap=100))
    listener = Listener()
    listener.connect()

    def notifications() -> int:
        select.select([listener.fileno()], [], [], 0.5)
        return listener.drain()

    try:
        assert len(worker.claim_batch(limit=2)) == 2
        assert notifications() == 1  # work may be left behind
        assert len(worker.claim_batch(limit=5)) == 1
        assert notifications() == 0
    finally:
        listener.close()
