"""YouTube's resumable upload sessions expire (about a week; Google answers 404 or 410). A
session that expires before the video's final byte reached it cannot hold a video, so the
upload starts over in a new session, also when it expires under a chunk mid-upload; one
that expires after the final byte may hold the video, and is never replaced. The real
adapter against the YouTube fake."""

from __future__ import annotations

import io
import time

import pytest

from apps.accounts import services as account_services
from apps.providers.base import MediaPayload, PublishContext, SegmentPayload, get_adapter
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.youtube import media as youtube_media
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.youtube import CHUNK_MULTIPLE, SESSION_TTL_S, YouTubeFake
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db

VIDEO = bytes(range(256)) * 4096 + b"tail"  # 1 MiB and 4 bytes: five chunks of 256 KiB


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


class OnChunk(FaultPlan):
    """`session_expires` strikes the n-th chunk PUT (counting from 1) only."""

    def __init__(self, n: int) -> None:
        super().__init__(rates={}, processing_s=0.3)
        self.n, self.seen = n, 0

    def strikes(self, fault: str) -> bool:
        if fault != "session_expires":
            return False
        self.seen += 1
        return self.seen == self.n


@pytest.fixture
def serve(settings, monkeypatch):
    servers = []

    def start(faults: FaultPlan | None = None, **options) -> YouTubeFake:
        fake = YouTubeFake(faults or FaultPlan(rates={}, processing_s=0.3), **options)
        fake.clock = Clock()
        servers.append(FakeServer([fake]).start())
        settings.PROVIDER_API_REDIRECT = servers[-1].base_url
        return fake

    settings.PROVIDER_TIMEOUT_S = 1
    settings.GOOGLE_CLIENT_ID, settings.GOOGLE_CLIENT_SECRET = "g-id", "g-secret"
    monkeypatch.setattr(youtube_media, "CHUNK_SIZE", CHUNK_MULTIPLE)
    yield start
    for server in servers:
        server.stop()


def _account(fake, workspace):
    opened = fake.new_account("baker")
    return make_account(
        workspace,
        "youtube",
        remote_id=opened["remote_id"],
        handle=opened["handle"],
        credentials=opened["credentials"],
    )


def _ctx(account, checkpoint: dict | None = None) -> PublishContext:
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings={"title": "Sourdough, start to finish"},
        rendition_id=21,
        idempotency_base="rendition-21",
        checkpoint=dict(checkpoint or {}),
    )


def _segment(data: bytes = VIDEO) -> SegmentPayload:
    video = MediaPayload(
        media_id=1,
        kind="video",
        mime_type="video/mp4",
        size_bytes=len(data),
        alt_text="",
        open=lambda: io.BytesIO(data),
    )
    return SegmentPayload(0, "How this loaf was made.", [video])


@pytest.mark.parametrize("gone_status", [404, 410])
def test_a_session_expiring_mid_upload_starts_over_in_a_new_one(serve, workspace_a, gone_status):
    fake = serve(OnChunk(3), gone_status=gone_status)
    ctx = _ctx(_account(fake, workspace_a))

    done = get_adapter("youtube").publish_segment(ctx, _segment(), reply_to=None)

    [video] = fake.published()
    assert done.provider_post_id == video.id
    assert len(fake.sessions) == 2
    [holding] = [key for key, session in fake.sessions.items() if session["video_id"]]
    assert f"upload_id={holding}&" in ctx.checkpoint["upload_session_uri"]


def test_a_session_expiring_under_the_final_chunk_starts_over_too(serve, workspace_a):
    fake = serve(OnChunk(5))  # the fifth chunk is the last
    ctx = _ctx(_account(fake, workspace_a))

    done = get_adapter("youtube").publish_segment(ctx, _segment(), reply_to=None)

    [video] = fake.published()
    assert done.provider_post_id == video.id and len(fake.sessions) == 2
    assert ctx.checkpoint["upload_final_sent"] is True


def test_a_week_old_session_of_an_interrupted_upload_is_replaced(serve, workspace_a):
    fake = serve()
    account = _account(fake, workspace_a)
    fake.faults.rates["drop_mid_upload"] = 1.0
    ctx = _ctx(account)
    with pytest.raises(ProviderError):
        get_adapter("youtube").publish_segment(ctx, _segment(), reply_to=None)
    fake.faults.rates.clear()
    fake.clock.now += SESSION_TTL_S + 1  # the next attempt comes a week later

    done = get_adapter("youtube").publish_segment(
        _ctx(account, ctx.checkpoint), _segment(), reply_to=None
    )

    [video] = fake.published()
    assert done.provider_post_id == video.id and len(fake.sessions) == 2


def test_a_session_gone_after_an_earlier_final_byte_is_never_replaced(serve, workspace_a):
    fake = serve()
    account = _account(fake, workspace_a)
    fake.faults.rates["timeout_after_accept"] = 1.0
    ctx = _ctx(account)
    with pytest.raises(ProviderError):
        get_adapter("youtube").publish_segment(ctx, _segment(), reply_to=None)
    fake.faults.rates.clear()
    fake.expire_sessions()

    with pytest.raises(ProviderError) as gone:
        get_adapter("youtube").publish_segment(
            _ctx(account, ctx.checkpoint), _segment(), reply_to=None
        )

    assert (gone.value.kind, gone.value.code) == (ErrorKind.OUTCOME_UNKNOWN, "session_gone")
    assert len(fake.published()) == 1 and len(fake.sessions) == 1


def test_after_a_session_gone_past_its_final_byte_only_a_lookup_settles_it(serve, workspace_a):
    """Every resend into the dead session would be unknown again (reconciliation resent
    once a second for days): the adapter says so, and reconciliation looks it up."""
    fake = serve()
    account = _account(fake, workspace_a)
    adapter = get_adapter("youtube")
    fake.faults.rates["timeout_after_accept"] = 1.0
    ctx = _ctx(account)
    with pytest.raises(ProviderError):
        adapter.publish_segment(ctx, _segment(), reply_to=None)
    fake.faults.rates.clear()
    assert adapter.resend_settles(_ctx(account, ctx.checkpoint))  # the session may resume
    fake.expire_sessions()

    resent = _ctx(account, ctx.checkpoint)
    with pytest.raises(ProviderError):
        adapter.publish_segment(resent, _segment(), reply_to=None)

    assert not adapter.resend_settles(_ctx(account, resent.checkpoint))


class DropsFinalThenExpires(FaultPlan):
    """The final chunk's connection drops after half of it landed (chunk PUT 5), then the
    session expires under the resend's first chunk PUT (6)."""

    def __init__(self) -> None:
        super().__init__(rates={}, processing_s=0.3)
        self.seen: dict[str, int] = {}

    def strikes(self, fault: str) -> bool:
        self.seen[fault] = self.seen.get(fault, 0) + 1
        return (fault, self.seen[fault]) in {("drop_mid_upload", 5), ("session_expires", 6)}


def test_a_final_byte_the_live_session_never_got_is_not_sent_and_its_loss_restarts(
    serve, workspace_a
):
    """The final chunk's answer never came, but the session, probed, says it holds less than
    the video: no video came of it. A session lost after that is a clean restart in a new
    session, not an unknown outcome left to a person."""
    fake = serve(DropsFinalThenExpires())
    account = _account(fake, workspace_a)
    adapter = get_adapter("youtube")
    ctx = _ctx(account)
    with pytest.raises(ProviderError) as dropped:
        adapter.publish_segment(ctx, _segment(), reply_to=None)
    assert dropped.value.kind == ErrorKind.OUTCOME_UNKNOWN

    resent = _ctx(account, ctx.checkpoint)
    done = adapter.publish_segment(resent, _segment(), reply_to=None)

    [video] = fake.published()
    assert done.provider_post_id == video.id and len(fake.sessions) == 2
    assert adapter.resend_settles(_ctx(account, resent.checkpoint))


def test_two_sessions_ending_in_a_row_leave_it_to_the_next_attempt(serve, workspace_a):
    fake = serve(FaultPlan(rates={"session_expires": 1.0}, processing_s=0.3))
    ctx = _ctx(_account(fake, workspace_a))

    with pytest.raises(ProviderError) as gone:
        get_adapter("youtube").publish_segment(ctx, _segment(), reply_to=None)

    assert gone.value.code == "session_gone_again" and gone.value.retryable is True
    assert fake.published() == [] and len(fake.sessions) == 2
    assert ctx.checkpoint["upload_final_sent"] is False
