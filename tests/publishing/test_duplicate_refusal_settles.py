"""LinkedIn has no lookup, but refuses a resend of the same text naming the post it holds.
An unknown outcome there settles itself: reconciliation resends once the unanswered request
can no longer land, and the refusal names the one post (or the resend makes it)."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.publishing.delivery.enqueue import reconcile_dedupe_key
from apps.publishing.services import publication_create
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.linkedin import LinkedInFake
from loadtest.platform_fakes.server import FakeServer
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db(transaction=True)


class Once(FaultPlan):
    """`fault` strikes the first eligible call only."""

    def __init__(self, fault: str) -> None:
        super().__init__(rates={}, hang_s=1.0)
        self.fault = fault

    def strikes(self, fault: str) -> bool:
        if fault == self.fault and not self.struck.get(fault):
            self.struck[fault] = 1
            return True
        return False


@pytest.fixture
def linkedin(settings):
    fakes = {}

    def serve(fault: str) -> LinkedInFake:
        fake = LinkedInFake(Once(fault))
        fakes["server"] = FakeServer([fake]).start()
        settings.PROVIDER_API_REDIRECT = fakes["server"].base_url
        return fake

    settings.PROVIDER_TIMEOUT_S = 0.5
    settings.RECONCILE_DELAY_S = 0
    settings.LINKEDIN_CLIENT_ID, settings.LINKEDIN_CLIENT_SECRET = "li-client", "li-secret"
    settings.LINKEDIN_API_VERSION = "202609"
    yield serve
    if "server" in fakes:
        fakes["server"].stop()


def _drain(worker: Worker, rendition, *, rounds: int = 40) -> None:
    for _ in range(rounds):
        jobs = worker.claim_batch()
        for job in jobs:
            worker.run_one(job)
        rendition.refresh_from_db()
        if not jobs and not Job.objects.unfinished().filter(run_at__lte=timezone.now()).exists():
            return


@pytest.mark.parametrize("fault", ["timeout_after_accept", "server_error_before"])
def test_an_unknown_outcome_on_linkedin_settles_with_one_post(
    linkedin, settings, workspace_a, fault
):
    fake = linkedin(fault)
    opened = fake.new_account("Alice Example")
    account = make_account(workspace_a, "linkedin", **opened)
    account.token_expires_at = datetime.fromisoformat(opened["credentials"]["expires_at"])
    account.save(update_fields=["token_expires_at"])
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")
    publication = publication_create(
        workspace=workspace_a,
        author=None,
        segments=[{"text": "Fresh loaves at dawn"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    rendition = publication.renditions.get()

    settings.RECONCILE_SETTLE_S = 3600
    _drain(worker, rendition)
    # 503 or no answer: the post may exist. A check is scheduled, nothing is resent yet.
    assert rendition.status == "failed" and rendition.ambiguous
    assert rendition.last_error["action"] == "wait"
    check = Job.objects.get(dedupe_key=reconcile_dedupe_key(rendition.pk))
    Job.objects.filter(pk=check.pk).update(run_at=timezone.now())
    _drain(worker, rendition)
    rendition.refresh_from_db()
    assert rendition.status == "failed" and rendition.ambiguous  # still inside the window

    settings.RECONCILE_SETTLE_S = 0
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    _drain(worker, rendition)

    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert rendition.segments.get().provider_post_id == post.id
