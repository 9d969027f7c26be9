"""Lanes: within an organization's seat, the platforms its due jobs talk to share the
seat's budget, so one platform hanging every request cannot hold all of it while the
organization's posts to another platform wait."""

from collections import Counter
from datetime import timedelta

from django.utils import timezone

from apps.jobs.models import Job, QueueHead
from apps.jobs.services import JobSpec, job_enqueue, job_enqueue_many
from tests.factories import OrganizationFactory, WorkspaceFactory
from tests.jobs.conftest import db_now

PUBLISH = "noop"


def enqueue(org, lane, count, *, ago_s=60.0):
    run_at = db_now() - timedelta(seconds=ago_s)
    spec = JobSpec(type=PUBLISH, organization_id=org.pk, run_at=run_at, lane=lane)
    assert job_enqueue_many([spec] * count) == count


def by_lane(jobs):
    return Counter(job.lane for job in Job.objects.filter(pk__in=[j.pk for j in jobs]))


def finish(jobs):
    Job.objects.filter(pk__in=[j.pk for j in jobs]).update(
        status=Job.Status.DONE, finished_at=timezone.now()
    )


def test_each_lane_has_its_own_queue_head(db):
    org = OrganizationFactory()
    enqueue(org, "x", 2, ago_s=30)
    enqueue(org, "y", 1, ago_s=60)
    job_enqueue(
        type=PUBLISH,
        payload={},
        organization=None,
        workspace=WorkspaceFactory(organization=org),
        lane="z",
    )
    heads = {h.lane for h in QueueHead.objects.filter(organization=org)}
    assert heads == {"x", "y", "z"}


def test_lanes_due_together_share_the_budget(worker):
    org = OrganizationFactory(inflight_cap=4)
    enqueue(org, "x", 10, ago_s=300)  # the earlier backlog
    enqueue(org, "y", 10, ago_s=10)

    claimed = worker.claim_batch(limit=10)

    assert by_lane(claimed) == {"x": 2, "y": 2}


def test_a_lone_lane_keeps_a_reserve_of_a_large_budget(worker):
    org = OrganizationFactory(inflight_cap=16)
    enqueue(org, "x", 20)

    held = worker.claim_batch(limit=20)
    assert by_lane(held) == {"x": 14}  # an eighth of 16 is kept back

    enqueue(org, "y", 5)
    assert by_lane(worker.claim_batch(limit=20)) == {"y": 2}  # at once, while x hangs


def test_a_hanging_lane_yields_the_seats_it_frees_to_the_waiting_one(worker):
    org = OrganizationFactory(inflight_cap=4)
    enqueue(org, "x", 10)
    hanging = worker.claim_batch(limit=10)
    assert by_lane(hanging) == {"x": 4}  # alone: a budget this small keeps no reserve
    enqueue(org, "y", 5)
    assert worker.claim_batch(limit=10) == []  # every seat held

    # x's requests time out one by one: y gets each freed seat until it holds its half.
    finish(hanging[:1])
    assert by_lane(worker.claim_batch(limit=10)) == {"y": 1}
    finish(hanging[1:2])
    assert by_lane(worker.claim_batch(limit=10)) == {"y": 1}
    finish(hanging[2:3])
    # y holds its half (2 of 4); x, down to 1, takes the freed seat back.
    assert by_lane(worker.claim_batch(limit=10)) == {"x": 1}


def test_jobs_without_a_lane_are_one_lane(worker):
    org = OrganizationFactory(inflight_cap=4)
    enqueue(org, "", 6)
    assert by_lane(worker.claim_batch(limit=10)) == {"": 4}
