"""The real X adapter against the X fake, served over HTTP."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime

import httpx
import pytest

from apps.accounts import services as account_services
from apps.providers import httpcall
from apps.providers.base import PublishContext, ReplyTarget, SegmentPayload, get_adapter
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.x import media as x_media
from apps.publishing.delivery.context import store_refreshed_credentials
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.x import DUPLICATE, FAKE, LIMITS, XFake
from tests.providers.social_helpers import image, make_account

pytestmark = pytest.mark.django_db


class Clock:
    """The platform's clock, moved by the adapter's waits (so processing takes no time)."""

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
    fake = XFake(FaultPlan(hang_s=1.0, processing_s=3.0))
    fake.clock = clock
    return fake


@pytest.fixture
def server(fake, settings):
    settings.X_CLIENT_ID = "x-client"
    settings.X_CLIENT_SECRET = "x-secret"
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.5
    yield server
    server.stop()


@pytest.fixture
def account(workspace_a, fake, server):
    opened = fake.new_account("alice")
    return make_account(
        workspace_a,
        "x",
        remote_id=opened["remote_id"],
        handle=opened["handle"],
        credentials=opened["credentials"],
        settings=opened["settings"],
    )


def _ctx(account, rendition_id: int = 51, saved: list | None = None) -> PublishContext:
    """A context shaped like the pipeline's: stable idempotency base, persisted checkpoint."""
    saved = [] if saved is None else saved
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings={},
        rendition_id=rendition_id,
        idempotency_base=f"rendition-{rendition_id}",
        checkpoint={},
        checkpoint_saver=saved.append,
        credentials_saver=lambda fresh: store_refreshed_credentials(account, fresh),
    )


def _publish(ctx, text: str, *, position: int = 0, media=(), reply_to=None):
    return get_adapter("x").publish_segment(
        ctx, SegmentPayload(position, text, list(media)), reply_to=reply_to
    )


def _video(media_id: int = 5, data: bytes = b"\x00\x00\x00\x18ftypmp42" * 3):
    return image(media_id=media_id, kind="video", mime="video/mp4", data=data, alt="")


def test_the_module_names_its_fake_and_sample_content_carries_the_marker():
    assert FAKE is XFake
    for seed in range(20):
        content = XFake().sample_content(random.Random(seed), "M-17")
        texts = [s["text"] for s in content["segments"]]
        assert "M-17" in texts[0]
        assert len(set(texts)) == len(texts)  # X refuses a repeated text


def test_a_text_post_lands_once(fake, account):
    published = _publish(_ctx(account), "Hello from the fake")

    [post] = fake.published()
    assert post.id == published.provider_post_id
    assert post.text == "Hello from the fake"
    assert post.account == account.remote_id
    assert published.provider_url == f"https://x.com/alice/status/{post.id}"


def test_a_thread_replies_to_the_previous_post(fake, account):
    ctx = _ctx(account)
    root = _publish(ctx, "one")
    second = _publish(ctx, "two", position=1, reply_to=ReplyTarget(root, root))
    third = _publish(ctx, "three", position=2, reply_to=ReplyTarget(root, second))

    posts = {p.id: p for p in fake.published()}
    assert len(posts) == 3
    assert posts[second.provider_post_id].reply_to == root.provider_post_id
    assert posts[third.provider_post_id].reply_to == second.provider_post_id


def test_an_image_goes_in_one_upload_with_its_alt_text(fake, account):
    _publish(_ctx(account), "a picture", media=[image(alt="A red square")])

    [post] = fake.published()
    [media] = [fake.media[m] for m in post.media]
    assert media["category"] == "tweet_image"
    assert media["alt_text"] == "A red square"
    uploads = [path for method, path in fake.calls if path.startswith("/2/media/upload")]
    assert uploads == ["/2/media/upload"]


def test_a_video_is_chunked_polled_while_processing_and_kept_in_the_checkpoint(
    fake, account, monkeypatch
):
    monkeypatch.setattr(x_media, "CHUNK_BYTES", 16)
    saved: list[dict] = []
    ctx = _ctx(account, saved=saved)
    video = _video()

    _publish(ctx, "a clip", media=[video])

    [post] = fake.published()
    [media_id] = post.media
    media = fake.media[media_id]
    assert media["category"] == "tweet_video"
    assert media["size"] == 36 and sorted(media["segments"]) == [0, 1, 2]
    assert fake._processing(media)["state"] == "succeeded"
    calls = [(m, p) for m, p in fake.calls if p.startswith("/2/media/")]
    assert calls[:5] == [
        ("POST", "/2/media/upload/initialize"),
        ("POST", f"/2/media/upload/{media_id}/append"),
        ("POST", f"/2/media/upload/{media_id}/append"),
        ("POST", f"/2/media/upload/{media_id}/append"),
        ("POST", f"/2/media/upload/{media_id}/finalize"),
    ]
    assert ("GET", "/2/media/upload") in calls[5:]  # status polls while processing
    # Kept before the first wait, so a killed worker resumes the same upload.
    assert saved[0]["x_media_s0"] == {"5": media_id}


def test_media_that_fails_processing_is_rejected_and_nothing_is_posted(fake, account):
    fake.faults.rates["processing_fails"] = 1.0

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "a clip", media=[_video()])

    assert caught.value.kind == ErrorKind.CONTENT_REJECTED
    assert caught.value.code == "media_processing_failed"
    assert fake.published() == []


def test_slow_processing_waits_for_the_next_attempt_without_uploading_again(
    fake, account, monkeypatch
):
    monkeypatch.setattr(x_media, "WAIT_BUDGET_S", 5.0)
    fake.faults.rates["slow_processing"] = 1.0  # 4 x 3 s
    ctx = _ctx(account)

    with pytest.raises(ProviderError) as caught:
        _publish(ctx, "a slow clip", media=[_video()])
    assert caught.value.kind == ErrorKind.MEDIA_PROCESSING and caught.value.retryable

    fake.clock.now += 10
    _publish(ctx, "a slow clip", media=[_video()])

    assert len(fake.published()) == 1
    assert [p for _, p in fake.calls].count("/2/media/upload/initialize") == 1


def test_a_dropped_chunk_is_sent_again_and_the_post_lands(fake, account):
    fake.faults = FaultPlan(rates={"drop_mid_upload": 1.0}, processing_s=1.0)
    real = fake.faults.strikes
    dropped: list[bool] = []

    def once(fault: str) -> bool:
        if fault == "drop_mid_upload":
            hit = not dropped
            dropped.append(True)
            return hit
        return real(fault)

    fake.faults.strikes = once
    _publish(_ctx(account), "a clip", media=[_video()])

    [post] = fake.published()
    appends = [p for _, p in fake.calls if p.endswith("/append")]
    assert len(appends) == 2  # the dropped one and its resend


def test_a_timeout_after_accept_is_unknown_and_a_resend_is_refused_as_the_same_post(fake, account):
    ctx = _ctx(account)
    adapter = get_adapter("x")
    assert adapter.is_retry_safe(account) is False  # X has no idempotency key
    fake.faults.rates["timeout_after_accept"] = 1.0

    with pytest.raises(ProviderError) as caught:
        _publish(ctx, "once only")
    assert caught.value.kind == ErrorKind.OUTCOME_UNKNOWN
    [stored] = fake.published()  # X kept it

    fake.faults.rates.clear()
    with pytest.raises(ProviderError) as again:
        _publish(ctx, "once only")

    # X answers 403 duplicate content; the adapter finds and names the post it matched.
    assert again.value.kind == ErrorKind.DUPLICATE_CONTENT
    assert again.value.http_status == 403
    assert again.value.message == DUPLICATE
    assert again.value.existing_post_id == stored.id
    assert len(fake.published()) == 1


def test_the_lookup_finds_the_post_once_the_timeline_shows_it(fake, account, clock):
    ctx = _ctx(account)
    fake.faults.rates.update(timeout_after_accept=1.0, listing_lag=1.0)
    not_before = datetime.now(UTC)
    with pytest.raises(ProviderError):
        _publish(ctx, "Tom & Jerry https://example.com/find-me")
    fake.faults.rates.clear()
    adapter = get_adapter("x")
    segment = SegmentPayload(0, "Tom & Jerry https://example.com/find-me")

    assert adapter.lookup_segment(ctx, segment, not_before=not_before) is None  # lag
    clock.now += fake.faults.listing_lag_s + 1
    found = adapter.lookup_segment(ctx, segment, not_before=not_before)

    [post] = fake.published()
    assert found is not None and found.provider_post_id == post.id
    assert found.provider_url == f"https://x.com/alice/status/{post.id}"


def test_a_429_is_retryable_at_the_epoch_reset_and_stores_nothing(fake, account, clock):
    fake.faults.rates["rate_limit"] = 1.0
    fake.faults.retry_after_s = 120

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "too fast")

    err = caught.value
    assert err.kind == ErrorKind.RATE_LIMITED and err.http_status == 429
    assert err.retryable is True
    expected = datetime.fromtimestamp(clock.now + 120, UTC)
    assert abs((err.retry_at - expected).total_seconds()) <= 1
    assert fake.published() == []


def test_the_documented_allowance_is_refused_until_the_window_resets(fake, account, clock):
    fake.enforce_limits = True
    fake.usage[(account.remote_id, "tweets")] = (clock.now, LIMITS["tweets"])

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "one too many")

    window_end = datetime.fromtimestamp(clock.now + 15 * 60, UTC)
    assert caught.value.kind == ErrorKind.RATE_LIMITED
    assert abs((caught.value.retry_at - window_end).total_seconds()) <= 1
    clock.now += 15 * 60
    _publish(_ctx(account), "one too many")
    assert len(fake.published()) == 1


def test_a_5xx_after_the_write_is_unknown(fake, account):
    fake.faults.rates["server_error_after"] = 1.0

    with pytest.raises(ProviderError) as caught:
        _publish(_ctx(account), "stored then 503")

    assert caught.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert len(fake.published()) == 1


def test_an_expired_token_is_refreshed_once_and_the_rotated_pair_is_stored(fake, account):
    before = account_services.social_account_credentials(account)
    fake.expire_access_tokens(account.remote_id)

    _publish(_ctx(account), "after a refresh")

    account.refresh_from_db()
    after = account_services.social_account_credentials(account)
    assert after["access_token"] != before["access_token"]
    assert after["refresh_token"] != before["refresh_token"]
    assert before["refresh_token"] not in fake.refresh_tokens  # single use
    assert len(fake.published()) == 1


def test_the_retired_command_form_is_refused(fake, account, server):
    token = account_services.social_account_credentials(account)["access_token"]
    answer = httpx.post(
        f"{server.base_url}/api.x.com/2/media/upload",
        headers={"Authorization": f"Bearer {token}"},
        data={"command": "INIT", "media_type": "video/mp4", "total_bytes": "10"},
    )
    assert answer.status_code == 400
    assert answer.json()["type"] == "https://api.x.com/2/problems/invalid-request"
    assert answer.headers["x-rate-limit-limit"] == str(LIMITS["media_simple"])
    assert fake.media == {}


def test_the_lookup_matches_a_post_whose_bare_domain_and_media_x_shortened(fake, account):
    ctx = _ctx(account)
    fake.faults.rates["timeout_after_accept"] = 1.0
    not_before = datetime.now(UTC)
    text = "Notes on example.com <3 today"
    with pytest.raises(ProviderError):
        _publish(ctx, text, media=[image()])
    fake.faults.rates.clear()

    found = get_adapter("x").lookup_segment(ctx, SegmentPayload(0, text), not_before=not_before)

    [post] = fake.published()
    assert "example.com" not in fake._rendered(post)  # X shows it as a t.co link
    assert found is not None and found.provider_post_id == post.id
