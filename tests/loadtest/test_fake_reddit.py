"""The Reddit adapter against the Reddit fake served over HTTP: self, image and video posts
(with their body text), media posts found in the submissions once Reddit made them, a lost
submit settled by the lagging listing, rate limits, and a token refresh."""

import io
import time
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone

from apps.accounts import services as account_services
from apps.providers.base import MediaPayload, PublishContext, SegmentPayload, get_adapter
from apps.providers.errors import ErrorKind, ProviderError
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.reddit import MEDIA_HOST, RedditFake
from loadtest.platform_fakes.server import FakeServer
from tests.providers.social_helpers import make_account

TITLE = "soak-9d0e My first rye"
TEXT = "soak-9d0e Crumb shot and method below."


@pytest.fixture
def fake(settings):
    fake = RedditFake(FaultPlan(rates={}, processing_s=0.2, listing_lag_s=0.4, hang_s=1.5))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 1
    settings.REDDIT_CLIENT_ID, settings.REDDIT_CLIENT_SECRET = "rd-id", "rd-secret"
    yield fake
    server.stop()


@pytest.fixture
def account(fake, workspace_a):
    opened = fake.new_account("baker")
    return make_account(
        workspace_a,
        "reddit",
        remote_id=opened["remote_id"],
        handle=opened["handle"],
        credentials=opened["credentials"],
    )


def _ctx(account, saved=None, **settings):
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings={"subreddit": "r/Breadit", "title": TITLE, **settings},
        rendition_id=31,
        idempotency_base="rendition-31",
        checkpoint={},
        checkpoint_saver=saved,
    )


def _media(kind: str, mime: str, data: bytes) -> MediaPayload:
    return MediaPayload(1, kind, mime, len(data), "", lambda: io.BytesIO(data))


def _found(adapter, ctx, pending, *, within_s=3.0):
    deadline = time.monotonic() + within_s
    while pending.pending:
        assert time.monotonic() < deadline, "the post never showed in the submissions"
        time.sleep(0.05)
        pending = adapter.poll_segment(ctx, pending)
    return pending


def test_a_self_post_is_published_at_once_with_its_text(fake, account):
    done = get_adapter("reddit").publish_segment(
        _ctx(account), SegmentPayload(0, TEXT), reply_to=None
    )

    [post] = fake.published()
    assert done.provider_post_id == post.id and not done.pending
    assert done.provider_url.startswith("https://www.reddit.com/r/Breadit/comments/")
    assert (post.text, post.extra["kind"], post.extra["title"]) == (TEXT, "self", TITLE)


def test_an_image_post_keeps_its_body_text_and_is_found_once_made(fake, account):
    adapter, ctx = get_adapter("reddit"), _ctx(account)
    image = _media("image", "image/jpeg", b"\xff\xd8\xff" + b"j" * 2000)

    pending = adapter.publish_segment(ctx, SegmentPayload(0, TEXT, [image]), reply_to=None)
    done = _found(adapter, ctx, pending)

    [post] = fake.published()
    assert pending.pending and done.provider_post_id == post.id
    assert post.extra["kind"] == "image" and post.text == TEXT
    assert post.extra["url"].startswith(f"https://{MEDIA_HOST}/rte_images/")


def test_a_video_post_is_sent_as_a_video_with_a_poster(fake, account):
    adapter, ctx = get_adapter("reddit"), _ctx(account)
    video = _media("video", "video/mp4", b"\x00\x00\x00\x18ftypmp42" + b"v" * 5000)

    pending = adapter.publish_segment(ctx, SegmentPayload(0, TEXT, [video]), reply_to=None)
    done = _found(adapter, ctx, pending)

    [post] = fake.published()
    assert done.provider_post_id == post.id
    assert post.extra["kind"] == "video" and post.text == TEXT
    assert post.extra["url"].startswith(f"https://{MEDIA_HOST}/rte_videos/")
    assert post.extra["video_poster_url"].startswith(f"https://{MEDIA_HOST}/rte_images/")


def test_a_lost_submit_is_settled_by_the_listing_once_it_catches_up(fake, account):
    adapter, ctx = get_adapter("reddit"), _ctx(account)
    fake.faults.rates.update(timeout_after_accept=1.0, listing_lag=1.0)
    started = timezone.now() - timedelta(seconds=1)

    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(ctx, SegmentPayload(0, TEXT), reply_to=None)

    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN and not err.value.retryable
    fake.faults.rates.clear()
    [post] = fake.published()
    deadline = time.monotonic() + 3
    found = adapter.lookup_segment(ctx, SegmentPayload(0, TEXT), not_before=started)
    while found is None:  # the listing lags behind the post
        assert time.monotonic() < deadline
        time.sleep(0.1)
        found = adapter.lookup_segment(ctx, SegmentPayload(0, TEXT), not_before=started)
    assert found.provider_post_id == post.id
    assert len(fake.published()) == 1


def test_a_429_waits_for_the_window_reset_and_stores_nothing(fake, account):
    fake.faults.rates["rate_limit"] = 1.0

    with pytest.raises(ProviderError) as err:
        get_adapter("reddit").publish_segment(_ctx(account), SegmentPayload(0, TEXT), reply_to=None)

    assert err.value.kind == ErrorKind.RATE_LIMITED and err.value.http_status == 429
    assert err.value.retry_at - timezone.now() <= timedelta(seconds=fake.faults.retry_after_s)
    assert fake.published() == []


def test_every_answer_carries_the_rate_limit_headers(fake, account, settings):
    token = account_services.social_account_credentials(account)["access_token"]
    response = httpx.get(
        f"{settings.PROVIDER_API_REDIRECT}/oauth.reddit.com/api/v1/me",
        headers={"Authorization": f"Bearer {token}"},
    )

    assert response.json()["name"] == "baker"
    assert response.headers["X-Ratelimit-Used"] == "1"
    assert float(response.headers["X-Ratelimit-Remaining"]) == 999
    assert 0 < int(response.headers["X-Ratelimit-Reset"]) <= 600


def test_a_rate_limited_listing_poll_is_retried_later(fake, account):
    adapter, ctx = get_adapter("reddit"), _ctx(account)
    image = _media("image", "image/png", b"\x89PNG" + b"p" * 100)
    pending = adapter.publish_segment(ctx, SegmentPayload(0, "", [image]), reply_to=None)
    fake.faults.rates["poll_rate_limit"] = 1.0

    with pytest.raises(ProviderError) as err:
        adapter.poll_segment(ctx, pending)

    assert err.value.kind == ErrorKind.RATE_LIMITED and err.value.retryable
    fake.faults.rates.clear()
    assert _found(adapter, ctx, pending).provider_post_id == fake.published()[0].id


def test_a_refresh_gives_a_token_that_publishes(fake, account):
    adapter = get_adapter("reddit")
    account.token_expires_at = timezone.now()
    old = account_services.social_account_credentials(account)

    fresh = adapter.refresh_credentials(account, old)

    assert fresh["access_token"] != old["access_token"]
    assert fresh["refresh_token"] == old["refresh_token"]
    ctx = _ctx(account)
    ctx = PublishContext(**{**ctx.__dict__, "credentials": fresh})
    assert not adapter.publish_segment(ctx, SegmentPayload(0, TEXT), reply_to=None).pending
