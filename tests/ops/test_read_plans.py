"""Readiness, /metrics and the operators' dashboard read only what is due or recent: with
many idle organizations holding work scheduled ahead, and a history of finished jobs,
none of them reads jobs_job (or the renditions) whole."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.jobs.models import Job
from apps.ops.health import DUE_COUNTED
from tests.factories import JobFactory, OrganizationFactory
from tests.plans import BIG_TABLES, analyze, assert_bounded, crowd, reads

pytestmark = pytest.mark.django_db


@pytest.fixture
def crowded(transactional_db):
    """40 idle organizations with 30 posts ahead and 90 published (one destination,
    one job each), and 5 jobs due now."""
    now = timezone.now()
    crowd(organizations=40, posts=30, now=now, history=3)
    org = OrganizationFactory()
    for i in range(5):
        JobFactory(organization=org, run_at=now - timedelta(seconds=10 + i))
    # Committed and vacuumed, as autovacuum leaves a table: the counts read the partial
    # indexes alone (index-only scans).
    analyze(*BIG_TABLES, vacuum=True)
    return now


def test_readiness_reads_the_due_jobs_only(client, crowded):
    assert Job.objects.filter(status="pending").count() > 1200
    response = client.get("/readyz")
    assert response.json()["checks"]["workers"]["due_jobs"] == 5
    assert response.json()["checks"]["workers"]["oldest_due_lag_s"] >= 14
    scans = reads(lambda: client.get("/readyz"), BIG_TABLES)
    assert [s.table for s in scans] == ["jobs_job"]
    assert_bounded(scans, max_rows=5)


def test_the_due_count_stops_at_its_cap(client, db):
    org = OrganizationFactory()
    Job.objects.bulk_create(
        [
            Job(organization=org, type="noop", run_at=timezone.now() - timedelta(minutes=1))
            for _ in range(DUE_COUNTED + 5)
        ]
    )
    assert client.get("/readyz").json()["checks"]["workers"]["due_jobs"] == DUE_COUNTED


def test_metrics_and_the_dashboard_read_no_table_whole(client, admin_client, crowded):
    body = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    assert "socialpost_queue_due_jobs 5.0" in body
    # The pending count's window (due within the hour) holds the 5 due jobs; the posts
    # ahead start a day from now.
    assert 'socialpost_queue_jobs{status="pending"} 5.0' in body
    # Every statement of a scrape reads what is due, running or recent, through an
    # index: at most the 5 due jobs, never the jobs ahead or the finished history
    # (which the windows of jobs claimed or finished lately would hold if they were
    # bounded by creation time: the crowd's jobs were all written a moment ago).
    scraped = reads(lambda: client.get("/metrics", REMOTE_ADDR="127.0.0.1"), BIG_TABLES)
    assert len(scraped) >= 7
    assert_bounded(scraped, max_rows=5)
    # The dashboard's failures and outcomes read the destinations failed and the jobs
    # finished lately, and its counts by status what /metrics counts (the due jobs, not
    # the posts ahead), each oldest run_at one index probe.
    page = admin_client.get(reverse("ops-dashboard")).content.decode()
    assert "<td>pending (due within 1 hour, counted to 10,000)</td><td>5</td>" in page
    shown = reads(lambda: admin_client.get(reverse("ops-dashboard")), BIG_TABLES)
    assert {s.table for s in shown} == {"jobs_job", "renditions_rendition"}
    assert sum(1 for s in shown if s.sql.lstrip().startswith("SELECT 'pending'")) >= 1
    assert_bounded(shown, max_rows=5)
