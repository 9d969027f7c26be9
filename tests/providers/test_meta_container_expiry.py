"""Meta containers (Threads, Instagram) that expire unpublished (24 h) or end in ERROR. An
expired container was never published: a new one is made once, from the segment with fresh
media URLs, and published; one that expires again was never posted either, so the rendition
fails plainly (not ambiguous, no person's check). An ERROR container fails the rendition
with the platform's reason, whether its poll or reconciliation reads it. The real adapters
against the fakes, alone and through the pipeline."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from django.db import transaction
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.providers.base import MediaPayload, SegmentPayload, get_adapter
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.meta.container import ContainerAdapter
from apps.publishing.delivery.enqueue import reconcile_dedupe_key
from apps.publishing.delivery.failures import fail_ambiguous
from apps.publishing.services import publication_create
from apps.renditions.models import DeliveryAttempt, Rendition
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.instagram import InstagramFake
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.threads import ThreadsFake
from tests.factories import MediaAssetFactory
from tests.providers.social_helpers import make_account, make_ctx

DAY_S = 24 * 3600


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def serve(settings):
    servers = []

    def start(fake_class, **rates: float):
        fake = fake_class(FaultPlan(rates=rates, processing_s=0.0, hang_s=1.0))
        fake.clock = Clock()
        servers.append(FakeServer([fake]).start())
        settings.PROVIDER_API_REDIRECT = servers[-1].base_url
        return fake

    settings.PROVIDER_TIMEOUT_S = 0.75
    yield start
    for server in servers:
        server.stop()


def _account(fake, workspace, platform: str):
    opened = fake.new_account("baker")
    account = make_account(
        workspace,
        platform,
        remote_id=opened["remote_id"],
        handle=opened["handle"],
        credentials=opened["credentials"],
        settings=opened["settings"],
    )
    account.token_expires_at = datetime.fromisoformat(opened["credentials"]["expires_at"])
    account.save(update_fields=["token_expires_at"])
    return account


def _photo(url: str = "https://media.example.com/s/loaf.jpg") -> MediaPayload:
    return MediaPayload(
        media_id=1,
        kind="image",
        mime_type="image/jpeg",
        size_bytes=10,
        alt_text="A loaf",
        open=lambda: None,
        public_url=url,
    )


# -- the adapters against the fakes -------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fake_class", "platform"), [(ThreadsFake, "threads"), (InstagramFake, "instagram")]
)
def test_an_expired_container_is_never_published_and_is_made_anew_once(
    serve, workspace_a, fake_class, platform
):
    fake = serve(fake_class)
    adapter: ContainerAdapter = get_adapter(platform)
    ctx = make_ctx(_account(fake, workspace_a, platform))
    segment = SegmentPayload(0, "Rye today", [_photo()])
    pending = adapter.publish_segment(ctx, segment, reply_to=None)
    fake.clock.now += DAY_S + 1  # left unpublished past Meta's 24 h

    with pytest.raises(ProviderError) as expired:
        adapter.poll_segment(ctx, pending)
    assert (expired.value.kind, expired.value.code) == (ErrorKind.UNKNOWN, "container_expired")
    assert expired.value.retryable is False
    assert fake.published() == []

    # Reconciliation holds the segment (fresh media URLs): a new container, once.
    fresh = SegmentPayload(0, "Rye today", [_photo("https://media.example.com/s/fresh.jpg")])
    renewed = adapter.lookup_segment(ctx, fresh, not_before=datetime.now(UTC))
    assert renewed is not None and renewed.pending
    assert renewed.provider_post_id != pending.provider_post_id
    assert (
        fake.containers[renewed.provider_post_id].params.get("image_url", "").endswith("fresh.jpg")
    )
    published = adapter.poll_segment(ctx, renewed)

    [post] = fake.published()
    assert published.provider_post_id == post.id
    assert fake.container_creations == 2


@pytest.mark.django_db
def test_a_renewed_container_that_expires_again_is_not_renewed_twice(serve, workspace_a):
    fake = serve(ThreadsFake)
    adapter = get_adapter("threads")
    ctx = make_ctx(_account(fake, workspace_a, "threads"))
    segment = SegmentPayload(0, "Twice too late")
    adapter.publish_segment(ctx, segment, reply_to=None)
    fake.clock.now += DAY_S + 1
    adapter.lookup_segment(ctx, segment, not_before=datetime.now(UTC))
    fake.clock.now += DAY_S + 1

    with pytest.raises(ProviderError) as again:
        adapter.lookup_segment(ctx, segment, not_before=datetime.now(UTC))

    assert again.value.code == "container_expired_again"
    assert again.value.retryable is False
    assert fake.container_creations == 2 and fake.published() == []


@pytest.mark.django_db
def test_a_carousel_whose_item_expired_is_made_anew(serve, workspace_a):
    fake = serve(ThreadsFake)
    adapter = get_adapter("threads")
    ctx = make_ctx(_account(fake, workspace_a, "threads"))
    segment = SegmentPayload(0, "Two loaves", [_photo(), _photo()])
    first = adapter.publish_segment(ctx, segment, reply_to=None)
    items = list(fake.containers)
    fake.clock.now += DAY_S + 1

    renewed = adapter.lookup_segment(ctx, segment, not_before=datetime.now(UTC))

    assert renewed is not None and renewed.pending
    assert renewed.provider_post_id != first.provider_post_id
    assert not set(items) & set(ctx.checkpoint["containers"]["0"].get("children", []))


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fake_class", "platform", "reason"),
    [
        (ThreadsFake, "threads", "FAILED_PROCESSING_VIDEO"),
        (InstagramFake, "instagram", "2207026"),
    ],
)
def test_an_error_container_fails_with_the_platforms_reason(
    serve, workspace_a, fake_class, platform, reason
):
    fake = serve(fake_class, processing_fails=1.0)
    adapter = get_adapter(platform)
    ctx = make_ctx(_account(fake, workspace_a, platform))
    segment = SegmentPayload(0, "A loaf", [_photo()])
    pending = adapter.publish_segment(ctx, segment, reply_to=None)

    for check in (
        lambda: adapter.poll_segment(ctx, pending),
        lambda: adapter.lookup_segment(ctx, segment, not_before=datetime.now(UTC)),
    ):
        with pytest.raises(ProviderError) as failed:
            check()
        assert failed.value.kind == ErrorKind.CONTENT_REJECTED
        assert failed.value.code == reason and failed.value.retryable is False
    assert fake.published() == [] and fake.container_creations == 1


# -- through the pipeline -----------------------------------------------------------------


def _worker() -> Worker:
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")


def _drain(worker: Worker, rendition, *, rounds: int = 30) -> None:
    for _ in range(rounds):
        jobs = worker.claim_batch()
        for job in jobs:
            worker.run_one(job)
        rendition.refresh_from_db()
        if not jobs and not Job.objects.unfinished().filter(run_at__lte=timezone.now()).exists():
            return


def _run_waiting_jobs_now(worker: Worker, rendition) -> None:
    Job.objects.unfinished().update(run_at=timezone.now())
    _drain(worker, rendition)


@pytest.mark.django_db(transaction=True)
def test_a_container_that_expired_while_waiting_is_published_once_from_a_new_one(
    serve, settings, workspace_a
):
    settings.RECONCILE_DELAY_S = 0
    fake = serve(ThreadsFake)
    account = _account(fake, workspace_a, "threads")
    publication = publication_create(
        workspace=workspace_a,
        author=None,
        segments=[{"text": "Fresh loaves at dawn"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    rendition = publication.renditions.get()
    worker = _worker()
    _drain(worker, rendition)
    assert rendition.status == "waiting"  # the container exists, its poll is due later

    fake.clock.now += DAY_S + 1  # the poll comes too late (an outage, a long queue)
    _run_waiting_jobs_now(worker, rendition)
    if rendition.status != "published":  # the renewed container's own poll
        _run_waiting_jobs_now(worker, rendition)

    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert rendition.segments.get().provider_post_id == post.id
    assert fake.container_creations == 2
    assert (
        not Job.objects.unfinished().filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).exists()
    )


@pytest.mark.django_db(transaction=True)
def test_an_error_container_fails_the_rendition_with_the_platforms_reason(
    serve, settings, workspace_a, tmp_path
):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.RECONCILE_DELAY_S = 0
    fake = serve(ThreadsFake, processing_fails=1.0)
    account = _account(fake, workspace_a, "threads")
    photo = MediaAssetFactory(workspace=workspace_a, alt_text="A loaf")
    publication = publication_create(
        workspace=workspace_a,
        author=None,
        segments=[{"text": "A loaf", "media": [{"id": photo.pk}]}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    rendition = publication.renditions.get()
    worker = _worker()
    _drain(worker, rendition)
    _run_waiting_jobs_now(worker, rendition)

    assert rendition.status == "failed" and not rendition.ambiguous
    assert rendition.last_error["code"] == "FAILED_PROCESSING_VIDEO"
    assert rendition.last_error["kind"] == "content_rejected"
    assert fake.published() == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fake_class", "platform"), [(ThreadsFake, "threads"), (InstagramFake, "instagram")]
)
def test_a_renewed_container_read_expired_by_its_poll_was_never_posted(
    serve, workspace_a, fake_class, platform
):
    fake = serve(fake_class)
    adapter: ContainerAdapter = get_adapter(platform)
    ctx = make_ctx(_account(fake, workspace_a, platform))
    segment = SegmentPayload(0, "Rye again", [_photo()])
    adapter.publish_segment(ctx, segment, reply_to=None)
    fake.clock.now += DAY_S + 1
    renewed = adapter.lookup_segment(ctx, segment, not_before=datetime.now(UTC))
    assert renewed is not None
    fake.clock.now += DAY_S + 1

    with pytest.raises(ProviderError) as again:
        adapter.poll_segment(ctx, renewed)

    assert (again.value.kind, again.value.code) == (
        ErrorKind.MEDIA_PROCESSING,
        "container_expired_again",
    )
    assert again.value.retryable is False and again.value.nothing_posted
    assert fake.published() == []


def _switched_account(fake, workspace, platform: str, behaviour: str):
    before = set(fake.accounts)
    opened = fake.new_account("baker")
    for key in set(fake.accounts) - before:  # the fake's own ids of the account
        fake.switch(str(key), behaviour)
    account = make_account(
        workspace,
        platform,
        remote_id=opened["remote_id"],
        handle=opened["handle"],
        credentials=opened["credentials"],
        settings=opened["settings"],
    )
    account.token_expires_at = datetime.fromisoformat(opened["credentials"]["expires_at"])
    account.save(update_fields=["token_expires_at"])
    return account


def _photo_publication(workspace, account, text: str):
    # A square JPEG, as Instagram's catalog asks.
    photo = MediaAssetFactory(
        workspace=workspace, alt_text="A loaf", mime_type="image/jpeg", width=1080, height=1080
    )
    return publication_create(
        workspace=workspace,
        author=None,
        segments=[{"text": text, "media": [{"id": photo.pk}]}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("fake_class", "platform"), [(ThreadsFake, "threads"), (InstagramFake, "instagram")]
)
def test_containers_that_always_expire_end_in_a_plain_failure_not_a_person(
    serve, settings, workspace_a, tmp_path, fake_class, platform
):
    """Every container expires (the renewed one too): nothing was posted, and the platform
    said so. The rendition fails plainly with the reason and what to do, not ambiguous."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.RECONCILE_DELAY_S = 0
    fake = serve(fake_class)
    account = _switched_account(fake, workspace_a, platform, "containers_expire")
    rendition = _photo_publication(workspace_a, account, "Rye at dawn").renditions.get()
    worker = _worker()
    _drain(worker, rendition)
    for _ in range(4):
        if rendition.status == "failed" and not Job.objects.unfinished().exists():
            break
        fake.clock.now += 1  # past the switched account's zero lifetime
        _run_waiting_jobs_now(worker, rendition)

    assert (rendition.status, rendition.ambiguous) == ("failed", False), rendition.last_error
    assert rendition.last_error["code"] == "container_expired_again"
    assert rendition.last_error["action"] == "retry"
    assert rendition.next_retry_at is None
    assert fake.published() == [] and fake.container_creations == 2
    assert not Job.objects.unfinished().exists()


@pytest.mark.django_db(transaction=True)
def test_an_error_container_found_by_reconciliation_fails_with_the_platforms_reason(
    serve, settings, workspace_a, tmp_path
):
    """Reconciliation reads the container ERROR: never published, so a plain failure with
    the platform's reason, not a person's check."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.RECONCILE_DELAY_S = 0
    fake = serve(ThreadsFake, processing_fails=1.0)
    account = _account(fake, workspace_a, "threads")
    rendition = _photo_publication(workspace_a, account, "A loaf").renditions.get()
    worker = _worker()
    _drain(worker, rendition)
    assert rendition.status == "waiting"
    # Its poll was lost with its worker: handed to reconciliation.
    with transaction.atomic():
        rendition.transition_to(Rendition.Status.PUBLISHING)
        fail_ambiguous(rendition, {"kind": "outcome_unknown", "message": "Worker lost."})
    Job.objects.unfinished().exclude(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(
        status="cancelled"
    )
    _run_waiting_jobs_now(worker, rendition)

    assert (rendition.status, rendition.ambiguous) == ("failed", False), rendition.last_error
    assert rendition.last_error["code"] == "FAILED_PROCESSING_VIDEO"
    assert rendition.last_error["kind"] == "content_rejected"
    assert fake.published() == [] and fake.container_creations == 1


@pytest.mark.django_db(transaction=True)
def test_a_status_check_lost_before_the_containers_expired_leaves_no_doubt(
    serve, settings, workspace_a, tmp_path
):
    """A status check (which publishes) was lost with its worker, then every container read
    EXPIRED: each was read unpublished before it was replaced, so that lost check made no
    post either. A plain failure, not a person's check."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.RECONCILE_DELAY_S = 0
    fake = serve(ThreadsFake)
    account = _switched_account(fake, workspace_a, "threads", "containers_expire")
    rendition = _photo_publication(workspace_a, account, "Rye at dusk").renditions.get()
    worker = _worker()
    _drain(worker, rendition)
    assert rendition.status == "waiting"
    DeliveryAttempt.objects.create(  # a check whose worker died mid-call
        rendition=rendition,
        workspace_id=rendition.workspace_id,
        kind=DeliveryAttempt.Kind.POLL,
        segment_position=0,
        worker="gone",
    )
    for _ in range(4):
        if rendition.status == "failed" and not Job.objects.unfinished().exists():
            break
        fake.clock.now += 1
        _run_waiting_jobs_now(worker, rendition)

    assert (rendition.status, rendition.ambiguous) == ("failed", False), rendition.last_error
    assert rendition.last_error["code"] == "container_expired_again"
    assert rendition.delivery_attempts.filter(outcome=DeliveryAttempt.Outcome.LOST).exists()
    assert fake.published() == [] and fake.container_creations == 2
