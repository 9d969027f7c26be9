"""The real Mastodon adapter against the Mastodon fake, served over HTTP."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta

import pytest

from apps.accounts import services as account_services
from apps.providers import httpcall
from apps.providers.base import PublishContext, ReplyTarget, SegmentPayload, get_adapter
from apps.providers.errors import ErrorKind, ProviderError
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.mastodon import FAKE, MastodonFake
from loadtest.platform_fakes.server import FakeServer
from tests.providers.social_helpers import image, make_account

pytestmark = pytest.mark.django_db


class Clock:
    """The instance's clock, moved by the adapter's waits (so media polls take no time)."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(httpcall, "sleep", clock.sleep)
    return clock


@pytest.fixture
def fake(clock):
    fake = MastodonFake(FaultPlan(hang_s=1.0))
    fake.clock = clock
    return fake


@pytest.fixture
def server(fake, settings):
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.5
    yield server
    server.stop()


@pytest.fixture
def account(workspace_a, fake, server):
    opened = fake.new_account("alice")
    return make_account(workspace_a, "mastodon", **opened)


def _ctx(account, rendition_id: int = 41, saved: list | None = None) -> PublishContext:
    """A context shaped like the pipeline's: stable idempotency base, persisted checkpoint."""
    saved = [] if saved is None else saved
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings={"visibility": "unlisted"},
        rendition_id=rendition_id,
        idempotency_base=f"rendition-{rendition_id}",
        checkpoint={},
        checkpoint_saver=saved.append,
    )


def _publish(ctx, text: str, *, position: int = 0, media=(), reply_to=None):
    return get_adapter("mastodon").publish_segment(
        ctx, SegmentPayload(position, text, list(media)), reply_to=reply_to
    )


def test_the_module_names_its_fake_and_sample_content_carries_the_marker():
    assert FAKE is MastodonFake
    content = MastodonFake().sample_content(random.Random(3), "M-17")
    assert "M-17" in content["segments"][0]["text"]


def test_a_text_post_lands_once_with_the_segment_key(fake, account):
    published = _publish(_ctx(account), "Hello from the fake")

    [post] = fake.published()
    assert post.id == published.provider_post_id
    assert post.text == "Hello from the fake"
    assert post.idempotency_key == "rendition-41-s0"
    assert post.extra["visibility"] == "unlisted"
    assert published.provider_url == f"https://mastodon.fake/@alice/{post.id}"


def test_a_thread_replies_to_the_previous_status(fake, account):
    ctx = _ctx(account)
    root = _publish(ctx, "one")
    second = _publish(ctx, "two", position=1, reply_to=ReplyTarget(root, root))
    third = _publish(ctx, "three", position=2, reply_to=ReplyTarget(root, second))

    posts = {p.id: p for p in fake.published()}
    assert len(posts) == 3
    assert posts[second.provider_post_id].reply_to == root.provider_post_id
    assert posts[third.provider_post_id].reply_to == second.provider_post_id


def test_an_image_is_attached_with_its_alt_text(fake, account):
    _publish(_ctx(account), "a picture", media=[image(alt="A red square")])

    [post] = fake.published()
    [media] = [fake.media[m] for m in post.media]
    assert media["description"] == "A red square"
    assert media["status_id"] == post.id


def test_a_video_is_polled_until_processed_and_remembered_in_the_checkpoint(fake, account):
    saved: list[dict] = []
    ctx = _ctx(account, saved=saved)
    video = image(media_id=5, kind="video", mime="video/mp4", data=b"\x00\x00mp4")

    _publish(ctx, "a clip", media=[video])

    [post] = fake.published()
    assert fake.media[post.media[0]]["state"] == "ready"
    # Persisted before the wait, so a killed worker resumes the same upload.
    assert saved[0]["mastodon_media_s0"] == {"5": post.media[0]}
    polls = [c for c in fake.calls if c[0] == "GET" and c[1].startswith("/api/v1/media/")]
    assert len(polls) >= 1


def test_media_that_fails_processing_is_rejected_and_nothing_is_posted(fake, account):
    fake.faults = FaultPlan(rates={"processing_fails": 1.0})
    video = image(kind="video", mime="video/mp4")

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "a clip", media=[video])

    assert caught.value.code == "media_processing_failed"
    assert fake.published() == []


def test_a_timeout_after_accept_then_a_resend_under_the_key_gives_one_status(fake, account):
    ctx = _ctx(account)
    fake.faults.rates["timeout_after_accept"] = 1.0

    with pytest.raises(ProviderError) as caught:
        _publish(ctx, "once only")
    assert caught.value.kind == ErrorKind.OUTCOME_UNKNOWN
    [stored] = fake.published()  # the instance kept it

    fake.faults.rates.clear()
    again = _publish(ctx, "once only")  # what reconciliation does within the window

    assert again.provider_post_id == stored.id
    assert len(fake.published()) == 1


def test_the_adapter_declares_no_longer_a_window_than_the_instance_keeps_the_key(
    fake, account, clock
):
    adapter = get_adapter("mastodon")
    assert adapter.is_retry_safe(account) is True
    assert adapter.idempotency_window is not None
    assert adapter.idempotency_window <= timedelta(seconds=fake.idempotency_ttl_s)

    ctx = _ctx(account)
    first = _publish(ctx, "remembered for an hour")
    clock.now += fake.idempotency_ttl_s + 1
    second = _publish(ctx, "remembered for an hour")

    # Past the window the same key makes a second status: only a lookup may settle it then.
    assert second.provider_post_id != first.provider_post_id
    assert len(fake.published()) == 2


def test_after_the_window_the_lookup_finds_the_status_once_the_listing_shows_it(
    fake, account, clock
):
    ctx = _ctx(account)
    fake.faults.rates.update(timeout_after_accept=1.0, listing_lag=1.0)
    not_before = datetime.now(UTC)
    with pytest.raises(ProviderError):
        _publish(ctx, "find me later")
    fake.faults.rates.clear()
    adapter = get_adapter("mastodon")
    segment = SegmentPayload(0, "find me later")

    assert adapter.lookup_segment(ctx, segment, not_before=not_before) is None  # listing lag
    clock.now += fake.faults.listing_lag_s + 1
    found = adapter.lookup_segment(ctx, segment, not_before=not_before)

    [post] = fake.published()
    assert found is not None and found.provider_post_id == post.id


def test_a_429_carries_the_iso_reset_and_stores_nothing(fake, account, clock):
    fake.faults.rates["rate_limit"] = 1.0
    fake.faults.retry_after_s = 120

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "too fast")

    err = caught.value
    assert err.kind == ErrorKind.RATE_LIMITED and err.http_status == 429
    expected = datetime.fromtimestamp(clock.now + 120, UTC)
    assert abs((err.retry_at - expected).total_seconds()) < 1
    assert fake.published() == []


def test_a_5xx_after_the_write_is_unknown_and_the_resend_returns_the_same_status(fake, account):
    ctx = _ctx(account)
    fake.faults.rates["server_error_after"] = 1.0
    with pytest.raises(ProviderError) as caught:
        _publish(ctx, "stored then 500")
    assert caught.value.kind == ErrorKind.OUTCOME_UNKNOWN

    fake.faults.rates.clear()
    again = _publish(ctx, "stored then 500")

    [post] = fake.published()
    assert again.provider_post_id == post.id


def test_a_resend_of_a_media_post_under_the_key_still_gives_one_status(fake, account):
    ctx = _ctx(account)
    fake.faults.rates["timeout_after_accept"] = 1.0
    with pytest.raises(ProviderError):
        _publish(ctx, "with a picture", media=[image()])
    fake.faults.rates.clear()

    again = _publish(ctx, "with a picture", media=[image()])

    [post] = fake.published()
    assert again.provider_post_id == post.id
