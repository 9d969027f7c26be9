"""The demo workspace: its seeded posts go through the real pipeline against the sandbox
and end in the outcome each is there to show; the workspace overview's first steps."""

from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from apps.accounts.models import User, Workspace
from apps.jobs.worker import Worker
from apps.publications.models import Publication
from apps.renditions.models import Rendition
from apps.sandbox.services import sandbox_account_create
from apps.web.demo import DEMO_ZONE, demo_setup
from tests.sandbox.witness import witness_posts


@pytest.fixture
def sandbox(live_server, settings):
    settings.SANDBOX_BASE_URL = live_server.url
    settings.PROVIDER_TIMEOUT_S = 2
    settings.RECONCILE_DELAY_S = 0
    return live_server.url


def _run_everything_due(worker: Worker) -> None:
    for _ in range(50):
        jobs = worker.claim_batch()
        if not jobs:
            return
        for job in jobs:
            worker.run_one(job)


def _rendition(handle: str) -> Rendition:
    """The account's rendition of its first seeded post."""
    return Rendition.objects.filter(social_account__handle=handle).order_by("pk").first()


@pytest.mark.django_db(transaction=True)
def test_the_demo_posts_end_in_the_outcome_each_shows(sandbox):
    demo = demo_setup()
    _run_everything_due(Worker(threads=1, batch_size=10, name="demo-test"))

    assert _rendition("demo-news").status == Rendition.Status.PUBLISHED
    assert _rendition("demo-team").status == Rendition.Status.PUBLISHED
    tomorrow = Publication.objects.get(renditions__social_account__handle="demo-flaky")
    assert tomorrow.status == Publication.Status.SCHEDULED  # not due until tomorrow 09:00

    limited = _rendition("demo-limited")
    assert limited.next_retry_at is not None and not limited.ambiguous  # waiting to retry
    strict = _rendition("demo-strict")
    assert strict.status == Rendition.Status.FAILED and not strict.ambiguous
    assert strict.next_retry_at is None and strict.last_error["kind"] == "content_rejected"
    unsure = _rendition("demo-unsure")
    assert unsure.status == Rendition.Status.FAILED and unsure.ambiguous  # a person checks
    assert len(witness_posts(sandbox, "demo-unsure", workspace=demo.workspace)) == 1


@pytest.mark.django_db
def test_the_demo_seeds_once_and_shows_times_in_the_workspace_zone():
    demo_setup()
    demo_setup()
    assert Publication.objects.count() == 5
    user = User.objects.get(email="demo@example.com")
    assert user.display_timezone == DEMO_ZONE == Workspace.objects.get(slug="demo").default_timezone
    tomorrow = Publication.objects.get(renditions__social_account__handle="demo-flaky")
    local = tomorrow.scheduled_at.astimezone(ZoneInfo(DEMO_ZONE))
    assert (local.hour, local.minute) == (9, 0)


def _home(client: Client, workspace) -> str:
    return client.get(f"/w/{workspace.slug}/").content.decode()


@pytest.mark.django_db
def test_first_steps_guide_a_new_workspace_until_done_or_hidden(as_bob, workspace_a):
    page = _home(as_bob, workspace_a)
    assert "First steps" in page and 'href="/w/ws-a/accounts/"' in page

    sandbox_account_create(workspace=workspace_a, handle="first")
    page = _home(as_bob, workspace_a)
    assert "<s>Connect an account</s>" in page
    assert "<s>Invite a teammate</s>" in page  # workspace A already has three people

    response = as_bob.post(f"/w/{workspace_a.slug}/first-steps/hide/")
    assert response.status_code == 302
    assert "First steps" not in _home(as_bob, workspace_a)


@pytest.mark.django_db
def test_viewers_see_no_first_steps(as_vera, workspace_a):
    assert "First steps" not in _home(as_vera, workspace_a)
