"""Pinterest through its adapter against a respx fake of API v5: Pins with images by URL or
base64, video registration, storage upload and processing, boards, errors, reconciliation,
continuous refresh tokens."""

import base64
import io
import json
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import respx

from apps.accounts import services as account_services
from apps.accounts.models import SocialAccount
from apps.providers.base import MediaPayload, PublishContext, PublishedSegment, SegmentPayload
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.pinterest.adapter import PinterestAdapter

API = "https://api.pinterest.com/v5"
S3 = "https://pinterest-media-upload.s3-accelerate.amazonaws.com/"
PIN = {
    "id": "813744226420795884",
    "created_at": "2026-03-01T10:00:05",
    "board_id": "549755885175",
    "title": "Rye loaf",
    "description": "Dark and dense",
    "link": "https://bakery.example.com/rye",
}


@pytest.fixture
def fake():
    with respx.mock(assert_all_called=False) as router:
        yield router


@pytest.fixture(autouse=True)
def _apps(settings):
    settings.PINTEREST_APP_ID = "pin-app"
    settings.PINTEREST_APP_SECRET = "pin-secret"


def _ctx(settings=None, checkpoint=None):
    return PublishContext(
        account=SocialAccount(platform="pinterest", remote_id="u1", handle="bakery"),
        credentials={"access_token": "pina_TOKEN"},
        settings={"board_id": "549755885175", "title": "Rye loaf", "link": PIN["link"]}
        if settings is None
        else settings,
        rendition_id=4,
        idempotency_base="r4",
        checkpoint={} if checkpoint is None else checkpoint,
    )


def _image(url="https://media.example.com/s/rye.jpg", data=b"\x89PNG", mime="image/png"):
    return MediaPayload(
        media_id=1,
        kind="image",
        mime_type=mime,
        size_bytes=len(data),
        alt_text="A rye loaf",
        open=lambda: io.BytesIO(data),
        public_url=url,
    )


def _video():
    return MediaPayload(
        media_id=2,
        kind="video",
        mime_type="video/mp4",
        size_bytes=3,
        alt_text="",
        open=lambda: io.BytesIO(b"mp4"),
    )


def _json(request):
    return json.loads(request.content)


def test_an_image_pin_by_url(fake):
    create = fake.post(f"{API}/pins").respond(201, json=PIN)

    published = PinterestAdapter().publish_segment(
        _ctx(), SegmentPayload(0, "Dark and dense", [_image()]), reply_to=None
    )

    assert _json(create.calls.last.request) == {
        "board_id": "549755885175",
        "description": "Dark and dense",
        "title": "Rye loaf",
        "link": "https://bakery.example.com/rye",
        "alt_text": "A rye loaf",
        "media_source": {"source_type": "image_url", "url": "https://media.example.com/s/rye.jpg"},
    }
    assert create.calls.last.request.headers["Authorization"] == "Bearer pina_TOKEN"
    assert published == PublishedSegment(
        provider_post_id="813744226420795884",
        provider_url="https://www.pinterest.com/pin/813744226420795884/",
        published_at=datetime(2026, 3, 1, 10, 0, 5, tzinfo=UTC),
    )


def test_an_image_without_a_public_url_goes_inline_as_base64(fake):
    create = fake.post(f"{API}/pins").respond(201, json=PIN)
    PinterestAdapter().publish_segment(
        _ctx(), SegmentPayload(0, "d", [_image(url=None)]), reply_to=None
    )
    assert _json(create.calls.last.request)["media_source"] == {
        "source_type": "image_base64",
        "content_type": "image/png",
        "data": base64.b64encode(b"\x89PNG").decode(),
    }


def test_several_images_make_a_multi_image_pin(fake):
    create = fake.post(f"{API}/pins").respond(201, json=PIN)
    images = [_image(f"https://m.example.com/{i}.jpg") for i in range(3)]
    PinterestAdapter().publish_segment(_ctx(), SegmentPayload(0, "d", images), reply_to=None)
    body = _json(create.calls.last.request)
    assert body["media_source"] == {
        "source_type": "multiple_image_urls",
        "items": [{"url": f"https://m.example.com/{i}.jpg"} for i in range(3)],
    }
    assert "alt_text" not in body


def test_a_board_is_required(fake):
    with pytest.raises(ProviderError) as err:
        PinterestAdapter().publish_segment(
            _ctx({"title": "x"}), SegmentPayload(0, "d", [_image()]), reply_to=None
        )
    assert err.value.code == "board_required"
    assert err.value.kind == ErrorKind.CONTENT_REJECTED


def test_a_gif_cannot_go_inline(fake):
    with pytest.raises(ProviderError) as err:
        PinterestAdapter().publish_segment(
            _ctx(), SegmentPayload(0, "d", [_image(url=None, mime="image/gif")]), reply_to=None
        )
    assert err.value.code == "image_type"


def test_a_video_pin_waits_for_processing_then_is_created(fake):
    register = fake.post(f"{API}/media").respond(
        201,
        json={
            "media_id": "12345",
            "media_type": "video",
            "upload_url": S3,
            "upload_parameters": {
                "x-amz-date": "20260301T000000Z",
                "key": "uploads/12/34/5/video.mp4",
                "policy": "eyJleHBpcmF0aW9u",
                "x-amz-signature": "a1b2",
                "Content-Type": "multipart/form-data",
            },
        },
    )
    storage = fake.post(S3).respond(204)
    status = fake.get(f"{API}/media/12345").mock(
        side_effect=[
            httpx.Response(200, json={"media_id": "12345", "status": "registered"}),
            httpx.Response(200, json={"media_id": "12345", "status": "processing"}),
            httpx.Response(200, json={"media_id": "12345", "status": "succeeded"}),
        ]
    )
    create = fake.post(f"{API}/pins").respond(201, json=PIN)
    adapter = PinterestAdapter()
    ctx = _ctx({"board_id": "549755885175", "cover_image_url": "https://m.example.com/c.jpg"})

    pending = adapter.publish_segment(ctx, SegmentPayload(0, "Watch", [_video()]), reply_to=None)

    assert pending == PublishedSegment(provider_post_id="12345", pending=True)
    assert _json(register.calls.last.request) == {"media_type": "video"}
    upload = storage.calls.last.request
    assert "Authorization" not in upload.headers
    assert b'name="key"' in upload.content and b"uploads/12/34/5/video.mp4" in upload.content
    assert b'name="file"' in upload.content and b"mp4" in upload.content
    assert not create.called

    assert adapter.poll_segment(ctx, pending) == pending
    assert adapter.poll_segment(ctx, pending) == pending
    published = adapter.poll_segment(ctx, pending)

    assert status.call_count == 3
    assert _json(create.calls.last.request) == {
        "board_id": "549755885175",
        "description": "Watch",
        "media_source": {
            "source_type": "video_id",
            "media_id": "12345",
            "cover_image_url": "https://m.example.com/c.jpg",
        },
    }
    assert published.provider_post_id == PIN["id"]


def test_a_failed_video_is_rejected(fake):
    fake.get(f"{API}/media/12345").respond(200, json={"media_id": "12345", "status": "failed"})
    with pytest.raises(ProviderError) as err:
        PinterestAdapter().poll_segment(
            _ctx(checkpoint={"video_pin": {"board_id": "b"}}),
            PublishedSegment("12345", pending=True),
        )
    assert err.value.kind == ErrorKind.CONTENT_REJECTED
    assert err.value.code == "media_failed"


def test_a_repeated_attempt_does_not_upload_the_video_again(fake):
    fake.get(f"{API}/media/12345").respond(200, json={"media_id": "12345", "status": "processing"})
    register = fake.post(f"{API}/media")
    pending = PinterestAdapter().publish_segment(
        _ctx(checkpoint={"video_media_id": "12345", "video_pin": {"board_id": "b"}}),
        SegmentPayload(0, "Watch", [_video()]),
        reply_to=None,
    )
    assert pending == PublishedSegment(provider_post_id="12345", pending=True)
    assert not register.called


@pytest.mark.parametrize(
    ("response", "kind", "retryable", "action"),
    [
        (httpx.Response(401, json={"code": 2, "message": "Authentication failed."}),
         ErrorKind.AUTH_EXPIRED, False, Action.RECONNECT),
        (httpx.Response(403, json={"code": 3, "message": "Not authorized to access board"}),
         ErrorKind.PERMISSION_MISSING, False, Action.RECONNECT),
        (httpx.Response(404, json={"code": 2, "message": "Board not found."}),
         ErrorKind.CONTENT_REJECTED, False, Action.EDIT),
        (httpx.Response(400, json={"code": 1, "message": "Unable to reach the URL"}),
         ErrorKind.CONTENT_REJECTED, False, Action.EDIT),
        (httpx.Response(400, json={"code": 1, "message": "constraint: maxItems=5"}),
         ErrorKind.CONTENT_REJECTED, False, Action.EDIT),
        (httpx.Response(503, json={"code": 8, "message": "Service unavailable"}),
         ErrorKind.OUTCOME_UNKNOWN, False, Action.VERIFY),
    ],
)  # fmt: skip
def test_pin_errors_are_classified(fake, response, kind, retryable, action):
    fake.post(f"{API}/pins").mock(return_value=response)
    with pytest.raises(ProviderError) as err:
        PinterestAdapter().publish_segment(
            _ctx(), SegmentPayload(0, "d", [_image()]), reply_to=None
        )
    assert (err.value.kind, err.value.retryable, err.value.action) == (kind, retryable, action)
    assert err.value.message == response.json()["message"]


def test_a_rate_limit_honours_the_reset_header(fake):
    fake.post(f"{API}/pins").respond(
        429,
        headers={
            "x-ratelimit-limit": "100",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": "42",
        },
        json={"code": 429, "message": "You have exceeded your rate limit. Try again later."},
    )
    before = datetime.now(UTC)
    with pytest.raises(ProviderError) as err:
        PinterestAdapter().publish_segment(
            _ctx(), SegmentPayload(0, "d", [_image()]), reply_to=None
        )
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retryable is True
    assert before + timedelta(seconds=41) <= err.value.retry_at <= before + timedelta(seconds=44)


def test_a_lost_answer_is_a_single_attempt_reconciled_from_the_board(fake):
    fake.post(f"{API}/pins").mock(side_effect=httpx.ReadTimeout("slow"))
    adapter = PinterestAdapter()
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(
            _ctx(), SegmentPayload(0, "Dark and dense", [_image()]), reply_to=None
        )
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert adapter.is_retry_safe(_ctx().account) is False

    listing = fake.get(f"{API}/boards/549755885175/pins").respond(
        200,
        json={
            "items": [
                {**PIN, "id": "old", "created_at": "2026-01-01T00:00:00"},
                {**PIN, "id": "other", "title": "Wheat loaf"},
                PIN,
            ],
            "bookmark": None,
        },
    )
    since = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    found = adapter.lookup_segment(_ctx(), SegmentPayload(0, "Dark and dense"), not_before=since)

    assert found.provider_post_id == PIN["id"]
    assert parse_qs(urlsplit(str(listing.calls.last.request.url)).query) == {"page_size": ["100"]}
    assert adapter.lookup_segment(_ctx(), SegmentPayload(0, "Light"), not_before=since) is None


def test_list_boards_follows_the_bookmark(fake):
    boards = fake.get(f"{API}/boards").mock(
        side_effect=[
            httpx.Response(
                200,
                json={
                    "items": [{"id": "1", "name": "Bread", "privacy": "PUBLIC"}],
                    "bookmark": "bm",
                },
            ),
            httpx.Response(
                200,
                json={
                    "items": [{"id": "2", "name": "Cakes", "privacy": "SECRET"}],
                    "bookmark": None,
                },
            ),
        ]
    )
    assert PinterestAdapter().list_boards(_ctx()) == [
        {"id": "1", "name": "Bread", "privacy": "PUBLIC"},
        {"id": "2", "name": "Cakes", "privacy": "SECRET"},
    ]
    assert parse_qs(urlsplit(str(boards.calls[1].request.url)).query)["bookmark"] == ["bm"]


def test_connect_uses_basic_auth_and_reads_the_user_account(fake):
    token = fake.post(f"{API}/oauth/token").respond(
        200,
        json={
            "access_token": "pina_NEW",
            "refresh_token": "pinr_NEW",
            "response_type": "authorization_code",
            "token_type": "bearer",
            "expires_in": 2592000,
            "refresh_token_expires_in": 5184000,
            "refresh_token_expires_at": 1780000000,
            "scope": "boards:read,pins:read,pins:write,user_accounts:read",
        },
    )
    fake.get(f"{API}/user_account").respond(
        200, json={"account_type": "BUSINESS", "id": "u1", "username": "bakery"}
    )
    adapter = PinterestAdapter()

    url = adapter.authorization_url(state="S", code_challenge="", redirect_uri="https://app/cb")
    identity = adapter.complete_connect(
        code="CODE", code_verifier="", redirect_uri="https://app/cb"
    )

    assert url.startswith("https://www.pinterest.com/oauth/?")
    assert parse_qs(urlsplit(url).query)["scope"] == [
        "boards:read,pins:read,pins:write,user_accounts:read"
    ]
    request = token.calls.last.request
    assert (
        request.headers["Authorization"]
        == "Basic " + base64.b64encode(b"pin-app:pin-secret").decode()
    )
    assert parse_qs(request.content.decode()) == {
        "grant_type": ["authorization_code"],
        "code": ["CODE"],
        "redirect_uri": ["https://app/cb"],
    }
    assert (identity.remote_id, identity.handle) == ("u1", "bakery")
    assert identity.credentials["refresh_token"] == "pinr_NEW"


@pytest.mark.django_db
def test_a_continuous_refresh_returns_the_new_pair_and_leaves_storing_to_the_pipeline(
    fake, workspace_a
):
    account = account_services.social_account_connect(
        workspace=workspace_a,
        platform="pinterest",
        remote_id="u1",
        handle="bakery",
        credentials={"access_token": "pina_OLD", "refresh_token": "pinr_OLD"},
        token_expires_at=datetime.now(UTC) + timedelta(hours=3),
    )
    refresh = fake.post(f"{API}/oauth/token").respond(
        200,
        json={
            "access_token": "pina_NEW",
            "refresh_token": "pinr_NEW",
            "response_type": "refresh_token",
            "token_type": "bearer",
            "expires_in": 2592000,
            "refresh_token_expires_in": 5184000,
            "scope": "boards:read,pins:read,pins:write",
        },
    )

    fresh = PinterestAdapter().refresh_credentials(
        account, account_services.social_account_credentials(account)
    )

    assert parse_qs(refresh.calls.last.request.content.decode()) == {
        "grant_type": ["refresh_token"],
        "refresh_token": ["pinr_OLD"],
        "continuous_refresh": ["true"],
    }
    assert (fresh["access_token"], fresh["refresh_token"]) == ("pina_NEW", "pinr_NEW")
    assert datetime.fromisoformat(fresh["expires_at"]) > datetime.now(UTC) + timedelta(days=29)
    account.refresh_from_db()
    assert account_services.social_account_credentials(account)["refresh_token"] == "pinr_OLD"


def test_a_revoked_refresh_token_asks_to_reconnect(fake):
    fake.post(f"{API}/oauth/token").respond(
        400, json={"code": 1, "message": "Invalid refresh token", "error": "invalid_grant"}
    )
    account = SocialAccount(platform="pinterest", token_expires_at=datetime.now(UTC))
    with pytest.raises(ProviderError) as err:
        PinterestAdapter().refresh_credentials(account, {"refresh_token": "pinr_X"})
    assert err.value.kind == ErrorKind.AUTH_EXPIRED


def test_a_video_pin_whose_video_is_still_processing_is_found_pending(fake):
    checkpoint = {"video_media_id": "5110000001", "video_pin": {"board_id": "549755885175"}}
    media = fake.get(f"{API}/media/5110000001").respond(200, json={"status": "processing"})
    listing = fake.get(f"{API}/boards/549755885175/pins").respond(
        200, json={"items": [], "bookmark": None}
    )
    adapter = PinterestAdapter()
    since = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)

    found = adapter.lookup_segment(
        _ctx(checkpoint=checkpoint), SegmentPayload(0, "Dark and dense"), not_before=since
    )

    assert found == PublishedSegment(provider_post_id="5110000001", pending=True)
    assert not listing.called  # no Pin is made before its video is ready
    media.respond(200, json={"status": "succeeded"})
    assert (
        adapter.lookup_segment(
            _ctx(checkpoint=checkpoint), SegmentPayload(0, "Dark and dense"), not_before=since
        )
        is None
    )
    assert listing.called
