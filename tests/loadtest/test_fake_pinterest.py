"""The real Pinterest adapter against the Pinterest fake over real HTTP: image Pins publish
once, a video is registered, uploaded to storage and checkpointed before the next request,
and the Pin is made once processing succeeded, whatever answers are lost."""

import io
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers.base import MediaPayload, PublishContext, SegmentPayload, get_adapter
from apps.providers.errors import ErrorKind, ProviderError
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.pinterest import PinterestFake
from loadtest.platform_fakes.server import FakeServer


@pytest.fixture
def fake(settings):
    settings.PINTEREST_APP_ID = "pin-app"
    settings.PINTEREST_APP_SECRET = "pin-secret"
    fake = PinterestFake(FaultPlan(rates={}, processing_s=0.3, hang_s=1.5, retry_after_s=60))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.75
    yield fake
    server.stop()


@pytest.fixture
def account(fake):
    return fake.new_account("bakery")


def _ctx(fake, account, *, checkpoint=None, saved=None):
    saved = [] if saved is None else saved
    return PublishContext(
        account=SocialAccount(
            platform="pinterest", remote_id=account["remote_id"], handle=account["handle"]
        ),
        credentials=dict(account["credentials"]),
        settings={"board_id": account["settings"]["board_id"], "title": "Rye"},
        rendition_id=1,
        idempotency_base="rendition-1",
        checkpoint=dict(checkpoint or {}),
        checkpoint_saver=lambda cp: saved.append((len(fake.calls), cp)),
    )


def _segment(kind="image", text="Fresh rye"):
    data = b"\x00\x00\x00\x18ftypmp42video" if kind == "video" else b"\x89PNG"
    media = MediaPayload(
        media_id=1,
        kind=kind,
        mime_type="video/mp4" if kind == "video" else "image/png",
        size_bytes=len(data),
        alt_text="",
        open=lambda: io.BytesIO(data),
        public_url="https://media.example.com/s/1.png" if kind == "image" else None,
    )
    return SegmentPayload(0, text, [media])


def _done(adapter, ctx, pending, *, limit_s=5.0):
    deadline = time.monotonic() + limit_s
    while pending.pending:
        assert time.monotonic() < deadline, "the video never finished processing"
        time.sleep(0.1)
        pending = adapter.poll_segment(ctx, pending)
    return pending


def test_an_image_pin_publishes_once(fake, account):
    adapter = get_adapter("pinterest")

    pin = adapter.publish_segment(_ctx(fake, account), _segment(), reply_to=None)

    [stored] = fake.published()
    assert pin.provider_post_id == stored.id
    assert pin.provider_url == f"https://www.pinterest.com/pin/{stored.id}/"
    assert (stored.text, stored.extra["title"]) == ("Fresh rye", "Rye")


def test_a_video_is_checkpointed_before_the_next_request_then_pinned_once(fake, account):
    adapter = get_adapter("pinterest")
    saved = []
    ctx = _ctx(fake, account, saved=saved)

    pending = adapter.publish_segment(ctx, _segment("video"), reply_to=None)

    assert pending.pending
    calls_then, checkpoint = saved[0]
    assert calls_then == 2  # registered and uploaded, nothing asked since
    assert checkpoint["video_media_id"] == pending.provider_post_id
    done = _done(adapter, ctx, pending)
    [pin] = fake.published()
    assert (done.provider_post_id, pin.media) == (pin.id, ["video"])


def test_a_rate_limited_media_poll_waits_and_duplicates_nothing(fake, account):
    adapter = get_adapter("pinterest")
    saved = []
    ctx = _ctx(fake, account, saved=saved)
    pending = adapter.publish_segment(ctx, _segment("video"), reply_to=None)
    fake.faults.rates["poll_rate_limit"] = 1.0

    with pytest.raises(ProviderError) as throttled:
        adapter.poll_segment(ctx, pending)

    assert throttled.value.kind == ErrorKind.RATE_LIMITED
    assert throttled.value.retry_at >= timezone.now() + timedelta(seconds=50)
    fake.faults.rates.clear()
    again = _ctx(fake, account, checkpoint=saved[-1][1])
    resumed = adapter.publish_segment(again, _segment("video"), reply_to=None)
    assert resumed.provider_post_id == pending.provider_post_id
    _done(adapter, again, resumed)
    assert len(fake.published()) == 1
    assert len(fake.media) == 1


def test_a_lost_pin_answer_is_found_on_the_board(fake, account):
    adapter = get_adapter("pinterest")
    ctx = _ctx(fake, account)
    fake.faults.rates["timeout_after_accept"] = 1.0
    with pytest.raises(ProviderError) as lost:
        adapter.publish_segment(ctx, _segment(), reply_to=None)
    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    fake.faults.rates.clear()

    found = adapter.lookup_segment(
        ctx, _segment(), not_before=timezone.now() - timedelta(minutes=1)
    )

    [pin] = fake.published()
    assert found.provider_post_id == pin.id


def test_a_lost_pin_answer_is_found_on_a_busy_board_past_the_first_page(fake, account):
    adapter = get_adapter("pinterest")
    ctx = _ctx(fake, account)
    fake.faults.rates["timeout_after_accept"] = 1.0
    with pytest.raises(ProviderError):
        adapter.publish_segment(ctx, _segment(), reply_to=None)
    fake.faults.rates.clear()
    for n in range(130):  # the board takes many Pins after ours, newest first
        adapter.publish_segment(ctx, _segment(text=f"later pin {n}"), reply_to=None)

    found = adapter.lookup_segment(
        ctx, _segment(), not_before=timezone.now() - timedelta(minutes=1)
    )

    ours = next(p for p in fake.published() if p.text == _segment().text)
    assert found is not None and found.provider_post_id == ours.id


def test_a_video_pinterest_cannot_process_is_rejected(fake, account):
    adapter = get_adapter("pinterest")
    fake.faults.rates["processing_fails"] = 1.0
    ctx = _ctx(fake, account)
    pending = adapter.publish_segment(ctx, _segment("video"), reply_to=None)
    time.sleep(0.4)

    with pytest.raises(ProviderError) as failed:
        adapter.poll_segment(ctx, pending)

    assert (failed.value.kind, failed.value.code) == (ErrorKind.CONTENT_REJECTED, "media_failed")
    assert fake.published() == []


def test_a_refresh_hands_out_a_new_pair_and_spends_the_old_refresh_token(fake, account):
    adapter = get_adapter("pinterest")
    ctx = _ctx(fake, account)
    ctx.account.token_expires_at = timezone.now() + timedelta(hours=2)

    fresh = adapter.refresh_credentials(ctx.account, dict(account["credentials"]))

    assert fake.tokens[fresh["access_token"]] == account["remote_id"]
    assert fresh["refresh_token"] != account["credentials"]["refresh_token"]
    assert account["credentials"]["refresh_token"] not in fake.refresh_tokens
    ctx = _ctx(fake, account)
    ctx.credentials.update(fresh)
    assert not adapter.publish_segment(ctx, _segment(), reply_to=None).pending
