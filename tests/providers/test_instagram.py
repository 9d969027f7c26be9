"""Instagram through its adapter against a respx fake of the documented Graph endpoints:
containers with status_code, media_publish, carousels, Reels, the publishing cap, the
Instagram error subcodes, and Instagram Login tokens."""

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import respx

from apps.accounts.models import SocialAccount
from apps.providers.base import MediaPayload, PublishContext, PublishedSegment, SegmentPayload
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.instagram.adapter import InstagramAdapter

G = "https://graph.instagram.com/v23.0"
IG = "17841400000000001"


@pytest.fixture
def fake():
    with respx.mock(assert_all_called=False) as router:
        yield router


@pytest.fixture(autouse=True)
def _apps(settings):
    settings.META_APP_ID = "meta-app"
    settings.META_APP_SECRET = "meta-secret"
    settings.INSTAGRAM_APP_ID = "ig-app"
    settings.INSTAGRAM_APP_SECRET = "ig-secret"


def _ctx(settings=None, checkpoint=None, expires_at=None):
    account = SocialAccount(
        platform="instagram", remote_id=IG, handle="shop", token_expires_at=expires_at
    )
    return PublishContext(
        account=account,
        credentials={"access_token": "IG-TOKEN"},
        settings=settings or {},
        rendition_id=7,
        idempotency_base="r7",
        checkpoint={} if checkpoint is None else checkpoint,
    )


def _form(request):
    return {k: v[0] for k, v in parse_qs(request.content.decode()).items()}


def _query(request):
    return {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}


def _media(kind="image", url="https://media.example.com/s/1.jpg", alt="Red shoes"):
    return MediaPayload(
        media_id=1,
        kind=kind,
        mime_type="video/mp4" if kind == "video" else "image/jpeg",
        size_bytes=10,
        alt_text=alt,
        open=lambda: None,
        public_url=url,
    )


def _graph_error(code, message, subcode=None, status=400, user_msg=None):
    error = {"message": message, "type": "OAuthException", "code": code, "fbtrace_id": "A6L"}
    if subcode:
        error["error_subcode"] = subcode
        error["is_transient"] = False
    if user_msg:
        error["error_user_msg"] = user_msg
    return httpx.Response(status, json={"error": error})


def _status(fake, container, *codes, detail=""):
    return fake.get(f"{G}/{container}").mock(
        side_effect=[
            httpx.Response(200, json={"status_code": c, "status": detail or c, "id": container})
            for c in codes
        ]
    )


def test_an_image_post_is_a_container_then_media_publish(fake):
    create = fake.post(f"{G}/{IG}/media").respond(200, json={"id": "C1"})
    status = _status(fake, "C1", "IN_PROGRESS", "FINISHED")
    publish = fake.post(f"{G}/{IG}/media_publish").respond(200, json={"id": "M1"})
    fake.get(f"{G}/M1").respond(200, json={"permalink": "https://www.instagram.com/p/Abc/"})
    adapter, ctx = InstagramAdapter(), _ctx()

    pending = adapter.publish_segment(ctx, SegmentPayload(0, "New in", [_media()]), reply_to=None)
    assert pending == PublishedSegment(provider_post_id="C1", pending=True)
    assert _form(create.calls.last.request) == {
        "image_url": "https://media.example.com/s/1.jpg",
        "caption": "New in",
        "alt_text": "Red shoes",
    }

    assert adapter.poll_segment(ctx, pending) == pending
    published = adapter.poll_segment(ctx, pending)

    assert _query(status.calls.last.request)["fields"] == "status_code,status"
    assert _form(publish.calls.last.request) == {"creation_id": "C1"}
    assert publish.call_count == 1
    assert published.provider_post_id == "M1"
    assert published.provider_url == "https://www.instagram.com/p/Abc/"


def test_a_video_is_published_as_a_reel(fake):
    create = fake.post(f"{G}/{IG}/media").respond(200, json={"id": "C1"})
    InstagramAdapter().publish_segment(
        _ctx(),
        SegmentPayload(0, "clip", [_media("video", "https://media.example.com/s/v.mp4")]),
        reply_to=None,
    )
    assert _form(create.calls.last.request) == {
        "media_type": "REELS",
        "video_url": "https://media.example.com/s/v.mp4",
        "caption": "clip",
        "share_to_feed": "true",
    }


def test_a_story_takes_no_caption(fake):
    create = fake.post(f"{G}/{IG}/media").respond(200, json={"id": "C1"})
    InstagramAdapter().publish_segment(
        _ctx({"media_type": "STORIES"}), SegmentPayload(0, "ignored", [_media()]), reply_to=None
    )
    assert _form(create.calls.last.request) == {
        "media_type": "STORIES",
        "image_url": "https://media.example.com/s/1.jpg",
    }


def test_a_post_without_media_is_refused_before_any_call(fake):
    create = fake.post(f"{G}/{IG}/media")
    with pytest.raises(ProviderError) as err:
        InstagramAdapter().publish_segment(_ctx(), SegmentPayload(0, "text"), reply_to=None)
    assert err.value.code == "media_required"
    assert err.value.kind == ErrorKind.CONTENT_REJECTED
    assert not create.called


def test_a_carousel_of_image_and_video(fake):
    create = fake.post(f"{G}/{IG}/media").mock(
        side_effect=[
            httpx.Response(200, json={"id": "I1"}),
            httpx.Response(200, json={"id": "I2"}),
            httpx.Response(200, json={"id": "CAR"}),
        ]
    )
    _status(fake, "I1", "FINISHED")
    _status(fake, "I2", "FINISHED")
    _status(fake, "CAR", "FINISHED")
    publish = fake.post(f"{G}/{IG}/media_publish").respond(200, json={"id": "M5"})
    fake.get(f"{G}/M5").respond(200, json={"permalink": "https://www.instagram.com/p/Car/"})
    adapter, ctx = InstagramAdapter(), _ctx()
    media = [_media(), _media("video", "https://media.example.com/s/v.mp4")]

    pending = adapter.publish_segment(ctx, SegmentPayload(0, "both", media), reply_to=None)
    published = adapter.poll_segment(ctx, pending)

    forms = [_form(call.request) for call in create.calls]
    assert forms == [
        {
            "image_url": "https://media.example.com/s/1.jpg",
            "is_carousel_item": "true",
            "alt_text": "Red shoes",
        },
        {
            "media_type": "VIDEO",
            "video_url": "https://media.example.com/s/v.mp4",
            "is_carousel_item": "true",
        },
        {"media_type": "CAROUSEL", "children": "I1,I2", "caption": "both"},
    ]
    assert _form(publish.calls.last.request) == {"creation_id": "CAR"}
    assert published.provider_post_id == "M5"


def test_a_carousel_holds_at_most_ten_items(fake):
    with pytest.raises(ProviderError) as err:
        InstagramAdapter().publish_segment(
            _ctx(), SegmentPayload(0, "many", [_media()] * 11), reply_to=None
        )
    assert err.value.code == "too_many_media"


def test_a_container_error_carries_the_instagram_subcode(fake):
    _status(fake, "C1", "ERROR", detail="Error: Media upload has failed with error code 2207026")
    with pytest.raises(ProviderError) as err:
        InstagramAdapter().poll_segment(_ctx(), PublishedSegment("C1", pending=True))
    assert err.value.kind == ErrorKind.CONTENT_REJECTED
    assert err.value.code == "2207026"


@pytest.mark.parametrize(
    ("response", "kind", "retryable", "action", "code"),
    [
        (
            _graph_error(9, "Application request limit reached", 2207042, user_msg="limit"),
            ErrorKind.RATE_LIMITED,
            True,
            Action.WAIT,
            "9/2207042",
        ),
        (
            _graph_error(9007, "Media ID is not available", 2207027),
            ErrorKind.MEDIA_PROCESSING,
            True,
            Action.WAIT,
            "9007/2207027",
        ),
        (
            # Code 4 is a rate limit, but this subcode is a spam restriction.
            _graph_error(4, "We restrict certain activity to protect our community.", 2207051),
            ErrorKind.CONTENT_REJECTED,
            False,
            Action.RETRY,
            "4/2207051",
        ),
        (
            _graph_error(25, "The Instagram account is restricted.", 2207050),
            ErrorKind.PERMISSION_MISSING,
            False,
            Action.RECONNECT,
            "25/2207050",
        ),
        (
            _graph_error(-1, "Instagram server error.", 2207001),
            ErrorKind.OUTCOME_UNKNOWN,
            False,
            Action.VERIFY,
            "-1/2207001",
        ),
        (
            _graph_error(24, "Media builder expired.", 2207008),
            ErrorKind.PROVIDER_UNAVAILABLE,
            True,
            Action.WAIT,
            "24/2207008",
        ),
    ],
)
def test_publish_errors_are_classified_by_subcode(fake, response, kind, retryable, action, code):
    _status(fake, "C1", "FINISHED")
    fake.post(f"{G}/{IG}/media_publish").mock(return_value=response)
    before = datetime.now(UTC)
    with pytest.raises(ProviderError) as err:
        InstagramAdapter().poll_segment(_ctx(), PublishedSegment("C1", pending=True))
    assert (err.value.kind, err.value.retryable, err.value.action) == (kind, retryable, action)
    assert err.value.code == code
    if code == "9/2207042":
        assert err.value.retry_at >= before + timedelta(hours=24)


@pytest.mark.parametrize(
    ("response", "kind", "retryable"),
    [
        (
            _graph_error(-2, "It takes too long to download the media.", 2207003),
            ErrorKind.PROVIDER_UNAVAILABLE,
            True,
        ),
        (
            _graph_error(36000, "The image size is too large.", 2207004),
            ErrorKind.CONTENT_REJECTED,
            False,
        ),
        (
            _graph_error(100, "Only photo or video can be accepted as media type.", 2207023),
            ErrorKind.CONTENT_REJECTED,
            False,
        ),
        (
            _graph_error(368, "The action attempted has been deemed abusive."),
            ErrorKind.CONTENT_REJECTED,
            False,
        ),
        (
            _graph_error(200, "Permissions error", status=403),
            ErrorKind.PERMISSION_MISSING,
            False,
        ),
    ],
)
def test_container_errors_are_classified(fake, response, kind, retryable):
    fake.post(f"{G}/{IG}/media").mock(return_value=response)
    with pytest.raises(ProviderError) as err:
        InstagramAdapter().publish_segment(
            _ctx(), SegmentPayload(0, "x", [_media()]), reply_to=None
        )
    assert (err.value.kind, err.value.retryable) == (kind, retryable)


def test_a_published_container_after_an_unknown_is_found_in_the_media_listing(fake):
    started = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    _status(fake, "C1", "PUBLISHED")
    listing = fake.get(f"{G}/{IG}/media").respond(
        200,
        json={
            "data": [
                {
                    "id": "M2",
                    "caption": "New in",
                    "timestamp": "2026-03-01T10:00:41+0000",
                    "permalink": "https://www.instagram.com/p/Two/",
                }
            ]
        },
    )
    ctx = _ctx(
        checkpoint={
            "containers": {"0": {"id": "C1", "text": "New in", "created_at": started.isoformat()}}
        }
    )

    found = InstagramAdapter().lookup_segment(ctx, SegmentPayload(0, "New in"), not_before=started)

    assert found.provider_post_id == "M2"
    assert found.published_at == datetime(2026, 3, 1, 10, 0, 41, tzinfo=UTC)
    assert _query(listing.calls.last.request)["fields"] == "id,caption,timestamp,permalink"


def test_a_published_container_whose_post_is_not_listed_yet_stays_unknown(fake):
    _status(fake, "C1", "PUBLISHED")
    fake.get(f"{G}/{IG}/media").respond(200, json={"data": []})
    ctx = _ctx(checkpoint={"containers": {"0": {"id": "C1", "text": "x", "created_at": None}}})
    create = fake.post(f"{G}/{IG}/media")

    with pytest.raises(ProviderError) as err:
        InstagramAdapter().publish_segment(ctx, SegmentPayload(0, "x", [_media()]), reply_to=None)

    # Published means never again: no new container, a person settles the id.
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert not create.called


def test_quota_usage_reads_the_live_cap(fake):
    route = fake.get(f"{G}/{IG}/content_publishing_limit").respond(
        200,
        json={
            "data": [{"quota_usage": 12, "config": {"quota_total": 50, "quota_duration": 86400}}]
        },
    )
    assert InstagramAdapter().quota_usage(_ctx()) == {"used": 12, "total": 50, "window_s": 86400}
    assert _query(route.calls.last.request)["fields"] == "quota_usage,config"


def test_connect_exchanges_for_a_long_lived_token_and_reads_the_professional_id(fake):
    token = fake.post("https://api.instagram.com/oauth/access_token").respond(
        200,
        json={
            "data": [
                {
                    "access_token": "SHORT",
                    "user_id": "1020",
                    "permissions": "instagram_business_basic,instagram_business_content_publish",
                }
            ]
        },
    )
    exchange = fake.get("https://graph.instagram.com/access_token").respond(
        200, json={"access_token": "LONG", "token_type": "bearer", "expires_in": 5183944}
    )
    me = fake.get(f"{G}/me").respond(
        200, json={"user_id": IG, "username": "shop", "name": "The Shop", "id": "app-scoped"}
    )
    adapter = InstagramAdapter()

    url = adapter.authorization_url(state="S", code_challenge="C", redirect_uri="https://app/cb")
    identity = adapter.complete_connect(
        code="CODE", code_verifier="", redirect_uri="https://app/cb"
    )

    assert url.startswith("https://www.instagram.com/oauth/authorize?")
    assert _query(httpx.Request("GET", url))["scope"] == (
        "instagram_business_basic,instagram_business_content_publish,"
        "instagram_business_manage_comments"
    )
    assert _form(token.calls.last.request) == {
        "client_id": "ig-app",
        "client_secret": "ig-secret",
        "grant_type": "authorization_code",
        "redirect_uri": "https://app/cb",
        "code": "CODE",
    }
    assert _query(exchange.calls.last.request) == {
        "grant_type": "ig_exchange_token",
        "client_secret": "ig-secret",
        "access_token": "SHORT",
    }
    assert _query(me.calls.last.request)["fields"] == "user_id,username,name"
    assert identity.remote_id == IG
    assert identity.handle == "shop"
    assert identity.credentials["access_token"] == "LONG"


def test_a_refused_code_asks_to_reconnect(fake):
    fake.post("https://api.instagram.com/oauth/access_token").respond(
        400,
        json={"error_type": "OAuthException", "code": 400, "error_message": "Invalid code"},
    )
    with pytest.raises(ProviderError) as err:
        InstagramAdapter().complete_connect(code="X", code_verifier="", redirect_uri="r")
    assert err.value.kind == ErrorKind.AUTH_EXPIRED


def test_a_token_near_expiry_is_refreshed(fake):
    refresh = fake.get("https://graph.instagram.com/refresh_access_token").respond(
        200, json={"access_token": "FRESH", "token_type": "bearer", "expires_in": 5184000}
    )
    adapter = InstagramAdapter()
    far = _ctx(expires_at=datetime.now(UTC) + timedelta(days=40))
    assert adapter.refresh_credentials(far.account, far.credentials) is None

    near = _ctx(expires_at=datetime.now(UTC) + timedelta(days=3))
    fresh = adapter.refresh_credentials(near.account, near.credentials)

    assert _query(refresh.calls.last.request) == {
        "grant_type": "ig_refresh_token",
        "access_token": "IG-TOKEN",
    }
    assert fresh["access_token"] == "FRESH"
