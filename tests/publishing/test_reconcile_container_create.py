"""On Threads and Instagram the publish step only makes a container, which the platform
keeps out of sight until the poll publishes it. A publish request left unanswered (its
worker stopped, or the database went away under it) cannot have made a post: reconciliation
resends it at once instead of looking for a post that cannot exist and then asking a person.
An unanswered poll, which may have published the container, is still looked up."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.common.db_clock import db_now
from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.publishing.delivery.enqueue import publish_dedupe_key, reconcile_dedupe_key
from apps.publishing.delivery.failures import fail_ambiguous, unsettled_request
from apps.renditions.models import DeliveryAttempt, Rendition
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.instagram import InstagramFake
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.threads import ThreadsFake
from tests.factories import PublicationFactory, RenditionFactory, RenditionSegmentFactory
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db(transaction=True)

FAKES = {"threads": ThreadsFake, "instagram": InstagramFake}


@pytest.fixture
def serve(settings):
    servers = []

    def start(platform: str):
        fake = FAKES[platform](FaultPlan(rates={}))
        servers.append(FakeServer([fake]).start())
        settings.PROVIDER_API_REDIRECT = servers[-1].base_url
        return fake

    settings.PROVIDER_TIMEOUT_S = 1
    settings.RECONCILE_SETTLE_S = 0
    yield start
    for server in servers:
        server.stop()


def _unanswered(fake, platform: str, workspace, kind: str) -> Rendition:
    """A rendition whose `kind` attempt was left in flight by a worker that stopped."""
    opened = fake.new_account("baker")
    account = make_account(
        workspace,
        platform,
        remote_id=opened["remote_id"],
        handle=opened["handle"],
        credentials=opened["credentials"],
        settings=opened.get("settings") or {},
    )
    rendition = RenditionFactory(
        publication=PublicationFactory(workspace=workspace),
        social_account=account,
        status=Rendition.Status.PUBLISHING,
        settings=opened.get("settings") or {},
    )
    RenditionSegmentFactory(rendition=rendition, position=0, text="Fresh loaves at dawn")
    DeliveryAttempt.objects.create(
        rendition=rendition,
        workspace_id=rendition.workspace_id,
        kind=kind,
        segment_position=0,
        started_at=db_now() - timedelta(minutes=1),
        finished_at=db_now(),
        outcome=DeliveryAttempt.Outcome.LOST,
        idempotency_key=f"r{rendition.pk}-s0",
    )
    fail_ambiguous(
        rendition, {"kind": "outcome_unknown", "code": "worker_lost", "message": "Stopped."}
    )
    return rendition


def _run_check(rendition: Rendition) -> None:
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")
    for job in worker.claim_batch():
        worker.run_one(job)
    rendition.refresh_from_db()


@pytest.mark.parametrize("platform", sorted(FAKES))
def test_an_unanswered_container_create_is_resent_without_a_lookup(serve, workspace_a, platform):
    fake = serve(platform)
    rendition = _unanswered(fake, platform, workspace_a, DeliveryAttempt.Kind.PUBLISH)
    assert unsettled_request(rendition) is None  # a later refusal is a plain failure

    _run_check(rendition)

    assert (rendition.status, rendition.ambiguous) == ("scheduled", False), rendition.last_error
    assert Job.objects.unfinished().filter(dedupe_key=publish_dedupe_key(rendition.pk)).exists()
    assert not rendition.delivery_attempts.filter(kind=DeliveryAttempt.Kind.RECONCILE).exists()
    assert fake.published() == []


@pytest.mark.parametrize("platform", sorted(FAKES))
def test_an_unanswered_poll_is_still_looked_up(serve, workspace_a, platform):
    fake = serve(platform)
    rendition = _unanswered(fake, platform, workspace_a, DeliveryAttempt.Kind.POLL)
    assert unsettled_request(rendition) is not None

    _run_check(rendition)

    assert (rendition.status, rendition.ambiguous) == ("failed", True)
    assert rendition.delivery_attempts.filter(kind=DeliveryAttempt.Kind.RECONCILE).exists()
    assert not Job.objects.unfinished().filter(dedupe_key=publish_dedupe_key(rendition.pk)).exists()
