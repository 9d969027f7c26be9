"""A Facebook video through the worker, the Facebook fake over real HTTP: the bytes go up
through the Resumable Upload API, and the videos call that makes the video is never sent
blindly again. Its answer lost, the rendition is an unknown outcome; reconciliation finds
the video among the Page's videos, waits for it to be processed and records it: one upload
session, one videos call, one video."""

from __future__ import annotations

import time

import pytest
from django.core.files.base import ContentFile
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.publications.services import media_asset_create
from apps.publishing.services import publication_create
from apps.renditions.models import DeliveryAttempt
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.facebook import FacebookFake
from loadtest.platform_fakes.server import FakeServer
from loadtest.soak_fakes import mp4_bytes
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db(transaction=True)


class Once(FaultPlan):
    """Each of `faults` strikes its first eligible call only."""

    def __init__(self, *faults: str) -> None:
        super().__init__(rates={}, hang_s=1.0, processing_s=0.3)
        self.once = frozenset(faults)

    def strikes(self, fault: str) -> bool:
        if fault in self.once and not self.struck.get(fault):
            self.struck[fault] = 1
            return True
        return False


@pytest.fixture
def facebook(settings, tmp_path):
    servers = []

    def serve(*faults: str) -> FacebookFake:
        fake = FacebookFake(Once(*faults))
        fake.page_tokens_open_upload_sessions = True
        servers.append(FakeServer([fake]).start())
        settings.PROVIDER_API_REDIRECT = servers[-1].base_url
        return fake

    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.PROVIDER_TIMEOUT_S = 0.5
    settings.RECONCILE_DELAY_S = 0
    settings.RECONCILE_SETTLE_S = 0
    settings.META_APP_ID, settings.META_APP_SECRET = "4321", "meta-secret"
    settings.META_UPLOAD_ACCESS_TOKEN = ""
    settings.FACEBOOK_VIDEO_UPLOAD = "auto"
    yield serve
    for server in servers:
        server.stop()


def _rendition(fake: FacebookFake, workspace):
    opened = fake.new_account("Bakery")
    account = make_account(workspace, "facebook", **opened)
    video = media_asset_create(workspace=workspace, file=ContentFile(mp4_bytes(), name="k.mp4"))
    publication = publication_create(
        workspace=workspace,
        author=None,
        segments=[{"text": "Kneading at dawn", "media": [{"id": video.pk}]}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    return publication.renditions.get()


def _drain(rendition, *, until: str | None = None, limit_s: float = 20.0) -> None:
    """Run due jobs until none is due (or the rendition reaches `until`)."""
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        jobs = worker.claim_batch()
        for job in jobs:
            worker.run_one(job)
        rendition.refresh_from_db()
        if until and rendition.status == until:
            return
        if not jobs:
            if until is None:
                return
            Job.objects.unfinished().update(run_at=timezone.now())
            time.sleep(0.2)


def test_a_video_is_published_once_through_the_resumable_upload_api(facebook, workspace_a):
    fake = facebook()
    rendition = _rendition(fake, workspace_a)

    _drain(rendition, until="published")

    assert rendition.status == "published", rendition.last_error
    [video] = fake.published()
    assert rendition.segments.get().provider_post_id == video.id
    assert len(fake.sessions) == 1
    assert rendition.checkpoint["videos"]["0"]["protocol"] == "resumable"


def test_a_lost_videos_answer_is_looked_up_and_the_video_recorded_once(facebook, workspace_a):
    fake = facebook("timeout_after_accept")
    rendition = _rendition(fake, workspace_a)

    _drain(rendition, until="published")

    assert rendition.status == "published", rendition.last_error
    [video] = fake.published()
    assert rendition.segments.get().provider_post_id == video.id
    made = [p for m, p in fake.calls if m == "POST" and p.endswith("/videos")]
    assert len(made) == 1  # never sent again
    assert len(fake.sessions) == 1  # never uploaded again
    outcomes = set(
        rendition.delivery_attempts.filter(kind=DeliveryAttempt.Kind.RECONCILE).values_list(
            "outcome", flat=True
        )
    )
    # Found by the lookup (published already, or still processing and then waited for).
    assert outcomes <= {DeliveryAttempt.Outcome.PENDING, DeliveryAttempt.Outcome.FOUND}
    assert outcomes
    publishes = rendition.delivery_attempts.filter(kind=DeliveryAttempt.Kind.PUBLISH)
    assert list(publishes.values_list("outcome", flat=True)) == [DeliveryAttempt.Outcome.UNKNOWN]
