"""YouTube through its adapter against a respx fake of the resumable upload protocol. The
fake keeps the bytes each session received and counts the videos it made: an interrupted
upload resumed on the next attempt must leave exactly one video."""

import io
import json
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import respx
import time_machine

from apps.accounts.models import SocialAccount
from apps.providers.base import MediaPayload, PublishContext, SegmentPayload
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.youtube import errors as youtube_errors
from apps.providers.youtube import media as youtube_media
from apps.providers.youtube.adapter import YouTubeAdapter

UPLOAD = "https://www.googleapis.com/upload/youtube/v3/videos"
API = "https://www.googleapis.com/youtube/v3"
DATA = b"0123456789"


class FakeYouTube:
    """Sessions as the resumable protocol describes them: 308 with Range while incomplete,
    201 with the video once the last byte arrived, the same answer to every later probe."""

    def __init__(self, router):
        self.sessions: dict[str, bytearray] = {}
        self.videos: dict[str, str] = {}  # session -> video id
        self.gone: set[str] = set()
        self.router = router
        self.opened = router.post(UPLOAD).mock(side_effect=self.open)
        self.puts = router.put(url__startswith=UPLOAD).mock(side_effect=self.put)

    def open(self, request):
        session = f"{UPLOAD}?uploadType=resumable&upload_id=S{len(self.sessions) + 1}"
        self.sessions[session] = bytearray()
        return httpx.Response(200, headers={"Location": session})

    def put(self, request):
        session = str(request.url)
        if session in self.gone:
            return httpx.Response(404)
        received = self.sessions[session]
        span, total = request.headers["Content-Range"].removeprefix("bytes ").split("/")
        if span != "*":
            first = int(span.split("-")[0])
            assert first == len(received), "a chunk must continue where the session stands"
            received += request.content
        if session in self.videos or len(received) == int(total):
            video_id = self.videos.setdefault(session, f"vid{len(self.videos) + 1}")
            return httpx.Response(201, json={"kind": "youtube#video", "id": video_id})
        headers = {"Range": f"bytes=0-{len(received) - 1}"} if received else {}
        return httpx.Response(308, headers=headers)


@pytest.fixture
def fake():
    with respx.mock(assert_all_called=False) as router:
        yield FakeYouTube(router)


@pytest.fixture(autouse=True)
def _small_chunks(monkeypatch, settings):
    monkeypatch.setattr(youtube_media, "CHUNK_SIZE", 4)
    settings.GOOGLE_CLIENT_ID = "g-client"
    settings.GOOGLE_CLIENT_SECRET = "g-secret"


def _ctx(settings=None, checkpoint=None):
    return PublishContext(
        account=SocialAccount(platform="youtube", remote_id="UC1", handle="@baker"),
        credentials={"access_token": "ya29.TOKEN"},
        settings={"title": "Sourdough", "privacy_status": "unlisted"}
        if settings is None
        else settings,
        rendition_id=9,
        idempotency_base="r9",
        checkpoint={} if checkpoint is None else checkpoint,
    )


def _segment(text="How to bake"):
    video = MediaPayload(
        media_id=1,
        kind="video",
        mime_type="video/mp4",
        size_bytes=len(DATA),
        alt_text="",
        open=lambda: io.BytesIO(DATA),
    )
    return SegmentPayload(0, text, [video])


def test_it_opens_a_session_records_it_and_uploads_in_chunks(fake):
    ctx = _ctx({"title": "Sourdough", "privacy_status": "unlisted", "tags": ["bread"]})

    published = YouTubeAdapter().publish_segment(ctx, _segment(), reply_to=None)

    request = fake.opened.calls.last.request
    assert parse_qs(urlsplit(str(request.url)).query) == {
        "uploadType": ["resumable"],
        "part": ["snippet,status"],
    }
    assert request.headers["X-Upload-Content-Length"] == "10"
    assert request.headers["X-Upload-Content-Type"] == "video/mp4"
    assert request.headers["Authorization"] == "Bearer ya29.TOKEN"
    assert json.loads(request.content) == {
        "snippet": {"title": "Sourdough", "description": "How to bake", "tags": ["bread"]},
        "status": {"privacyStatus": "unlisted", "selfDeclaredMadeForKids": False},
    }
    assert [c.request.headers["Content-Range"] for c in fake.puts.calls] == [
        "bytes 0-3/10",
        "bytes 4-7/10",
        "bytes 8-9/10",
    ]
    assert published.provider_post_id == "vid1"
    assert published.provider_url == "https://www.youtube.com/watch?v=vid1"
    assert published.pending is False
    assert ctx.checkpoint["upload_session_uri"] in fake.sessions


def test_the_session_is_recorded_before_the_first_byte_moves(fake):
    ctx = _ctx()
    seen = []
    original = fake.put

    def spy(request):
        seen.append(ctx.checkpoint.get("upload_session_uri"))
        return original(request)

    fake.puts.mock(side_effect=spy)
    YouTubeAdapter().publish_segment(ctx, _segment(), reply_to=None)
    assert seen and all(uri == str(fake.puts.calls[0].request.url) for uri in seen)


def test_an_interrupted_upload_resumes_the_same_session_without_a_second_video(fake):
    adapter, ctx = YouTubeAdapter(), _ctx()
    calls = {"n": 0}
    original = fake.put

    def drop_second_chunk(request):
        calls["n"] += 1
        if calls["n"] == 2:
            raise httpx.ReadTimeout("connection dropped mid-upload")
        return original(request)

    fake.puts.mock(side_effect=drop_second_chunk)
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(ctx, _segment(), reply_to=None)
    assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE
    assert err.value.retryable is True
    assert ctx.checkpoint["upload_final_sent"] is False

    fake.puts.mock(side_effect=original)
    published = adapter.publish_segment(ctx, _segment(), reply_to=None)

    assert fake.opened.call_count == 1  # one session, hence one video
    ranges = [c.request.headers["Content-Range"] for c in fake.puts.calls]
    # The probe, then the rest from where the session stood.
    assert ranges[-3:] == ["bytes */10", "bytes 4-7/10", "bytes 8-9/10"]
    assert bytes(fake.sessions[ctx.checkpoint["upload_session_uri"]]) == DATA
    assert published.provider_post_id == "vid1"
    assert len(fake.videos) == 1


def test_a_lost_answer_to_the_final_chunk_is_settled_by_probing(fake):
    adapter, ctx = YouTubeAdapter(), _ctx()
    original = fake.put

    def lose_final_answer(request):
        response = original(request)
        if response.status_code == 201:
            raise httpx.ReadTimeout("the answer never came")
        return response

    fake.puts.mock(side_effect=lose_final_answer)
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(ctx, _segment(), reply_to=None)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert adapter.is_retry_safe(ctx.account) is True  # resending only probes the session
    assert ctx.checkpoint["upload_final_sent"] is True

    fake.puts.mock(side_effect=original)
    found = adapter.lookup_segment(ctx, _segment(), not_before=datetime.now(UTC))
    again = adapter.publish_segment(ctx, _segment(), reply_to=None)

    assert found.provider_post_id == again.provider_post_id == "vid1"
    assert fake.opened.call_count == 1
    assert len(fake.videos) == 1


def test_lookup_of_an_incomplete_session_is_none(fake):
    ctx = _ctx()
    session = fake.open(None).headers["Location"]
    fake.sessions[session] += b"0123"
    ctx.checkpoint.update(upload_session_uri=session, upload_size=10, upload_final_sent=False)

    assert YouTubeAdapter().lookup_segment(ctx, _segment(), not_before=datetime.now(UTC)) is None


def test_a_session_gone_before_the_final_byte_is_replaced(fake):
    ctx = _ctx()
    old = fake.open(None).headers["Location"]
    fake.gone.add(old)
    ctx.checkpoint.update(upload_session_uri=old, upload_size=10, upload_final_sent=False)

    published = YouTubeAdapter().publish_segment(ctx, _segment(), reply_to=None)

    assert ctx.checkpoint["upload_session_uri"] != old
    assert published.provider_post_id == "vid1"


def test_a_session_gone_after_the_final_byte_is_never_replaced(fake):
    ctx = _ctx()
    old = fake.open(None).headers["Location"]
    fake.gone.add(old)
    ctx.checkpoint.update(upload_session_uri=old, upload_size=10, upload_final_sent=True)
    opened_before = fake.opened.call_count

    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_segment(ctx, _segment(), reply_to=None)

    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert err.value.code == "session_gone"
    assert fake.opened.call_count == opened_before


def test_after_the_session_is_gone_lookup_lists_the_uploads(fake):
    ctx = _ctx()
    old = fake.open(None).headers["Location"]
    fake.gone.add(old)
    ctx.checkpoint.update(upload_session_uri=old, upload_size=10, upload_final_sent=True)
    since = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    channels = fake.router.get(f"{API}/channels").respond(
        200,
        json={
            "items": [
                {
                    "id": "UC1",
                    "contentDetails": {"relatedPlaylists": {"uploads": "UU1"}},
                }
            ]
        },
    )
    items = fake.router.get(f"{API}/playlistItems").respond(
        200,
        json={
            "items": [
                {"snippet": {"title": "Sourdough", "publishedAt": "2026-04-01T10:00:00Z",
                             "resourceId": {"kind": "youtube#video", "videoId": "old"}}},
                {"snippet": {"title": "Sourdough", "publishedAt": "2026-05-01T12:03:00Z",
                             "resourceId": {"kind": "youtube#video", "videoId": "new"}}},
            ]
        },
    )  # fmt: skip
    # Each candidate since the attempt is read back by its id, with its own title.
    videos = fake.router.get(f"{API}/videos").respond(
        200,
        json={
            "items": [
                {"id": "new", "snippet": {"title": "Sourdough"},
                 "status": {"privacyStatus": "public"}}
            ]
        },
    )  # fmt: skip
    found = YouTubeAdapter().lookup_segment(ctx, _segment(), not_before=since)

    assert parse_qs(urlsplit(str(channels.calls.last.request.url)).query) == {
        "part": ["contentDetails"],
        "mine": ["true"],
    }
    assert parse_qs(urlsplit(str(items.calls.last.request.url)).query)["playlistId"] == ["UU1"]
    assert parse_qs(urlsplit(str(videos.calls.last.request.url)).query)["id"] == ["new"]
    assert found.provider_post_id == "new"


def _google_error(status, reason, message, domain="youtube.video"):
    return httpx.Response(
        status,
        json={
            "error": {
                "code": status,
                "message": message,
                "errors": [{"domain": domain, "reason": reason, "message": message}],
            }
        },
    )


@pytest.mark.parametrize(
    ("response", "kind", "retryable", "action"),
    [
        (_google_error(401, "authError", "Invalid Credentials", "global"),
         ErrorKind.AUTH_EXPIRED, False, Action.RECONNECT),
        (_google_error(403, "insufficientPermissions", "Insufficient Permission"),
         ErrorKind.PERMISSION_MISSING, False, Action.RECONNECT),
        (_google_error(403, "rateLimitExceeded", "Too many requests"),
         ErrorKind.RATE_LIMITED, True, Action.WAIT),
        (_google_error(429, "userRateLimitExceeded", "User rate limit exceeded"),
         ErrorKind.RATE_LIMITED, True, Action.WAIT),
        (_google_error(400, "invalidTitle", "The video title is invalid"),
         ErrorKind.CONTENT_REJECTED, False, Action.EDIT),
        (_google_error(400, "invalidDescription", "The description is invalid"),
         ErrorKind.CONTENT_REJECTED, False, Action.EDIT),
        (_google_error(503, "backendError", "Backend Error", "global"),
         ErrorKind.PROVIDER_UNAVAILABLE, True, Action.WAIT),
    ],
)  # fmt: skip
def test_errors_are_classified_by_reason(fake, response, kind, retryable, action):
    fake.opened.mock(return_value=response)
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_segment(_ctx(), _segment(), reply_to=None)
    assert (err.value.kind, err.value.retryable, err.value.action) == (kind, retryable, action)
    assert err.value.http_status == response.status_code


def test_a_spent_quota_waits_for_midnight_pacific(fake):
    fake.opened.mock(
        return_value=_google_error(
            403,
            "quotaExceeded",
            "The request cannot be completed because you have exceeded your quota.",
            "youtube.quota",
        )
    )
    # 15:00 UTC on 1 May is 08:00 PDT; the quota resets at 00:00 PDT = 07:00 UTC.
    with (
        time_machine.travel(datetime(2026, 5, 1, 15, 0, tzinfo=UTC), tick=False),
        pytest.raises(ProviderError) as err,
    ):
        YouTubeAdapter().publish_segment(_ctx(), _segment(), reply_to=None)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.code == "quotaExceeded"
    assert err.value.retry_at == datetime(2026, 5, 2, 7, 0, tzinfo=UTC)
    # In winter Pacific time is UTC-8.
    assert youtube_errors.next_pacific_midnight(
        datetime(2026, 1, 10, 3, 0, tzinfo=UTC)
    ) == datetime(2026, 1, 10, 8, 0, tzinfo=UTC)


def test_the_channel_upload_cap_waits_a_day(fake):
    fake.opened.mock(
        return_value=_google_error(400, "uploadLimitExceeded", "The user has exceeded uploads")
    )
    before = datetime.now(UTC)
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_segment(_ctx(), _segment(), reply_to=None)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retry_at >= before + timedelta(hours=24)


@pytest.mark.parametrize(
    ("rendition_settings", "code"),
    [
        ({"privacy_status": "public"}, "title_required"),
        ({"title": "T", "privacy_status": "friends"}, "privacy_status_required"),
    ],
)
def test_a_title_and_a_known_privacy_are_required(fake, rendition_settings, code):
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_segment(_ctx(rendition_settings), _segment(), reply_to=None)
    assert err.value.code == code
    assert not fake.opened.called


def test_the_privacy_defaults_to_public_as_the_catalog_says(fake):
    YouTubeAdapter().publish_segment(_ctx({"title": "T"}), _segment(), reply_to=None)

    sent = json.loads(fake.opened.calls.last.request.content)
    assert sent["status"]["privacyStatus"] == "public"


def test_a_post_without_a_video_is_refused(fake):
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_segment(_ctx(), SegmentPayload(0, "text only"), reply_to=None)
    assert err.value.code == "one_video_required"


def test_connect_asks_for_offline_access_with_pkce_and_reads_the_channel():
    adapter = YouTubeAdapter()
    url = adapter.authorization_url(state="S", code_challenge="CHAL", redirect_uri="https://app/cb")
    query = parse_qs(urlsplit(url).query)
    assert url.startswith("https://accounts.google.com/o/oauth2/v2/auth?")
    assert query["access_type"] == ["offline"] and query["prompt"] == ["consent"]
    assert query["code_challenge"] == ["CHAL"] and query["code_challenge_method"] == ["S256"]
    assert query["scope"] == [
        "https://www.googleapis.com/auth/youtube.upload "
        "https://www.googleapis.com/auth/youtube.readonly "
        "https://www.googleapis.com/auth/youtube.force-ssl"
    ]

    with respx.mock() as api:
        token = api.post("https://oauth2.googleapis.com/token").respond(
            200,
            json={
                "access_token": "ya29.A",
                "expires_in": 3599,
                "refresh_token": "1//R",
                "scope": "https://www.googleapis.com/auth/youtube.upload",
                "token_type": "Bearer",
            },
        )
        api.get(f"{API}/channels").respond(
            200,
            json={"items": [{"id": "UC1", "snippet": {"title": "Baker", "customUrl": "@baker"}}]},
        )
        identity = adapter.complete_connect(
            code="CODE", code_verifier="VERIFIER", redirect_uri="https://app/cb"
        )

    assert parse_qs(token.calls.last.request.content.decode()) == {
        "grant_type": ["authorization_code"],
        "code": ["CODE"],
        "code_verifier": ["VERIFIER"],
        "client_id": ["g-client"],
        "client_secret": ["g-secret"],
        "redirect_uri": ["https://app/cb"],
    }
    assert (identity.remote_id, identity.handle, identity.display_name) == (
        "UC1",
        "@baker",
        "Baker",
    )
    assert identity.credentials["refresh_token"] == "1//R"


def test_an_account_without_a_channel_cannot_connect():
    with respx.mock() as api:
        api.post("https://oauth2.googleapis.com/token").respond(
            200, json={"access_token": "a", "expires_in": 3599, "token_type": "Bearer"}
        )
        api.get(f"{API}/channels").respond(200, json={"items": []})
        with pytest.raises(ProviderError) as err:
            YouTubeAdapter().complete_connect(code="C", code_verifier="V", redirect_uri="r")
    assert err.value.code == "no_channel"


def test_refresh_keeps_the_refresh_token_and_a_revoked_one_asks_to_reconnect():
    account = SocialAccount(
        platform="youtube", token_expires_at=datetime.now(UTC) + timedelta(minutes=2)
    )
    with respx.mock() as api:
        refresh = api.post("https://oauth2.googleapis.com/token").mock(
            side_effect=[
                httpx.Response(
                    200, json={"access_token": "ya29.B", "expires_in": 3599, "token_type": "Bearer"}
                ),
                httpx.Response(
                    400,
                    json={
                        "error": "invalid_grant",
                        "error_description": "Token has been expired or revoked.",
                    },
                ),
            ]
        )
        fresh = YouTubeAdapter().refresh_credentials(
            account, {"access_token": "ya29.A", "refresh_token": "1//R"}
        )
        with pytest.raises(ProviderError) as err:
            YouTubeAdapter().refresh_credentials(account, {"refresh_token": "1//R"})

    assert parse_qs(refresh.calls[0].request.content.decode())["grant_type"] == ["refresh_token"]
    assert fresh["access_token"] == "ya29.B" and fresh["refresh_token"] == "1//R"
    assert err.value.kind == ErrorKind.AUTH_EXPIRED
    assert err.value.code == "invalid_grant"

    far = SocialAccount(platform="youtube", token_expires_at=datetime.now(UTC) + timedelta(hours=1))
    assert YouTubeAdapter().refresh_credentials(far, {"refresh_token": "1//R"}) is None
