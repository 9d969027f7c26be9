import pytest
from django.urls import reverse

from apps.jobs.models import Job, WorkerProcess
from tests.factories import JobFactory, WorkspaceFactory

CHANGELISTS = ["jobs_job", "jobs_workerprocess"]


@pytest.fixture
def queue_rows(db):
    workspace = WorkspaceFactory()
    JobFactory(organization=workspace.organization, workspace=workspace)
    JobFactory(status=Job.Status.FAILED, last_error={"kind": "rate_limited"})
    JobFactory(organization=None, type="jobs.prune")
    WorkerProcess.objects.create(name="host:1:abc", host="host", pid=1)


@pytest.mark.parametrize("name", CHANGELISTS)
def test_changelist_renders_with_search(admin_client, queue_rows, name):
    url = reverse(f"admin:{name}_changelist")
    assert admin_client.get(url).status_code == 200
    assert admin_client.get(url, {"q": "noop"}).status_code == 200


@pytest.mark.parametrize(
    "filters",
    [{"status__exact": "failed"}, {"type": "noop"}, {"organization__isnull": "True"}],
)
def test_jobs_filter_by_state_type_and_organization(admin_client, queue_rows, filters):
    response = admin_client.get(reverse("admin:jobs_job_changelist"), filters)
    assert response.status_code == 200


def test_job_page_is_read_only(admin_client, queue_rows):
    job = Job.objects.first()
    page = admin_client.get(reverse("admin:jobs_job_change", args=[job.pk]))
    assert page.status_code == 200
    assert b'name="_save"' not in page.content


def _act(client, action, jobs):
    return client.post(
        reverse("admin:jobs_job_changelist"),
        {"action": action, "_selected_action": [job.pk for job in jobs]},
    )


def test_retry_now_action(admin_client):
    job = JobFactory(status=Job.Status.FAILED, attempts=5, max_attempts=5)
    _act(admin_client, "retry_now", [job])
    job.refresh_from_db()
    assert job.status == Job.Status.PENDING


def test_cancel_action(admin_client):
    job = JobFactory()
    _act(admin_client, "cancel", [job])
    job.refresh_from_db()
    assert job.status == Job.Status.CANCELLED
    assert "admin" in job.last_error["message"]


def test_release_lock_action(admin_client, worker):
    job = JobFactory()
    worker.claim_batch()
    _act(admin_client, "release_lock", [job])
    job.refresh_from_db()
    assert job.status == Job.Status.PENDING and job.lease is None
