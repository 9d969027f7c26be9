"""The real Threads adapter against the Threads fake over real HTTP: containers are
checkpointed before the next request and published once, a reply chain names its parents,
and a reply whose publish answer is lost is found among the user's replies."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers.base import (
    MediaPayload,
    PublishContext,
    ReplyTarget,
    SegmentPayload,
    get_adapter,
)
from apps.providers.errors import ErrorKind, ProviderError
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.threads import ThreadsFake


@pytest.fixture
def fake(settings):
    fake = ThreadsFake(FaultPlan(rates={}, processing_s=0.3, hang_s=1.5, retry_after_s=60))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.75
    yield fake
    server.stop()


@pytest.fixture
def account(fake):
    return fake.new_account("baker")


def _ctx(fake, account, *, checkpoint=None, saved=None, expires_at=None):
    saved = [] if saved is None else saved
    return PublishContext(
        account=SocialAccount(
            platform="threads",
            remote_id=account["remote_id"],
            handle=account["handle"],
            token_expires_at=expires_at,
        ),
        credentials=dict(account["credentials"]),
        settings={},
        rendition_id=1,
        idempotency_base="rendition-1",
        checkpoint=dict(checkpoint or {}),
        checkpoint_saver=lambda cp: saved.append((len(fake.calls), cp)),
    )


def _image():
    return MediaPayload(
        media_id=1,
        kind="image",
        mime_type="image/jpeg",
        size_bytes=10,
        alt_text="A loaf",
        open=lambda: None,
        public_url="https://media.example.com/s/loaf.jpg",
    )


def _done(adapter, ctx, pending, *, limit_s=5.0):
    deadline = time.monotonic() + limit_s
    while pending.pending:
        assert time.monotonic() < deadline, "the container never finished"
        pending = adapter.poll_segment(ctx, pending)
        time.sleep(0.05 if pending.pending else 0)
    return pending


def test_a_text_post_is_checkpointed_at_once_and_published_once(fake, account):
    adapter = get_adapter("threads")
    saved = []
    ctx = _ctx(fake, account, saved=saved)

    pending = adapter.publish_segment(ctx, SegmentPayload(0, "Rye day"), reply_to=None)

    assert saved[0][0] == 1  # persisted before any request after the container's
    assert saved[0][1]["containers"]["0"]["id"] == pending.provider_post_id
    done = _done(adapter, ctx, pending)
    [post] = fake.published()
    assert (done.provider_post_id, post.text) == (post.id, "Rye day")
    assert done.provider_url.endswith(f"/post/{post.id}")


def test_a_thread_is_a_reply_chain(fake, account):
    adapter = get_adapter("threads")
    ctx = _ctx(fake, account)
    root = _done(
        adapter, ctx, adapter.publish_segment(ctx, SegmentPayload(0, "1/2"), reply_to=None)
    )
    target = ReplyTarget(root=root, parent=root)
    reply = _done(
        adapter,
        ctx,
        adapter.publish_segment(ctx, SegmentPayload(1, "2/2", [_image()]), reply_to=target),
    )

    posts = {p.id: p for p in fake.published()}
    assert posts[reply.provider_post_id].reply_to == root.provider_post_id
    assert posts[reply.provider_post_id].media == ["image"]


def test_a_reply_whose_publish_answer_is_lost_is_found_among_the_replies(fake, account):
    adapter = get_adapter("threads")
    saved = []
    ctx = _ctx(fake, account, saved=saved)
    root = _done(
        adapter, ctx, adapter.publish_segment(ctx, SegmentPayload(0, "1/2"), reply_to=None)
    )
    target = ReplyTarget(root=root, parent=root)
    pending = adapter.publish_segment(ctx, SegmentPayload(1, "2/2"), reply_to=target)
    fake.faults.rates["timeout_after_accept"] = 1.0

    with pytest.raises(ProviderError) as lost:
        adapter.poll_segment(ctx, pending)

    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    fake.faults.rates.clear()
    again = _ctx(fake, account, checkpoint=saved[-1][1])
    found = adapter.lookup_segment(again, SegmentPayload(1, "2/2"), not_before=timezone.now())
    repeated = adapter.publish_segment(again, SegmentPayload(1, "2/2"), reply_to=target)
    reply = next(p for p in fake.published() if p.reply_to)
    assert found.provider_post_id == repeated.provider_post_id == reply.id
    assert len(fake.published()) == 2
    assert fake.container_creations == 2


def test_a_rate_limited_status_poll_waits_and_duplicates_nothing(fake, account):
    adapter = get_adapter("threads")
    saved = []
    ctx = _ctx(fake, account, saved=saved)
    segment = SegmentPayload(0, "With a picture", [_image()])
    pending = adapter.publish_segment(ctx, segment, reply_to=None)
    fake.faults.rates["poll_rate_limit"] = 1.0

    with pytest.raises(ProviderError) as throttled:
        adapter.poll_segment(ctx, pending)

    assert throttled.value.kind == ErrorKind.RATE_LIMITED
    assert throttled.value.retry_at >= timezone.now() + timedelta(seconds=50)
    fake.faults.rates.clear()
    again = _ctx(fake, account, checkpoint=saved[-1][1])
    resumed = adapter.publish_segment(again, segment, reply_to=None)
    done = _done(adapter, again, resumed)
    [post] = fake.published()
    assert done.provider_post_id == post.id
    assert fake.container_creations == 1


def test_failed_video_processing_is_a_content_rejection(fake, account):
    adapter = get_adapter("threads")
    fake.faults.rates["processing_fails"] = 1.0
    ctx = _ctx(fake, account)
    pending = adapter.publish_segment(ctx, SegmentPayload(0, "x", [_image()]), reply_to=None)
    time.sleep(0.4)

    with pytest.raises(ProviderError) as failed:
        adapter.poll_segment(ctx, pending)

    assert failed.value.kind == ErrorKind.CONTENT_REJECTED
    assert fake.published() == []


def test_the_quota_and_a_token_refresh_are_read_from_the_platform(fake, account):
    adapter = get_adapter("threads")
    ctx = _ctx(fake, account)
    _done(adapter, ctx, adapter.publish_segment(ctx, SegmentPayload(0, "one"), reply_to=None))

    usage = adapter.quota_usage(ctx)
    assert (usage["used"], usage["total"], usage["replies_total"]) == (1, 250, 1000)
    ctx.account.token_expires_at = timezone.now() + timedelta(days=2)
    fresh = adapter.refresh_credentials(ctx.account, dict(account["credentials"]))
    assert fake.tokens[fresh["access_token"]] == account["remote_id"]
