"""Organization budgets ("seats"): publish jobs under inflight_cap, webhook deliveries under
webhook_inflight_cap, and jobs that hold no seat (status polls, lookups) under no cap, still
shared fairly between organizations and never claimed for a suspended one."""

from collections import Counter
from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from apps.accounts.models import Organization
from apps.jobs import queue
from apps.jobs.constants import Seat
from apps.jobs.models import Job
from apps.jobs.registry import get_job_type, job_type
from apps.jobs.services import JobSpec, job_enqueue, job_enqueue_many, schedule_next_periodic
from tests.factories import OrganizationFactory, WorkspaceFactory
from tests.jobs.conftest import age_heartbeat, db_now

PUBLISH, WEBHOOK, POLL = "noop", "t.webhook", "t.poll"

# Parameters of the claim's first statement, for EXPLAIN.
DUE_PARAMS = {"ns": 1, "heads_ns": 2, "stripes": 1024, "max_orgs": 16, "stale_s": 10.0, "types": []}


@pytest.fixture
def seat_types(job_types):
    job_types(WEBHOOK, lambda job: None, seat="webhook")
    job_types(POLL, lambda job: None, seat=None)


def enqueue(org, type, count, *, ago_s=60.0):
    """`count` due jobs of `type`, all with run_at `ago_s` seconds ago (database clock)."""
    run_at = db_now() - timedelta(seconds=ago_s)
    spec = JobSpec(type=type, organization_id=org.pk, run_at=run_at)
    assert job_enqueue_many([spec] * count) == count


def by_type(jobs):
    return Counter(job.type for job in jobs)


def by_org(jobs):
    return Counter(job.organization_id for job in jobs)


# -- declarations ------------------------------------------------------------------------


def test_types_declare_their_seat():
    assert get_job_type("noop").seat == Seat.PUBLISH  # the default
    assert get_job_type("renditions.publish").seat == Seat.PUBLISH
    assert get_job_type("renditions.poll").seat == Seat.NONE
    assert get_job_type("renditions.reconcile").seat == Seat.NONE
    assert get_job_type("webhooks.deliver").seat == Seat.WEBHOOK


def test_an_unknown_seat_is_refused():
    with pytest.raises(ImproperlyConfigured, match="seat"):
        job_type("t.bad_seat", seat="email")


def test_enqueue_stores_the_types_seat(db, seat_types):
    workspace = WorkspaceFactory()
    poll = job_enqueue(type=POLL, payload={}, organization=None, workspace=workspace)
    publish = job_enqueue(type=PUBLISH, payload={}, organization=None, workspace=workspace)
    job_enqueue_many([JobSpec(type=WEBHOOK, organization_id=workspace.organization_id)])

    assert Job.objects.get(pk=poll.pk).seat == Seat.NONE
    assert Job.objects.get(pk=publish.pk).seat == Seat.PUBLISH
    assert Job.objects.get(type=WEBHOOK).seat == Seat.WEBHOOK


def test_periodic_jobs_store_their_seat(db, job_types):
    periodic = job_types(
        "t.periodic_poll", lambda job: None, seat=None, periodic_every=timedelta(hours=1)
    )
    assert schedule_next_periodic(periodic, now=True)
    assert Job.objects.get(type="t.periodic_poll").seat == Seat.NONE


# -- the claim ---------------------------------------------------------------------------


def test_publish_jobs_are_claimed_while_polls_fill_more_than_the_cap(worker, seat_types):
    org = OrganizationFactory(inflight_cap=2)
    enqueue(org, POLL, 8, ago_s=120)
    polls = worker.claim_batch(limit=20)
    assert by_type(polls) == {POLL: 8}  # no cap on polls...

    enqueue(org, PUBLISH, 5)
    publishes = worker.claim_batch(limit=20)

    assert by_type(publishes) == {PUBLISH: 2}  # ...and they take none of the publish seats
    assert worker.claim_batch(limit=20) == []


def test_a_slow_webhook_receiver_does_not_delay_publishing(worker, seat_types):
    org = OrganizationFactory(inflight_cap=3, webhook_inflight_cap=2)
    enqueue(org, WEBHOOK, 10, ago_s=300)  # older than every publish job
    stuck = worker.claim_batch(limit=20)
    assert by_type(stuck) == {WEBHOOK: 2}  # the receiver never answers: they stay in flight

    enqueue(org, PUBLISH, 3)
    claimed = worker.claim_batch(limit=20)

    assert by_type(claimed) == {PUBLISH: 3}
    assert Job.objects.filter(type=WEBHOOK, status="pending").count() == 8


def test_the_webhook_budget_is_enforced_and_counted_on_its_own(worker, seat_types):
    org = OrganizationFactory(inflight_cap=1, webhook_inflight_cap=2)
    enqueue(org, PUBLISH, 1, ago_s=300)
    assert by_type(worker.claim_batch()) == {PUBLISH: 1}  # the publish seat is full
    enqueue(org, WEBHOOK, 5)

    first = worker.claim_batch()
    assert by_type(first) == {WEBHOOK: 2}
    assert worker.claim_batch() == []

    done = queue.complete_done([(first[0].pk, first[0].lease, 0.0)], stale_s=10)
    assert done == {first[0].pk}
    assert by_type(worker.claim_batch()) == {WEBHOOK: 1}


def test_a_stale_webhook_does_not_hold_its_seat(worker, seat_types):
    org = OrganizationFactory(webhook_inflight_cap=1)
    enqueue(org, WEBHOOK, 2)
    [stale] = worker.claim_batch()
    age_heartbeat(stale, worker.stale_after_s + 1)
    assert len(worker.claim_batch()) == 1


def test_publish_jobs_in_flight_leave_webhooks_their_budget(worker, seat_types):
    org = OrganizationFactory(inflight_cap=2, webhook_inflight_cap=2)
    enqueue(org, PUBLISH, 2, ago_s=300)
    enqueue(org, WEBHOOK, 3)

    claimed = worker.claim_batch()

    assert by_type(claimed) == {PUBLISH: 2, WEBHOOK: 2}


def test_one_claim_takes_the_earliest_jobs_across_seats_within_its_share(worker, seat_types):
    busy = OrganizationFactory(inflight_cap=100, webhook_inflight_cap=100)
    other = OrganizationFactory(inflight_cap=100)
    enqueue(busy, POLL, 30, ago_s=300)
    enqueue(busy, WEBHOOK, 30, ago_s=200)
    enqueue(busy, PUBLISH, 30, ago_s=100)
    enqueue(other, PUBLISH, 30, ago_s=10)

    claimed = worker.claim_batch(limit=10)

    # Two organizations: five jobs each, the busy one's being its oldest (the polls).
    assert by_org(claimed) == {busy.pk: 5, other.pk: 5}
    assert by_type(j for j in claimed if j.organization_id == busy.pk) == {POLL: 5}


@pytest.mark.parametrize("state", [Organization.State.SUSPENDED, Organization.State.DELETED])
def test_no_seat_jobs_of_an_inactive_organization_are_not_claimed(worker, seat_types, state):
    org = OrganizationFactory(state=state)
    enqueue(org, POLL, 3)
    enqueue(org, WEBHOOK, 3)

    assert worker.claim_batch() == []
    assert Job.objects.filter(organization=org, status="pending", attempts=0).count() == 6

    Organization.objects.filter(pk=org.pk).update(state=Organization.State.ACTIVE)
    assert len(worker.claim_batch()) == 3 + 3


def test_a_no_seat_flood_does_not_starve_other_organizations(worker, seat_types):
    flood, other_flood, small = OrganizationFactory.create_batch(3, inflight_cap=2)
    enqueue(flood, POLL, 10_000, ago_s=3600)  # the oldest work in the queue
    enqueue(other_flood, POLL, 10_000, ago_s=1800)
    enqueue(small, PUBLISH, 2, ago_s=1)
    enqueue(small, POLL, 2, ago_s=1)

    claimed = worker.claim_batch(limit=12)

    assert by_org(claimed) == {flood.pk: 4, other_flood.pk: 4, small.pk: 4}
    # The floods' jobs stay in flight (no cap on them); the next claims share again.
    enqueue(small, PUBLISH, 1)
    enqueue(small, POLL, 1)
    again = worker.claim_batch(limit=12)
    assert by_org(again) == {flood.pk: 4, other_flood.pk: 4, small.pk: 1}
    assert by_type(j for j in again if j.organization_id == small.pk) == {POLL: 1}


def test_the_claim_stays_on_its_indexes_with_every_seat_in_use(worker, seat_types):
    orgs = OrganizationFactory.create_batch(3)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE jobs_job")  # statistics of an empty table...
        for org in orgs:  # ...then a burst in every seat
            for type, seat in ((PUBLISH, "publish"), (WEBHOOK, "webhook"), (POLL, "none")):
                cursor.execute(
                    """
                    INSERT INTO jobs_job (organization_id, type, seat, payload, status, run_at,
                                          attempts, max_attempts, locked_by, recoveries,
                                          snoozed_s, waited_s, created_at, updated_at)
                    SELECT %s, %s, %s, '{}', 'pending', now() - i * interval '1 millisecond',
                           0, 5, '', 0, 0, 0, now(), now()
                      FROM generate_series(1, 10000) AS i
                    """,
                    [org.pk, type, seat],
                )
        cursor.execute(queue._SESSION_SQL)
        cursor.execute("EXPLAIN " + queue._DUE_ORGS_SQL.format(type_filter=""), DUE_PARAMS)
        due_plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute(
            "EXPLAIN " + queue.claim_sql(typed=False),
            {
                "orgs": [org.pk for org in orgs for _ in range(3)],
                "seats": ["publish", "webhook", "none"] * 3,
                "lanes": [""] * 9,
                "lane_counts": [1] * 9,
                "limit": 30,
                "stale_s": 10,
                "allow": 1000,
                "worker": "w",
                "types": [],
            },
        )
        claim_plan = "\n".join(row[0] for row in cursor.fetchall())

    for plan in (due_plan, claim_plan):
        assert "Seq Scan on jobs_job" not in plan, plan
        assert "jobs_job_organization_id" not in plan, plan  # the whole history
    # Due organizations come from their queue heads, not from the jobs.
    assert "queue_head_due" in due_plan, due_plan
    assert "job_pending_org_lane_run_at" in claim_plan, claim_plan
    assert "job_processing_org" in claim_plan, claim_plan
    claimed = worker.claim_batch(limit=30)
    assert by_org(claimed) == {org.pk: 10 for org in orgs}
