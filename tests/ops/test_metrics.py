"""/metrics in the Prometheus text format, and the operators' dashboard."""

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.services import job_enqueue
from tests.factories import OrganizationFactory


@pytest.fixture
def queue(db):
    org = OrganizationFactory()
    job_enqueue(type="noop", payload={}, organization=org)
    job_enqueue(
        type="noop",
        payload={},
        organization=org,
        run_at=timezone.now() + timezone.timedelta(minutes=30),
    )
    # A day ahead: past the pending count's window.
    job_enqueue(
        type="noop",
        payload={},
        organization=org,
        run_at=timezone.now() + timezone.timedelta(days=1),
    )
    failed = job_enqueue(type="noop", payload={}, organization=org)
    Job.objects.filter(pk=failed.pk).update(
        status="failed",
        finished_at=timezone.now(),
        last_error={"kind": "rate_limited", "message": "x"},
    )
    return org


def test_it_exposes_queue_depth_lag_and_outcomes(client, queue):
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    body = response.content.decode()
    assert 'socialpost_queue_jobs{status="pending"} 2.0' in body
    assert "socialpost_queue_due_jobs 1.0" in body
    assert "socialpost_queue_lag_seconds" in body
    assert "socialpost_workers_polling 0.0" in body
    assert (
        'socialpost_job_outcomes_recent{kind="rate_limited",status="failed",type="noop"} 1.0'
        in body
    )
    assert 'socialpost_publish_latency_seconds_bucket{le="+Inf"} 0.0' in body


def test_the_recent_windows_count_jobs_created_long_before(client, db):
    """A post scheduled a month ahead has its publish job from then: it counts among the
    claims, outcomes and publish latencies when it runs, not when it was created."""
    org = OrganizationFactory()
    now = timezone.now()
    job = job_enqueue(type="renditions.publish", payload={}, organization=org)
    Job.objects.filter(pk=job.pk).update(
        status="done",
        created_at=now - timezone.timedelta(days=30),
        run_at=now - timezone.timedelta(minutes=3),
        started_at=now - timezone.timedelta(minutes=2),
        finished_at=now - timezone.timedelta(minutes=1),
    )

    body = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()

    assert "socialpost_job_claims_recent 1.0" in body
    assert (
        'socialpost_job_outcomes_recent{kind="",status="done",type="renditions.publish"} 1.0'
        in body
    )
    assert 'socialpost_publish_latency_seconds_bucket{le="300.0"} 1.0' in body


def test_it_refuses_remote_scrapers_without_the_token(client, db):
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 403


def test_a_configured_token_is_required(client, settings, db):
    settings.METRICS_TOKEN = "scrape-secret"
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 403
    ok = client.get(
        "/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer scrape-secret"
    )
    assert ok.status_code == 200


def test_the_dashboard_renders_for_staff_only(client, admin_client, queue):
    url = reverse("ops-dashboard")
    assert client.get(url).status_code == 302  # to the admin login
    page = admin_client.get(url)
    assert page.status_code == 200
    assert b"No worker has polled recently" in page.content
    assert b"rate_limited" in page.content
    assert b"Delivery dashboard" in admin_client.get(reverse("admin:index")).content
