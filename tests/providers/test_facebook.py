"""Facebook Pages through its adapter against a respx fake of the documented Graph
endpoints: feed posts, photos, videos, the Graph error table, page selection at connect."""

import io
import json
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import respx

from apps.accounts.models import SocialAccount
from apps.providers.base import (
    ConnectedIdentity,
    MediaPayload,
    PublishContext,
    PublishedSegment,
    SegmentPayload,
    SupportsAccountChoice,
)
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.facebook.adapter import FacebookPagesAdapter
from apps.providers.facebook.connect import page_select

G = "https://graph.facebook.com/v23.0"
PAGE = "1122334455"


@pytest.fixture
def fake():
    with respx.mock(assert_all_called=False) as router:
        yield router


@pytest.fixture(autouse=True)
def _apps(settings):
    settings.META_APP_ID = "meta-app"
    settings.META_APP_SECRET = "meta-secret"


def _ctx(settings=None, *, video_upload=None):
    account = SocialAccount(platform="facebook", remote_id=PAGE, handle="Bakery")
    if video_upload:
        account.settings = {"video_upload": video_upload}
    return PublishContext(
        account=account,
        credentials={"access_token": "PAGE-TOKEN"},
        settings=settings or {},
        rendition_id=3,
        idempotency_base="r3",
    )


def _form(request):
    return {k: v[0] for k, v in parse_qs(request.content.decode()).items()}


def _query(request):
    return {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}


def _photo(url="https://media.example.com/s/cake.jpg", data=b"\xff\xd8jpeg"):
    return MediaPayload(
        media_id=1,
        kind="image",
        mime_type="image/jpeg",
        size_bytes=len(data),
        alt_text="",
        open=lambda: io.BytesIO(data),
        public_url=url,
    )


def _graph_error(code, message, subcode=None, status=400, **extra):
    error = {"message": message, "type": "OAuthException", "code": code, "fbtrace_id": "F1"}
    if subcode:
        error["error_subcode"] = subcode
    error.update(extra)
    return httpx.Response(status, json={"error": error})


def test_a_text_post_goes_to_the_feed_with_the_page_token(fake):
    feed = fake.post(f"{G}/{PAGE}/feed").respond(200, json={"id": f"{PAGE}_987"})
    fake.get(f"{G}/{PAGE}_987").respond(
        200, json={"permalink_url": "https://www.facebook.com/bakery/posts/987", "id": "x"}
    )

    published = FacebookPagesAdapter().publish_segment(
        _ctx({"link": "https://bakery.example.com"}),
        SegmentPayload(0, "Fresh bread"),
        reply_to=None,
    )

    assert _form(feed.calls.last.request) == {
        "message": "Fresh bread",
        "link": "https://bakery.example.com",
    }
    assert feed.calls.last.request.headers["Authorization"] == "Bearer PAGE-TOKEN"
    assert published.provider_post_id == f"{PAGE}_987"
    assert published.provider_url == "https://www.facebook.com/bakery/posts/987"
    assert published.pending is False


def test_one_photo_is_posted_by_url(fake):
    photos = fake.post(f"{G}/{PAGE}/photos").respond(
        200, json={"id": "555", "post_id": f"{PAGE}_556"}
    )
    fake.get(f"{G}/{PAGE}_556").respond(500)

    published = FacebookPagesAdapter().publish_segment(
        _ctx(), SegmentPayload(0, "Cake", [_photo()]), reply_to=None
    )

    assert _form(photos.calls.last.request) == {
        "published": "true",
        "message": "Cake",
        "url": "https://media.example.com/s/cake.jpg",
    }
    assert published.provider_post_id == f"{PAGE}_556"
    # The permalink read failed; the post still counts, with the id-based URL.
    assert published.provider_url == f"https://www.facebook.com/{PAGE}_556"


def test_a_photo_without_a_public_url_is_uploaded_as_bytes(fake):
    photos = fake.post(f"{G}/{PAGE}/photos").respond(200, json={"id": "1", "post_id": "P_1"})
    fake.get(f"{G}/P_1").respond(200, json={"permalink_url": "https://www.facebook.com/P_1"})

    FacebookPagesAdapter().publish_segment(
        _ctx(), SegmentPayload(0, "Cake", [_photo(url=None)]), reply_to=None
    )

    body = photos.calls.last.request.content
    assert b'name="source"' in body and b"\xff\xd8jpeg" in body
    assert b'name="message"' in body


def test_several_photos_are_attached_to_one_feed_post(fake):
    photos = fake.post(f"{G}/{PAGE}/photos").mock(
        side_effect=[httpx.Response(200, json={"id": "P1"}), httpx.Response(200, json={"id": "P2"})]
    )
    feed = fake.post(f"{G}/{PAGE}/feed").respond(200, json={"id": f"{PAGE}_9"})
    fake.get(f"{G}/{PAGE}_9").respond(200, json={"permalink_url": "https://www.facebook.com/9"})

    FacebookPagesAdapter().publish_segment(
        _ctx(), SegmentPayload(0, "Two", [_photo(), _photo()]), reply_to=None
    )

    assert [_form(c.request)["published"] for c in photos.calls] == ["false", "false"]
    form = _form(feed.calls.last.request)
    assert form["message"] == "Two"
    assert json.loads(form["attached_media"]) == [{"media_fbid": "P1"}, {"media_fbid": "P2"}]


def test_a_video_waits_for_processing(fake):
    video = MediaPayload(
        media_id=2,
        kind="video",
        mime_type="video/mp4",
        size_bytes=3,
        alt_text="",
        open=lambda: io.BytesIO(b"mp4"),
        public_url="https://media.example.com/s/v.mp4",
    )
    # Facebook takes video uploads only on graph-video.facebook.com.
    upload = fake.post(f"https://graph-video.facebook.com/v23.0/{PAGE}/videos").respond(
        200, json={"id": "V1"}
    )
    status = fake.get(f"{G}/V1").mock(
        side_effect=[
            # Uploaded is not published: upload_complete is still pending.
            httpx.Response(200, json={"status": {"video_status": "upload_complete"}, "id": "V1"}),
            httpx.Response(
                200,
                json={
                    "status": {"video_status": "ready"},
                    "permalink_url": "/bakery/videos/V1/",
                    "id": "V1",
                },
            ),
        ]
    )
    # The account keeps the videos edge's older ways: Facebook fetches the public URL.
    adapter, ctx = FacebookPagesAdapter(), _ctx({"title": "Baking"}, video_upload="upload_phase")

    pending = adapter.publish_segment(ctx, SegmentPayload(0, "How", [video]), reply_to=None)
    assert pending == PublishedSegment(provider_post_id="V1", pending=True)
    assert _form(upload.calls.last.request) == {
        "description": "How",
        "title": "Baking",
        "file_url": "https://media.example.com/s/v.mp4",
    }
    assert adapter.poll_segment(ctx, pending) == pending
    entry = ctx.checkpoint["videos"]["0"]
    assert (entry["protocol"], entry["video_id"]) == ("file_url", "V1")
    assert entry["publish_sent"]  # marked before the call that makes the video
    published = adapter.poll_segment(ctx, pending)

    assert _query(status.calls.last.request)["fields"] == "status,permalink_url"
    assert published.provider_url == "https://www.facebook.com/bakery/videos/V1/"


def test_a_video_without_a_public_url_is_sent_as_meta_documents_the_resumable_upload(
    fake, settings
):
    settings.FACEBOOK_VIDEO_UPLOAD = "auto"
    settings.META_UPLOAD_ACCESS_TOKEN = ""
    data = b"mp4-bytes"
    video = MediaPayload(
        2, "video", "video/mp4", len(data), "", lambda: io.BytesIO(data), public_url=None
    )
    opened = fake.post(f"{G}/meta-app/uploads").respond(200, json={"id": "upload:S1?sig=A"})
    sent = fake.post(f"{G}/upload:S1").respond(200, json={"h": "2:H1"})
    made = fake.post(f"{G}/{PAGE}/videos").respond(200, json={"id": "V9"})
    adapter, ctx = FacebookPagesAdapter(), _ctx({"title": "Baking"})

    pending = adapter.publish_segment(ctx, SegmentPayload(0, "How", [video]), reply_to=None)

    assert pending == PublishedSegment(provider_post_id="V9", pending=True)
    assert _form(opened.calls.last.request) == {
        "file_name": "rendition-3.mp4",
        "file_length": str(len(data)),
        "file_type": "video/mp4",
    }
    append = sent.calls.last.request
    assert _query(append) == {"sig": "A"}  # the session id is used as Meta gives it
    assert append.headers["Authorization"] == "OAuth PAGE-TOKEN"
    assert append.headers["file_offset"] == "0"
    assert append.content == data
    assert _form(made.calls.last.request) == {
        "description": "How",
        "title": "Baking",
        "fbuploader_video_file_chunk": "2:H1",
    }
    entry = ctx.checkpoint["videos"]["0"]
    assert (entry["session"], entry["handle"], entry["video_id"]) == (
        "upload:S1?sig=A",
        "2:H1",
        "V9",
    )


def test_a_duplicate_status_is_a_duplicate(fake):
    fake.post(f"{G}/{PAGE}/feed").mock(
        return_value=_graph_error(506, "(#506) Duplicate status message")
    )
    with pytest.raises(ProviderError) as err:
        FacebookPagesAdapter().publish_segment(_ctx(), SegmentPayload(0, "same"), reply_to=None)
    assert err.value.kind == ErrorKind.DUPLICATE_CONTENT
    assert err.value.code == "506"
    assert err.value.http_status == 400
    assert err.value.message == "(#506) Duplicate status message"


UNKNOWN = (ErrorKind.OUTCOME_UNKNOWN, False, Action.VERIFY)
THROTTLED = (ErrorKind.RATE_LIMITED, True, Action.WAIT)
NO_PERMISSION = (ErrorKind.PERMISSION_MISSING, False, Action.RECONNECT)
REJECTED = (ErrorKind.CONTENT_REJECTED, False, Action.EDIT)
EXPIRED = (ErrorKind.AUTH_EXPIRED, False, Action.RECONNECT)


# The Graph error table of the reference, shared by Facebook, Instagram and Threads.
@pytest.mark.parametrize(
    ("response", "kind", "retryable", "action"),
    [
        (_graph_error(1, "An unknown error occurred", status=500), *UNKNOWN),
        (_graph_error(2, "Service temporarily unavailable", status=503), *UNKNOWN),
        (_graph_error(9999, "Odd", is_transient=True), *UNKNOWN),
        (_graph_error(4, "Application request limit reached"), *THROTTLED),
        (_graph_error(17, "User request limit reached"), *THROTTLED),
        (_graph_error(32, "Page request limit reached"), *THROTTLED),
        (_graph_error(613, "Calls to this api have exceeded the rate limit."), *THROTTLED),
        (_graph_error(80001, "Too many calls to this Page account."), *THROTTLED),
        (_graph_error(341, "Application limit reached"), *THROTTLED),
        (_graph_error(10, "Application does not have permission", status=403), *NO_PERMISSION),
        (_graph_error(200, "Permissions error", status=403), *NO_PERMISSION),
        (_graph_error(299, "Permission not granted"), *NO_PERMISSION),
        (_graph_error(100, "Invalid parameter"), *REJECTED),
        (_graph_error(1609005, "Error Posting Link"), *REJECTED),
        (_graph_error(190, "The user has not authorized application.", 458, 401), *EXPIRED),
        (_graph_error(190, "Error validating access token: Session has expired", 463), *EXPIRED),
        (
            _graph_error(368, "The action attempted has been deemed abusive"),
            ErrorKind.CONTENT_REJECTED,
            False,
            Action.RETRY,
        ),
        (httpx.Response(502, text="<html>Bad gateway</html>"), *UNKNOWN),
    ],
)
def test_the_graph_error_table(fake, response, kind, retryable, action):
    fake.post(f"{G}/{PAGE}/feed").mock(return_value=response)
    with pytest.raises(ProviderError) as err:
        FacebookPagesAdapter().publish_segment(_ctx(), SegmentPayload(0, "x"), reply_to=None)
    assert (err.value.kind, err.value.retryable, err.value.action) == (kind, retryable, action)


def test_a_transient_error_on_a_read_is_retryable(fake):
    fake.get(f"{G}/V1").mock(
        return_value=_graph_error(2, "Service temporarily unavailable", status=503)
    )
    with pytest.raises(ProviderError) as err:
        FacebookPagesAdapter().poll_segment(_ctx(), PublishedSegment("V1", pending=True))
    assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE
    assert err.value.retryable is True


def test_throttling_honours_the_business_use_case_header(fake):
    usage = {
        PAGE: [
            {"type": "pages", "call_count": 100, "total_cputime": 20, "total_time": 30,
             "estimated_time_to_regain_access": 5},
            {"type": "pages", "call_count": 100, "estimated_time_to_regain_access": 12},
        ]
    }  # fmt: skip
    fake.post(f"{G}/{PAGE}/feed").mock(
        return_value=httpx.Response(
            400,
            headers={"X-Business-Use-Case-Usage": json.dumps(usage)},
            json={"error": {"message": "limit", "type": "OAuthException", "code": 80001}},
        )
    )
    before = datetime.now(UTC)
    with pytest.raises(ProviderError) as err:
        FacebookPagesAdapter().publish_segment(_ctx(), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert before + timedelta(minutes=12) <= err.value.retry_at <= before + timedelta(minutes=13)


def test_a_lost_answer_is_reconciled_from_published_posts(fake):
    fake.post(f"{G}/{PAGE}/feed").mock(side_effect=httpx.ReadTimeout("slow"))
    adapter = FacebookPagesAdapter()
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(_ctx(), SegmentPayload(0, "Open today"), reply_to=None)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert adapter.is_retry_safe(_ctx().account) is False

    not_before = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    listing = fake.get(f"{G}/{PAGE}/published_posts").respond(
        200,
        json={
            "data": [
                {
                    "id": f"{PAGE}_1",
                    "message": "Open today",
                    "created_time": "2026-02-20T09:00:00+0000",
                    "permalink_url": "https://www.facebook.com/old",
                },
                {
                    "id": f"{PAGE}_2",
                    "message": "Open today ",
                    "created_time": "2026-03-01T09:00:03+0000",
                    "permalink_url": "https://www.facebook.com/new",
                },
            ]
        },
    )
    found = adapter.lookup_segment(_ctx(), SegmentPayload(0, "Open today"), not_before=not_before)

    assert found.provider_post_id == f"{PAGE}_2"
    assert found.provider_url == "https://www.facebook.com/new"
    query = _query(listing.calls.last.request)
    assert query["fields"] == "id,message,created_time,permalink_url"
    assert int(query["since"]) == int((not_before - timedelta(minutes=2)).timestamp())

    assert (
        adapter.lookup_segment(_ctx(), SegmentPayload(0, "Closed"), not_before=not_before) is None
    )


def test_connect_lists_pages_to_choose_and_the_choice_keeps_the_page_token(fake):
    code = fake.get(f"{G}/oauth/access_token", params={"code": "CODE"}).respond(
        200, json={"access_token": "SHORT", "token_type": "bearer", "expires_in": 5000}
    )
    exchange = fake.get(
        f"{G}/oauth/access_token", params={"grant_type": "fb_exchange_token"}
    ).respond(
        200, json={"access_token": "LONG-USER", "token_type": "bearer", "expires_in": 5183944}
    )
    fake.get(f"{G}/me").respond(200, json={"id": "u1", "name": "Pat Baker"})
    accounts = fake.get(f"{G}/me/accounts").respond(
        200,
        json={
            "data": [
                {"id": PAGE, "name": "Bakery", "access_token": "PAGE-TOKEN",
                 "tasks": ["ANALYZE", "ADVERTISE", "MODERATE", "CREATE_CONTENT", "MANAGE"]},
                {"id": "777", "name": "Cafe", "access_token": "CAFE-TOKEN",
                 "tasks": ["CREATE_CONTENT"]},
                {"id": "999", "name": "Fan club", "access_token": "FAN-TOKEN",
                 "tasks": ["ANALYZE"]},
            ],
            "paging": {"cursors": {"before": "a", "after": "b"}},
        },
    )  # fmt: skip
    adapter = FacebookPagesAdapter()
    assert isinstance(adapter, SupportsAccountChoice)

    url = adapter.authorization_url(state="S", code_challenge="", redirect_uri="https://app/cb")
    identity = adapter.complete_connect(
        code="CODE", code_verifier="", redirect_uri="https://app/cb"
    )

    assert url.startswith("https://www.facebook.com/v23.0/dialog/oauth?")
    assert _query(httpx.Request("GET", url))["scope"] == (
        "pages_manage_posts,pages_read_engagement,pages_show_list,publish_video,"
        "pages_manage_engagement"
    )
    assert _query(code.calls.last.request) == {
        "client_id": "meta-app",
        "redirect_uri": "https://app/cb",
        "client_secret": "meta-secret",
        "code": "CODE",
    }
    assert _query(exchange.calls.last.request) == {
        "grant_type": "fb_exchange_token",
        "client_id": "meta-app",
        "client_secret": "meta-secret",
        "fb_exchange_token": "SHORT",
    }
    assert accounts.calls.last.request.headers["Authorization"] == "Bearer LONG-USER"
    assert identity.settings["pages"] == [
        {"id": PAGE, "name": "Bakery", "can_publish": True},
        {"id": "777", "name": "Cafe", "can_publish": True},
        {"id": "999", "name": "Fan club", "can_publish": False},
    ]
    assert "PAGE-TOKEN" not in json.dumps(identity.settings)  # tokens stay in credentials

    assert adapter.account_choices(identity) == identity.settings["pages"]
    page = adapter.select_account(identity, choice_id=PAGE)

    assert page == ConnectedIdentity(
        remote_id=PAGE,
        handle="Bakery",
        display_name="Bakery",
        credentials={"access_token": "PAGE-TOKEN"},
        token_expires_at=None,
        settings={"page_id": PAGE, "connected_by": "u1"},
    )
    assert adapter.account_choices(page) == []
    with pytest.raises(LookupError):
        page_select(identity, page_id="999")
    with pytest.raises(LookupError):
        page_select(identity, page_id="404")


def test_connect_picks_the_only_page_the_person_can_publish_to(fake):
    fake.get(f"{G}/oauth/access_token").respond(
        200, json={"access_token": "T", "token_type": "bearer", "expires_in": 5183944}
    )
    fake.get(f"{G}/me").respond(200, json={"id": "u1", "name": "Pat Baker"})
    fake.get(f"{G}/me/accounts").respond(
        200,
        json={
            "data": [
                {"id": PAGE, "name": "Bakery", "access_token": "PAGE-TOKEN",
                 "tasks": ["CREATE_CONTENT", "MANAGE"]},
                {"id": "999", "name": "Fan club", "access_token": "FAN-TOKEN",
                 "tasks": ["ANALYZE"]},
            ]
        },
    )  # fmt: skip

    identity = FacebookPagesAdapter().complete_connect(
        code="CODE", code_verifier="", redirect_uri="https://app/cb"
    )

    assert identity.remote_id == PAGE
    assert identity.credentials == {"access_token": "PAGE-TOKEN"}
    assert FacebookPagesAdapter().account_choices(identity) == []


def test_a_refused_code_asks_to_reconnect(fake):
    fake.get(f"{G}/oauth/access_token").mock(
        return_value=_graph_error(100, "This authorization code has been used.", 36009)
    )
    with pytest.raises(ProviderError) as err:
        FacebookPagesAdapter().complete_connect(code="OLD", code_verifier="", redirect_uri="r")
    assert err.value.kind == ErrorKind.AUTH_EXPIRED


def test_page_tokens_need_no_refresh():
    account = SocialAccount(platform="facebook", remote_id=PAGE, handle="Bakery")
    assert FacebookPagesAdapter().refresh_credentials(account, {"access_token": "T"}) is None
