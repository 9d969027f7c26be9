"""The TikTok adapter against the TikTok fake served over HTTP: what the fake holds after a
publication, a rate-limited status poll, reconciliation by the listed description, and a
rotated refresh token."""

import io
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts import services as account_services
from apps.providers.base import MediaPayload, PublishContext, SegmentPayload, get_adapter
from apps.providers.errors import ErrorKind, ProviderError
from apps.publishing.delivery.context import store_refreshed_credentials
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.tiktok import STATUS_PER_MINUTE, TikTokFake
from tests.providers.social_helpers import make_account

VIDEO = bytes(range(256)) * 4096  # 1 MiB: under 5 MB, so one chunk
CAPTION = "soak-7f3a Sourdough at dawn #bread"


@pytest.fixture
def fake(settings):
    fake = TikTokFake(FaultPlan(rates={}, processing_s=0.2))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 2
    settings.TIKTOK_CLIENT_KEY, settings.TIKTOK_CLIENT_SECRET = "ck", "cs"
    yield fake
    server.stop()


@pytest.fixture
def account(fake, workspace_a):
    opened = fake.new_account("baker")
    return make_account(
        workspace_a,
        "tiktok",
        remote_id=opened["remote_id"],
        handle=opened["handle"],
        credentials=opened["credentials"],
        settings=opened["settings"],
    )


class Saved:
    """What the checkpoint saver wrote, and how many requests the fake had seen by then."""

    def __init__(self, fake: TikTokFake) -> None:
        self.fake = fake
        self.writes: list[tuple[dict, int]] = []

    def __call__(self, checkpoint: dict) -> None:
        self.writes.append((checkpoint, len(self.fake.calls)))

    @property
    def last(self) -> dict:
        return self.writes[-1][0] if self.writes else {}


def _ctx(account, saved: Saved, *, privacy="PUBLIC_TO_EVERYONE", checkpoint=None):
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings={"privacy_level": privacy},
        rendition_id=11,
        idempotency_base="rendition-11",
        checkpoint=dict(checkpoint or {}),
        checkpoint_saver=saved,
    )


def _segment(text=CAPTION):
    video = MediaPayload(
        media_id=1,
        kind="video",
        mime_type="video/mp4",
        size_bytes=len(VIDEO),
        alt_text="",
        open=lambda: io.BytesIO(VIDEO),
    )
    return SegmentPayload(position=0, text=text, media=[video])


def _poll_until_done(adapter, ctx, pending, *, within_s=5.0):
    deadline = time.monotonic() + within_s
    while pending.pending:
        assert time.monotonic() < deadline, "the video never finished processing"
        time.sleep(0.05)
        pending = adapter.poll_segment(ctx, pending)
    return pending


def test_a_video_is_uploaded_processed_and_published_once(fake, account):
    adapter, saved = get_adapter("tiktok"), Saved(fake)
    ctx = _ctx(account, saved)

    pending = adapter.publish_segment(ctx, _segment(), reply_to=None)

    assert pending.pending and pending.provider_post_id.startswith("v_pub_file~")
    # The publish_id was stored before the first byte went to the upload URL.
    checkpoint, calls_by_then = saved.writes[0]
    assert checkpoint["publish_id"] == pending.provider_post_id
    assert ("PUT", "/video/") not in fake.calls[:calls_by_then]
    done = _poll_until_done(adapter, ctx, pending)
    [video] = fake.published()
    assert done.provider_post_id == video.extra["post_id"]
    assert done.provider_url == f"https://www.tiktok.com/@baker/video/{video.extra['post_id']}"
    assert video.text == CAPTION and video.state == "published"


def test_a_private_video_is_done_without_a_public_id(fake, account):
    adapter, saved = get_adapter("tiktok"), Saved(fake)
    ctx = _ctx(account, saved, privacy="SELF_ONLY")

    pending = adapter.publish_segment(ctx, _segment(), reply_to=None)
    done = _poll_until_done(adapter, ctx, pending)

    assert done.provider_post_id == pending.provider_post_id
    assert len(fake.published()) == 1


def test_a_rate_limited_status_poll_waits_and_leaves_one_video(fake, account):
    adapter, saved = get_adapter("tiktok"), Saved(fake)
    ctx = _ctx(account, saved)
    pending = adapter.publish_segment(ctx, _segment(), reply_to=None)
    fake.faults.rates["poll_rate_limit"] = 1.0

    with pytest.raises(ProviderError) as err:
        adapter.poll_segment(ctx, pending)

    assert err.value.kind == ErrorKind.RATE_LIMITED and err.value.retryable
    assert err.value.code == "rate_limit_exceeded" and err.value.http_status == 429
    assert timedelta(seconds=50) < err.value.retry_at - timezone.now() <= timedelta(minutes=1)
    fake.faults.rates.clear()
    _poll_until_done(adapter, ctx, pending)
    assert len(fake.published()) == 1


def test_the_status_endpoint_answers_30_polls_a_minute_then_429(fake, account):
    adapter, saved = get_adapter("tiktok"), Saved(fake)
    ctx = _ctx(account, saved, privacy="SELF_ONLY")
    pending = adapter.publish_segment(ctx, _segment(), reply_to=None)

    for _ in range(STATUS_PER_MINUTE):
        adapter.poll_segment(ctx, pending)
    with pytest.raises(ProviderError) as err:
        adapter.poll_segment(ctx, pending)

    assert err.value.kind == ErrorKind.RATE_LIMITED and err.value.retry_at is not None


def test_a_worker_killed_mid_upload_leaves_the_publish_id_for_the_next_attempt(fake, account):
    adapter, saved = get_adapter("tiktok"), Saved(fake)
    fake.faults.rates["drop_mid_upload"] = 1.0

    adapter.publish_segment(_ctx(account, saved), _segment(), reply_to=None)

    # A later attempt rebuilt from what was persisted reads the same post's status.
    fake.faults.rates.clear()
    again = _ctx(account, Saved(fake), checkpoint=saved.last)
    found = adapter.lookup_segment(again, _segment(), not_before=timezone.now())
    assert found.pending and found.provider_post_id == saved.last["publish_id"]
    assert fake.calls.count(("POST", "/v2/post/publish/video/init/")) == 1
    assert fake.published() == []  # the dropped upload never completed


def test_reconciliation_without_a_publish_id_finds_the_video_by_its_description(fake, account):
    adapter, saved = get_adapter("tiktok"), Saved(fake)
    ctx = _ctx(account, saved)
    started = timezone.now()
    _poll_until_done(adapter, ctx, adapter.publish_segment(ctx, _segment(), reply_to=None))

    found = adapter.lookup_segment(_ctx(account, Saved(fake)), _segment(), not_before=started)

    assert found is not None
    assert found.provider_post_id == fake.published()[0].extra["post_id"]
    other = _segment("soak-0000 Rye, not sourdough")
    assert adapter.lookup_segment(_ctx(account, Saved(fake)), other, not_before=started) is None


def test_a_refresh_rotates_the_pair_and_the_new_token_publishes(fake, account):
    adapter = get_adapter("tiktok")
    account.token_expires_at = timezone.now() + timedelta(minutes=1)
    old = account_services.social_account_credentials(account)

    fresh = adapter.refresh_credentials(account, old)

    assert fresh["access_token"] != old["access_token"]
    assert fresh["refresh_token"] != old["refresh_token"]
    # Storing the pair is the pipeline's part; the adapter leaves the account alone.
    assert (
        account_services.social_account_credentials(account)["refresh_token"]
        == (old["refresh_token"])
    )
    store_refreshed_credentials(account, fresh)
    account.refresh_from_db()
    account.token_expires_at = timezone.now() + timedelta(minutes=1)
    with pytest.raises(ProviderError) as err:
        adapter.refresh_credentials(account, old)  # the old refresh token died on use
    assert err.value.kind == ErrorKind.AUTH_EXPIRED
    ctx = _ctx(account, Saved(fake))
    assert adapter.publish_segment(ctx, _segment(), reply_to=None).pending


class FirstUploadDropped(FaultPlan):
    """The connection drops during the first chunk PUT only (nothing of it is kept)."""

    def strikes(self, fault: str) -> bool:
        if fault == "drop_mid_upload" and not self.struck.get(fault):
            self.struck[fault] = 1
            return True
        return False


def test_a_dropped_last_chunk_is_sent_again_and_one_video_is_published(fake, account):
    fake.faults = FirstUploadDropped(rates={}, processing_s=0.2)
    adapter, saved = get_adapter("tiktok"), Saved(fake)
    ctx = _ctx(account, saved)

    pending = adapter.publish_segment(ctx, _segment(), reply_to=None)
    _poll_until_done(adapter, ctx, pending)

    assert fake.calls.count(("PUT", "/video/")) == 2
    assert fake.calls.count(("POST", "/v2/post/publish/video/init/")) == 1
    assert len(fake.published()) == 1


def test_a_lost_init_answer_for_our_upload_is_retried_into_one_video(fake, account):
    adapter, saved = get_adapter("tiktok"), Saved(fake)
    fake.faults.rates["server_error_after"] = 1.0  # init stores a publish_id, answers 500
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(_ctx(account, saved), _segment(), reply_to=None)
    assert err.value.retryable and err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE

    fake.faults.rates.clear()
    ctx = _ctx(account, Saved(fake), checkpoint=saved.last)
    _poll_until_done(adapter, ctx, adapter.publish_segment(ctx, _segment(), reply_to=None))

    # The first publish_id never got a byte: no post came of it.
    assert len(fake.uploads) == 2 and len(fake.published()) == 1
