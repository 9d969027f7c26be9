"""The YouTube adapter against the YouTube fake served over HTTP. A worker killed in the
middle of an upload, or after the last byte landed, leaves the session in the persisted
checkpoint; the next attempt resumes that session and the channel holds exactly one video."""

import io
import time

import httpx
import pytest
from django.utils import timezone

from apps.accounts import services as account_services
from apps.providers.base import (
    MediaPayload,
    PublishContext,
    PublishedSegment,
    SegmentPayload,
    get_adapter,
)
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.youtube import media as youtube_media
from loadtest.platform_fakes.base import StoredPost
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.youtube import CHUNK_MULTIPLE, YouTubeFake
from tests.providers.social_helpers import make_account

VIDEO = bytes(range(256)) * 4096 + b"tail"  # 1 MiB and 4 bytes: five chunks of 256 KiB
TITLE = "soak-51c2 Sourdough, start to finish"


@pytest.fixture
def fake(settings, monkeypatch):
    fake = YouTubeFake(FaultPlan(rates={}, processing_s=0.3, hang_s=1.5))
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 1
    settings.GOOGLE_CLIENT_ID, settings.GOOGLE_CLIENT_SECRET = "g-id", "g-secret"
    monkeypatch.setattr(youtube_media, "CHUNK_SIZE", CHUNK_MULTIPLE)
    yield fake
    server.stop()


@pytest.fixture
def account(fake, workspace_a):
    opened = fake.new_account("baker")
    return make_account(
        workspace_a,
        "youtube",
        remote_id=opened["remote_id"],
        handle=opened["handle"],
        credentials=opened["credentials"],
    )


class Saved:
    """Every checkpoint written, with how many requests the fake had seen by then."""

    def __init__(self, fake: YouTubeFake) -> None:
        self.fake = fake
        self.writes: list[tuple[dict, int]] = []

    def __call__(self, checkpoint: dict) -> None:
        self.writes.append((checkpoint, len(self.fake.calls)))

    @property
    def last(self) -> dict:
        return self.writes[-1][0] if self.writes else {}


def _ctx(account, saved, *, settings=None, checkpoint=None):
    """Built like the pipeline builds it; `checkpoint` is what the database holds."""
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings={"title": TITLE} if settings is None else settings,
        rendition_id=21,
        idempotency_base="rendition-21",
        checkpoint=dict(checkpoint or {}),
        checkpoint_saver=saved,
    )


def _segment():
    video = MediaPayload(
        media_id=1,
        kind="video",
        mime_type="video/mp4",
        size_bytes=len(VIDEO),
        alt_text="",
        open=lambda: io.BytesIO(VIDEO),
    )
    return SegmentPayload(position=0, text="soak-51c2 How this loaf was made.", media=[video])


def _puts(fake):
    return [c for c in fake.calls if c[0] == "PUT"]


def test_a_video_is_uploaded_in_chunks_once_and_defaults_to_public(fake, account):
    adapter, saved = get_adapter("youtube"), Saved(fake)

    done = adapter.publish_segment(_ctx(account, saved), _segment(), reply_to=None)

    [video] = fake.published()
    assert done.provider_post_id == video.id and not done.pending
    assert done.provider_url == f"https://www.youtube.com/watch?v={video.id}"
    assert video.extra == {**video.extra, "title": TITLE, "privacy": "public"}
    assert len(_puts(fake)) == 5
    # The session was in the database before the first chunk left.
    first_write, calls_by_then = saved.writes[0]
    assert first_write["upload_session_uri"].startswith("https://www.googleapis.com/upload/")
    assert not [c for c in fake.calls[:calls_by_then] if c[0] == "PUT"]


def test_a_worker_killed_mid_upload_then_resumed_gives_one_video(fake, account):
    adapter, saved = get_adapter("youtube"), Saved(fake)
    fake.faults.rates["drop_mid_upload"] = 1.0

    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(_ctx(account, saved), _segment(), reply_to=None)

    assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE and err.value.retryable
    [session] = fake.sessions.values()
    assert 0 < session["received"] < len(VIDEO)  # half a chunk landed
    persisted = saved.last
    assert persisted["upload_session_uri"].endswith(
        f"upload_id={next(iter(fake.sessions))}&part=snippet,status"
    )

    # The next attempt knows only what the database holds.
    fake.faults.rates.clear()
    again = Saved(fake)
    done = adapter.publish_segment(
        _ctx(account, again, checkpoint=persisted), _segment(), reply_to=None
    )

    assert len(fake.sessions) == 1  # the same session, resumed
    [video] = fake.published()
    assert done.provider_post_id == video.id
    assert session["received"] == len(VIDEO)


def test_a_worker_killed_after_the_last_byte_landed_finds_the_video_on_resume(fake, account):
    adapter, saved = get_adapter("youtube"), Saved(fake)
    fake.faults.rates["timeout_after_accept"] = 1.0

    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(_ctx(account, saved), _segment(), reply_to=None)

    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert saved.last["upload_final_sent"] is True
    fake.faults.rates.clear()
    ctx = _ctx(account, Saved(fake), checkpoint=saved.last)
    found = adapter.lookup_segment(ctx, _segment(), not_before=timezone.now())
    done = adapter.publish_segment(ctx, _segment(), reply_to=None)

    [video] = fake.published()
    assert found.provider_post_id == done.provider_post_id == video.id
    assert len(fake.sessions) == 1


def test_a_session_gone_after_the_last_byte_is_looked_up_in_the_uploads(fake, account):
    adapter, saved = get_adapter("youtube"), Saved(fake)
    started = timezone.now()
    fake.faults.rates["timeout_after_accept"] = 1.0
    with pytest.raises(ProviderError):
        adapter.publish_segment(_ctx(account, saved), _segment(), reply_to=None)
    fake.faults.rates.clear()
    fake.expire_sessions()
    ctx = _ctx(account, Saved(fake), checkpoint=saved.last)

    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(ctx, _segment(), reply_to=None)
    found = adapter.lookup_segment(ctx, _segment(), not_before=started)

    assert err.value.code == "session_gone" and err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert found.provider_post_id == fake.published()[0].id
    assert len(fake.published()) == 1


def test_processing_status_moves_from_uploaded_to_processed(fake, account, settings):
    adapter = get_adapter("youtube")
    done = adapter.publish_segment(_ctx(account, Saved(fake)), _segment(), reply_to=None)
    token = account_services.social_account_credentials(account)["access_token"]

    def status():
        response = httpx.get(
            f"{settings.PROVIDER_API_REDIRECT}/www.googleapis.com/youtube/v3/videos",
            params={"part": "status,processingDetails", "id": done.provider_post_id},
            headers={"Authorization": f"Bearer {token}"},
        )
        [item] = response.json()["items"]
        return item["status"]["uploadStatus"], item["processingDetails"]["processingStatus"]

    assert status() == ("uploaded", "processing")
    time.sleep(0.35)
    assert status() == ("processed", "succeeded")


def test_a_refresh_keeps_the_refresh_token_and_the_new_token_uploads(fake, account):
    adapter = get_adapter("youtube")
    account.token_expires_at = timezone.now()
    old = account_services.social_account_credentials(account)

    fresh = adapter.refresh_credentials(account, old)

    assert fresh["access_token"] != old["access_token"]
    assert fresh["refresh_token"] == old["refresh_token"]
    ctx = _ctx(account, Saved(fake))
    ctx = PublishContext(**{**ctx.__dict__, "credentials": fresh})
    assert not adapter.publish_segment(ctx, _segment(), reply_to=None).pending
    assert len(fake.published()) == 1


def test_an_unknown_token_is_an_auth_error(fake, account):
    ctx = _ctx(account, Saved(fake))
    ctx = PublishContext(**{**ctx.__dict__, "credentials": {"access_token": "ya29.nope"}})

    with pytest.raises(ProviderError) as err:
        get_adapter("youtube").publish_segment(ctx, _segment(), reply_to=None)

    assert err.value.kind == ErrorKind.AUTH_EXPIRED and fake.sessions == {}


# --- the first comment ------------------------------------------------------------------


def _video(fake, account):
    video = fake.store(StoredPost(id="vid00000001", account=account.remote_id, text=TITLE))
    return PublishedSegment(provider_post_id=video.id)


def _ours(fake, video):
    return [c for c in fake.comments.get(video.provider_post_id, []) if c["name"] == "baker"]


def test_a_first_comment_is_a_thread_under_the_video_and_is_found_again(fake, account):
    adapter, ctx = get_adapter("youtube"), _ctx(account, Saved(fake))
    video = _video(fake, account)
    fake.add_comment(video.provider_post_id, "viewer", "Which flour?")

    made = adapter.publish_comment(ctx, video, "Recipe in the description", key="c-1")

    [ours] = _ours(fake, video)
    assert (ours["actor"], ours["message"]["text"], ours["parent"]) == (
        account.remote_id,
        "Recipe in the description",
        None,
    )
    assert made.provider_post_id == ours["id"]
    assert made.provider_url == f"https://www.youtube.com/watch?v=vid00000001&lc={ours['id']}"
    found = adapter.find_comment(ctx, video, "Recipe in the description", key="c-1")
    assert found is not None and found.provider_post_id == made.provider_post_id
    assert adapter.find_comment(ctx, video, "Which flour?", key="c-1") is None


def test_a_lost_comment_answer_is_found_among_the_threads_not_sent_twice(fake, account):
    adapter, ctx = get_adapter("youtube"), _ctx(account, Saved(fake))
    video = _video(fake, account)
    fake.faults.rates["timeout_after_accept"] = 1.0

    with pytest.raises(ProviderError) as lost:
        adapter.publish_comment(ctx, video, "Recipe in the description", key="c-1")

    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    fake.faults.rates.clear()
    found = adapter.find_comment(ctx, video, "Recipe in the description", key="c-1")
    assert found is not None
    assert [c["id"] for c in _ours(fake, video)] == [found.provider_post_id]


@pytest.mark.parametrize(
    ("fault", "stored"), [("server_error_before", 0), ("server_error_after", 1)]
)
def test_a_backend_error_leaves_the_outcome_to_the_lookup(fake, account, fault, stored):
    adapter, ctx = get_adapter("youtube"), _ctx(account, Saved(fake))
    video = _video(fake, account)
    fake.faults.rates[fault] = 1.0

    with pytest.raises(ProviderError):
        adapter.publish_comment(ctx, video, "Recipe in the description", key="c-1")

    fake.faults.rates.clear()
    assert len(_ours(fake, video)) == stored
    found = adapter.find_comment(ctx, video, "Recipe in the description", key="c-1")
    assert (found is not None) == bool(stored)
