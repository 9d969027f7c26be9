"""The X adapter against a respx fake of the documented API v2."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from apps.accounts.services import social_account_credentials
from apps.providers.base import PublishedSegment, ReplyTarget, SegmentPayload
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.x import media as x_media
from apps.providers.x.adapter import XAdapter
from tests.providers.social_helpers import (
    body,
    form,
    go_offline,
    image,
    make_account,
    make_ctx,
    multipart_field,
)

pytestmark = pytest.mark.django_db

API = "https://api.x.com/2"
UPLOAD = f"{API}/media/upload"
REDIRECT = "http://127.0.0.1:8000/connect/x/callback/"


@pytest.fixture(autouse=True)
def waits(monkeypatch, settings):
    settings.X_CLIENT_ID = "x-client"
    settings.X_CLIENT_SECRET = "x-secret"
    return go_offline(monkeypatch)


@pytest.fixture
def account(workspace_a):
    expires = datetime.now(UTC) + timedelta(hours=2)
    return make_account(
        workspace_a,
        "x",
        remote_id="2244994945",
        handle="alice",
        credentials={
            "access_token": "x-token",
            "refresh_token": "x-refresh-1",
            "expires_at": expires.isoformat(),
        },
        settings={"username": "alice"},
        token_expires_at=expires,
    )


def _created(post_id="1445880548472328192", text="hello"):
    return {"data": {"id": post_id, "text": text, "edit_history_tweet_ids": [post_id]}}


def _media_fake(respx_mock, *, processing: list[dict] | None = None):
    """X's v2 media endpoints as documented (docs.x.com x-api/media): the one-shot upload,
    initialize / append / finalize by path, and the status poll. The retired
    `command=INIT|APPEND|FINALIZE` form is refused. Returns the (step, request) calls."""
    calls: list[tuple[str, httpx.Request]] = []
    statuses = iter(processing or [])
    invalid = {
        "title": "Invalid Request",
        "detail": "One or more parameters to your request was invalid.",
        "type": "https://api.x.com/2/problems/invalid-request",
    }

    def one_shot(request: httpx.Request) -> httpx.Response:
        calls.append(("UPLOAD", request))
        if multipart_field(request, "command") is not None or "command" in request.url.params:
            return httpx.Response(400, json=invalid)
        if multipart_field(request, "media") is None or multipart_field(
            request, "media_category"
        ) not in (b"tweet_image", b"dm_image", b"subtitles"):
            return httpx.Response(400, json=invalid)
        return httpx.Response(
            200,
            json={
                "data": {"id": "i1", "media_key": "3_i1", "size": 10, "expires_after_secs": 86400}
            },
        )

    def initialize(request: httpx.Request) -> httpx.Response:
        calls.append(("INITIALIZE", request))
        return httpx.Response(
            200, json={"data": {"id": "m1", "media_key": "7_m1", "expires_after_secs": 86400}}
        )

    def append(request: httpx.Request, media_id: str) -> httpx.Response:
        calls.append(("APPEND", request))
        assert media_id == "m1"
        return httpx.Response(200, json={"data": {"expires_at": 1796220000}})

    def finalize(request: httpx.Request, media_id: str) -> httpx.Response:
        calls.append(("FINALIZE", request))
        data = {"id": media_id, "media_key": "7_m1", "size": 10, "expires_after_secs": 86400}
        if processing:
            data["processing_info"] = {"state": "pending", "check_after_secs": 1}
        return httpx.Response(200, json={"data": data})

    def status(request: httpx.Request) -> httpx.Response:
        calls.append(("STATUS", request))
        media_id = request.url.params["media_id"]
        return httpx.Response(
            200, json={"data": {"id": media_id, "processing_info": next(statuses)}}
        )

    respx_mock.post(UPLOAD).mock(side_effect=one_shot)
    respx_mock.post(f"{UPLOAD}/initialize").mock(side_effect=initialize)
    respx_mock.post(url__regex=rf"{UPLOAD}/(?P<media_id>[^/]+)/append").mock(side_effect=append)
    respx_mock.post(url__regex=rf"{UPLOAD}/(?P<media_id>[^/]+)/finalize").mock(side_effect=finalize)
    respx_mock.get(url__startswith=UPLOAD).mock(side_effect=status)
    return calls


def test_it_publishes_text(respx_mock, account):
    create = respx_mock.post(f"{API}/tweets").respond(201, json=_created())
    published = XAdapter().publish_segment(
        make_ctx(account), SegmentPayload(0, "hello"), reply_to=None
    )
    request = create.calls.last.request
    assert request.headers["Authorization"] == "Bearer x-token"
    assert body(request) == {"text": "hello"}
    assert published.provider_post_id == "1445880548472328192"
    assert published.provider_url == "https://x.com/alice/status/1445880548472328192"


def test_a_small_image_goes_in_one_request_with_alt_text(respx_mock, account):
    calls = _media_fake(respx_mock)
    meta = respx_mock.post(f"{API}/media/metadata").respond(200, json={"data": {"id": "i1"}})
    create = respx_mock.post(f"{API}/tweets").respond(201, json=_created())
    XAdapter().publish_segment(
        make_ctx(account), SegmentPayload(0, "pic", [image(data=b"0123456789")]), reply_to=None
    )
    assert [step for step, _ in calls] == ["UPLOAD"]
    request = calls[0][1]
    assert request.headers["Content-Type"].startswith("multipart/form-data")
    assert multipart_field(request, "media") == b"0123456789"
    assert multipart_field(request, "media_category") == b"tweet_image"
    assert body(meta.calls.last.request) == {
        "id": "i1",
        "metadata": {"alt_text": {"text": "A red square"}},
    }
    assert body(create.calls.last.request) == {"text": "pic", "media": {"media_ids": ["i1"]}}


def test_video_goes_through_initialize_append_finalize(respx_mock, account, monkeypatch):
    monkeypatch.setattr(x_media, "CHUNK_BYTES", 4)
    calls = _media_fake(respx_mock)
    respx_mock.post(f"{API}/media/metadata").respond(200, json={"data": {"id": "m1"}})
    create = respx_mock.post(f"{API}/tweets").respond(201, json=_created())
    video = image(kind="video", mime="video/mp4", data=b"0123456789")
    XAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "v", [video]), reply_to=None)
    assert [step for step, _ in calls] == ["INITIALIZE", "APPEND", "APPEND", "APPEND", "FINALIZE"]
    assert body(calls[0][1]) == {
        "media_type": "video/mp4",
        "total_bytes": 10,
        "media_category": "tweet_video",
    }
    appends = [r for step, r in calls if step == "APPEND"]
    assert [str(r.url) for r in appends] == [f"{UPLOAD}/m1/append"] * 3
    assert [multipart_field(r, "segment_index") for r in appends] == [b"0", b"1", b"2"]
    assert b"".join(multipart_field(r, "media") for r in appends) == b"0123456789"
    assert str(calls[-1][1].url) == f"{UPLOAD}/m1/finalize"
    assert body(create.calls.last.request)["media"] == {"media_ids": ["m1"]}


@pytest.mark.parametrize(
    ("kind", "mime", "size", "category"),
    [("gif", "image/gif", 10, "tweet_gif"), ("image", "image/png", 6 * 1024 * 1024, "tweet_image")],
)
def test_gifs_and_large_images_are_chunked(respx_mock, account, kind, mime, size, category):
    calls = _media_fake(respx_mock)
    respx_mock.post(f"{API}/media/metadata").respond(200, json={"data": {"id": "m1"}})
    respx_mock.post(f"{API}/tweets").respond(201, json=_created())
    media = image(kind=kind, mime=mime, data=b"x" * size)
    XAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "g", [media]), reply_to=None)
    assert calls[0][0] == "INITIALIZE"
    assert body(calls[0][1])["media_category"] == category
    assert calls[-1][0] == "FINALIZE"


def test_video_processing_is_polled_with_check_after_secs(respx_mock, account, waits):
    calls = _media_fake(
        respx_mock,
        processing=[{"state": "in_progress", "check_after_secs": 3}, {"state": "succeeded"}],
    )
    respx_mock.post(f"{API}/media/metadata").respond(200, json={})
    respx_mock.post(f"{API}/tweets").respond(201, json=_created())
    video = image(kind="video", mime="video/mp4", data=b"mp4")
    XAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "v", [video]), reply_to=None)
    statuses = [r for step, r in calls if step == "STATUS"]
    assert len(statuses) == 2
    assert str(statuses[0].url.copy_with(query=None)) == UPLOAD
    assert dict(statuses[0].url.params) == {"command": "STATUS", "media_id": "m1"}
    assert waits == [1.0, 3.0]


def test_failed_media_processing_is_content_rejected(respx_mock, account):
    _media_fake(
        respx_mock,
        processing=[{"state": "failed", "error": {"code": 1, "message": "InvalidMedia"}}],
    )
    ctx = make_ctx(account)
    with pytest.raises(ProviderError) as err:
        XAdapter().publish_segment(
            ctx, SegmentPayload(0, "v", [image(kind="video", mime="video/mp4")]), reply_to=None
        )
    assert err.value.kind == ErrorKind.CONTENT_REJECTED
    assert err.value.message == "InvalidMedia"
    assert ctx.checkpoint == {"x_media_s0": {}}  # a manual retry uploads afresh


def test_a_dropped_chunk_is_sent_once_more(respx_mock, account):
    calls = _media_fake(respx_mock)
    drops = iter([httpx.RemoteProtocolError("dropped")])

    def flaky(request: httpx.Request, media_id: str) -> httpx.Response:
        error = next(drops, None)
        if error:
            raise error
        calls.append(("APPEND", request))
        return httpx.Response(200, json={"data": {"expires_at": 1796220000}})

    respx_mock.post(url__regex=rf"{UPLOAD}/(?P<media_id>[^/]+)/append").mock(side_effect=flaky)
    respx_mock.post(f"{API}/media/metadata").respond(200, json={})
    respx_mock.post(f"{API}/tweets").respond(201, json=_created())
    video = image(kind="video", mime="video/mp4", data=b"mp4")
    XAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "v", [video]), reply_to=None)
    assert [step for step, _ in calls] == ["INITIALIZE", "APPEND", "FINALIZE"]


def test_a_thread_replies_to_the_previous_post(respx_mock, account):
    create = respx_mock.post(f"{API}/tweets").respond(201, json=_created("3"))
    target = ReplyTarget(root=PublishedSegment("1"), parent=PublishedSegment("2"))
    XAdapter().publish_segment(make_ctx(account), SegmentPayload(2, "3/3"), reply_to=target)
    assert body(create.calls.last.request) == {
        "text": "3/3",
        "reply": {"in_reply_to_tweet_id": "2"},
    }


@pytest.mark.parametrize(
    ("status", "payload", "kind", "code", "action"),
    [
        (
            403,
            {
                "detail": "You are not allowed to create a Tweet with duplicate content.",
                "type": "about:blank",
                "title": "Forbidden",
                "status": 403,
            },
            ErrorKind.DUPLICATE_CONTENT,
            "duplicate_content",
            Action.EDIT,
        ),
        (
            403,
            {
                "title": "Client Forbidden",
                "detail": "This request must be made using an approved developer account.",
                "type": "https://api.x.com/2/problems/client-forbidden",
                "reason": "client-not-enrolled",
            },
            ErrorKind.PLAN_RESTRICTED,
            "client-forbidden",
            Action.CONTACT_SUPPORT,
        ),
        (
            403,
            {"detail": "You are not permitted to perform this action.", "type": "about:blank"},
            ErrorKind.CONTENT_REJECTED,
            "not_permitted",
            Action.EDIT,
        ),
        (
            403,
            {"title": "Unsupported Authentication", "detail": "Unsupported Authentication"},
            ErrorKind.PERMISSION_MISSING,
            "http_403",
            Action.RECONNECT,
        ),
        (
            400,
            {
                "title": "Invalid Request",
                "detail": "One or more parameters to your request was invalid.",
                "type": "https://api.x.com/2/problems/invalid-request",
            },
            ErrorKind.CONTENT_REJECTED,
            "invalid-request",
            Action.EDIT,
        ),
        (
            503,
            {"title": "Service Unavailable"},
            ErrorKind.OUTCOME_UNKNOWN,
            "http_503",
            Action.VERIFY,
        ),
    ],
)
def test_documented_errors_are_classified(respx_mock, account, status, payload, kind, code, action):
    respx_mock.post(f"{API}/tweets").respond(status, json=payload)
    # A duplicate refusal looks for the matching post; here there is none.
    respx_mock.get(f"{API}/users/2244994945/tweets").respond(
        200, json={"meta": {"result_count": 0}}
    )
    with pytest.raises(ProviderError) as err:
        XAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == kind
    assert err.value.code == code
    assert err.value.http_status == status
    assert err.value.action == action
    assert err.value.retryable is False
    assert err.value.existing_post_id is None


@pytest.mark.parametrize(
    "payload",
    [
        {
            "title": "Too Many Requests",
            "detail": "Too Many Requests",
            "type": "https://api.x.com/2/problems/rate-limit-exceeded",
            "status": 429,
        },
        {"title": "Usage capped", "type": "https://api.x.com/2/problems/usage-capped"},
        {"errors": [{"code": 88, "message": "Rate limit exceeded"}]},
    ],
)
def test_rate_limits_honour_the_epoch_reset_header(respx_mock, account, payload):
    respx_mock.post(f"{API}/tweets").respond(
        429,
        json=payload,
        headers={
            "x-rate-limit-limit": "100",
            "x-rate-limit-remaining": "0",
            "x-rate-limit-reset": "1796220000",
        },
    )
    with pytest.raises(ProviderError) as err:
        XAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retryable is True
    assert err.value.retry_at == datetime.fromtimestamp(1796220000, tz=UTC)


def test_a_spent_24_hour_allowance_pushes_the_retry_later(respx_mock, account):
    respx_mock.post(f"{API}/tweets").respond(
        429,
        json={"title": "Too Many Requests"},
        headers={
            "x-rate-limit-reset": "1796220000",
            "x-user-limit-24hour-remaining": "0",
            "x-user-limit-24hour-reset": "1796290000",
        },
    )
    with pytest.raises(ProviderError) as err:
        XAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.retry_at == datetime.fromtimestamp(1796290000, tz=UTC)


def test_a_401_refreshes_once_stores_the_rotated_token_and_repeats(respx_mock, account):
    create = respx_mock.post(f"{API}/tweets").mock(
        side_effect=[
            httpx.Response(401, json={"title": "Unauthorized", "status": 401}),
            httpx.Response(201, json=_created()),
        ]
    )
    token = respx_mock.post(f"{API}/oauth2/token").respond(
        200,
        json={
            "token_type": "bearer",
            "expires_in": 7200,
            "access_token": "x-token-2",
            "refresh_token": "x-refresh-2",
        },
    )
    XAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert create.calls[1].request.headers["Authorization"] == "Bearer x-token-2"
    assert form(token.calls.last.request)["refresh_token"] == "x-refresh-1"
    account.refresh_from_db()
    assert social_account_credentials(account)["refresh_token"] == "x-refresh-2"


def test_a_second_401_asks_to_reconnect(respx_mock, account):
    respx_mock.post(f"{API}/tweets").respond(401, json={"title": "Unauthorized"})
    respx_mock.post(f"{API}/oauth2/token").respond(
        200, json={"access_token": "a", "refresh_token": "r", "expires_in": 7200}
    )
    with pytest.raises(ProviderError) as err:
        XAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.AUTH_EXPIRED
    assert err.value.action == Action.RECONNECT


def test_refresh_near_expiry_rotates_the_refresh_token(respx_mock, account):
    adapter = XAdapter()
    credentials = social_account_credentials(account)
    assert adapter.refresh_credentials(account, credentials) is None
    credentials["expires_at"] = (datetime.now(UTC) + timedelta(minutes=3)).isoformat()
    token = respx_mock.post(f"{API}/oauth2/token").respond(
        200,
        json={"access_token": "a2", "refresh_token": "r2", "expires_in": 7200, "scope": "x"},
    )
    fresh = adapter.refresh_credentials(account, credentials)
    request = token.calls.last.request
    assert form(request) == {
        "grant_type": "refresh_token",
        "refresh_token": "x-refresh-1",
        "client_id": "x-client",
    }
    assert request.headers["Authorization"].startswith("Basic ")  # confidential client
    assert fresh["access_token"] == "a2"
    assert fresh["refresh_token"] == "r2"
    assert datetime.fromisoformat(fresh["expires_at"]) > datetime.now(UTC) + timedelta(hours=1)


def test_a_spent_refresh_token_asks_to_reconnect(respx_mock, account):
    respx_mock.post(f"{API}/oauth2/token").respond(
        400,
        json={
            "error": "invalid_request",
            "error_description": "Value passed for the token was invalid.",
        },
    )
    credentials = social_account_credentials(account)
    credentials["expires_at"] = datetime.now(UTC).isoformat()
    with pytest.raises(ProviderError) as err:
        XAdapter().refresh_credentials(account, credentials)
    assert err.value.kind == ErrorKind.AUTH_EXPIRED


def test_an_unknown_outcome_is_a_single_attempt_settled_by_timeline_lookup(respx_mock, account):
    create = respx_mock.post(f"{API}/tweets").mock(side_effect=httpx.ReadTimeout("lost"))
    adapter = XAdapter()
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(
            make_ctx(account), SegmentPayload(0, "Tom & Jerry https://example.com/x"), reply_to=None
        )
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert create.call_count == 1
    assert adapter.is_retry_safe(account) is False

    timeline = respx_mock.get(f"{API}/users/2244994945/tweets").respond(
        200,
        json={
            "data": [
                {"id": "9", "text": "other", "created_at": "2026-12-02T10:02:00.000Z"},
                {
                    "id": "8",
                    "text": "Tom &amp; Jerry https://t.co/abc123",
                    "created_at": "2026-12-02T10:01:00.000Z",
                },
            ],
            "meta": {"result_count": 2},
        },
    )
    found = adapter.lookup_segment(
        make_ctx(account),
        SegmentPayload(0, "Tom & Jerry https://example.com/x"),
        not_before=datetime(2026, 12, 2, 10, 0, tzinfo=UTC),
    )
    assert found.provider_post_id == "8"
    assert found.provider_url == "https://x.com/alice/status/8"
    params = timeline.calls.last.request.url.params
    assert params["start_time"] == "2026-12-02T09:58:00Z"
    assert params["max_results"] == "100"


def test_lookup_reports_absence(respx_mock, account):
    respx_mock.get(f"{API}/users/2244994945/tweets").respond(
        200, json={"meta": {"result_count": 0}}
    )
    found = XAdapter().lookup_segment(
        make_ctx(account), SegmentPayload(0, "x"), not_before=datetime.now(UTC)
    )
    assert found is None


def test_connect_uses_pkce_and_reads_the_user(respx_mock):
    adapter = XAdapter()
    url = httpx.URL(
        adapter.authorization_url(state="st", code_challenge="chal", redirect_uri=REDIRECT)
    )
    assert str(url.copy_with(query=None)) == "https://x.com/i/oauth2/authorize"
    assert dict(url.params) == {
        "response_type": "code",
        "client_id": "x-client",
        "redirect_uri": REDIRECT,
        "scope": "tweet.read tweet.write users.read offline.access media.write",
        "state": "st",
        "code_challenge": "chal",
        "code_challenge_method": "S256",
    }
    token = respx_mock.post(f"{API}/oauth2/token").respond(
        200,
        json={
            "token_type": "bearer",
            "expires_in": 7200,
            "access_token": "x-new",
            "refresh_token": "x-refresh",
            "scope": "tweet.write",
        },
    )
    respx_mock.get(f"{API}/users/me").respond(
        200, json={"data": {"id": "2244994945", "name": "Alice", "username": "alice"}}
    )
    identity = adapter.complete_connect(code="c", code_verifier="verif", redirect_uri=REDIRECT)
    assert form(token.calls.last.request) == {
        "grant_type": "authorization_code",
        "code": "c",
        "redirect_uri": REDIRECT,
        "code_verifier": "verif",
        "client_id": "x-client",
    }
    assert identity.remote_id == "2244994945"
    assert identity.handle == "alice"
    assert identity.credentials["refresh_token"] == "x-refresh"
    assert identity.token_expires_at > datetime.now(UTC) + timedelta(hours=1)


def test_a_public_client_sends_no_basic_auth(respx_mock, settings):
    settings.X_CLIENT_SECRET = ""
    token = respx_mock.post(f"{API}/oauth2/token").respond(
        200, json={"access_token": "a", "refresh_token": "r", "expires_in": 7200}
    )
    respx_mock.get(f"{API}/users/me").respond(
        200, json={"data": {"id": "1", "name": "A", "username": "a"}}
    )
    XAdapter().complete_connect(code="c", code_verifier="v", redirect_uri=REDIRECT)
    assert "Authorization" not in token.calls.last.request.headers


def test_media_still_processing_resumes_from_the_checkpoint(respx_mock, account, monkeypatch):
    monkeypatch.setattr(x_media, "WAIT_BUDGET_S", 2.0)
    calls = _media_fake(
        respx_mock,
        processing=[
            {"state": "in_progress", "check_after_secs": 5},
            {"state": "succeeded"},
        ],
    )
    respx_mock.post(f"{API}/media/metadata").respond(200, json={})
    create = respx_mock.post(f"{API}/tweets").respond(201, json=_created())
    saved: list[dict] = []
    ctx = replace(make_ctx(account), checkpoint_saver=saved.append)
    video = image(kind="video", mime="video/mp4", data=b"mp4")
    with pytest.raises(ProviderError) as err:
        XAdapter().publish_segment(ctx, SegmentPayload(0, "v", [video]), reply_to=None)
    assert err.value.kind == ErrorKind.MEDIA_PROCESSING
    assert err.value.retryable is True
    assert ctx.checkpoint == {"x_media_s0": {"1": "m1"}}
    assert saved == [{"x_media_s0": {"1": "m1"}}]  # kept before the first wait

    monkeypatch.setattr(x_media, "WAIT_BUDGET_S", 120.0)
    XAdapter().publish_segment(ctx, SegmentPayload(0, "v", [video]), reply_to=None)
    assert [step for step, _ in calls].count("INITIALIZE") == 1  # resumed, not uploaded again
    assert body(create.calls.last.request)["media"] == {"media_ids": ["m1"]}


def test_a_duplicate_refusal_names_the_matching_recent_post(respx_mock, account):
    respx_mock.post(f"{API}/tweets").respond(
        403,
        json={
            "detail": "You are not allowed to create a Tweet with duplicate content.",
            "type": "about:blank",
            "title": "Forbidden",
            "status": 403,
        },
    )
    timeline = respx_mock.get(f"{API}/users/2244994945/tweets").respond(
        200,
        json={
            "data": [
                {"id": "5", "text": "same &amp; again", "created_at": "2026-12-02T10:01:00.000Z"}
            ],
            "meta": {"result_count": 1, "newest_id": "5", "oldest_id": "5"},
        },
    )
    with pytest.raises(ProviderError) as err:
        XAdapter().publish_segment(
            make_ctx(account), SegmentPayload(0, "same & again"), reply_to=None
        )
    assert err.value.kind == ErrorKind.DUPLICATE_CONTENT
    assert err.value.existing_post_id == "5"
    assert timeline.call_count == 1


def test_a_lookup_follows_the_next_page(respx_mock, account):
    timeline = respx_mock.get(f"{API}/users/2244994945/tweets").mock(
        side_effect=[
            httpx.Response(
                200,
                json={
                    "data": [{"id": "9", "text": "other"}],
                    "meta": {"result_count": 1, "next_token": "p2"},
                },
            ),
            httpx.Response(
                200, json={"data": [{"id": "8", "text": "mine"}], "meta": {"result_count": 1}}
            ),
        ]
    )
    found = XAdapter().lookup_segment(
        make_ctx(account), SegmentPayload(0, "mine"), not_before=datetime.now(UTC)
    )
    assert found.provider_post_id == "8"
    assert timeline.calls[1].request.url.params["pagination_token"] == "p2"


def test_a_lookup_matches_bare_domains_x_shortened(respx_mock, account):
    respx_mock.get(f"{API}/users/2244994945/tweets").respond(
        200,
        json={
            "data": [{"id": "8", "text": "read https://t.co/a1 now https://t.co/m2"}],
            "meta": {"result_count": 1},
        },
    )
    found = XAdapter().lookup_segment(
        make_ctx(account), SegmentPayload(0, "read example.com now"), not_before=datetime.now(UTC)
    )
    assert found.provider_post_id == "8"
