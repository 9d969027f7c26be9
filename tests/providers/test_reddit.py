"""Reddit through its adapter against a respx fake of the OAuth API: submits of self, link
and image posts, 200-with-errors refusals, rate limits, the single-attempt rule and
reconciliation by the user's submissions."""

import base64
import io
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import respx

from apps.accounts.models import SocialAccount
from apps.providers.base import MediaPayload, PublishContext, PublishedSegment, SegmentPayload
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.reddit.adapter import RedditAdapter
from apps.providers.reddit.errors import ratelimit_wait

API = "https://oauth.reddit.com"
UA = "web:socialpost-tests:0.1 (by /u/tester)"


@pytest.fixture
def fake():
    with respx.mock(assert_all_called=False) as router:
        # A new post is read back for a removal; an empty answer: nothing removed.
        router.get(f"{API}/api/info").respond(json={"kind": "Listing", "data": {"children": []}})
        yield router


@pytest.fixture(autouse=True)
def _apps(settings):
    settings.REDDIT_CLIENT_ID = "rd-client"
    settings.REDDIT_CLIENT_SECRET = "rd-secret"
    settings.REDDIT_USER_AGENT = UA


def _ctx(settings=None, checkpoint=None):
    return PublishContext(
        account=SocialAccount(platform="reddit", remote_id="abc12", handle="baker"),
        credentials={"access_token": "RD-TOKEN"},
        settings={"subreddit": "r/Breadit", "title": "My first rye"}
        if settings is None
        else settings,
        rendition_id=2,
        idempotency_base="r2",
        checkpoint={} if checkpoint is None else checkpoint,
    )


def _form(request):
    return {k: v[0] for k, v in parse_qs(request.content.decode()).items()}


def _submitted(**data):
    return httpx.Response(200, json={"json": {"errors": [], "data": {"drafts_count": 0, **data}}})


def _errors(*errors):
    return httpx.Response(200, json={"json": {"errors": [list(e) for e in errors]}})


def test_a_self_post_is_submitted_with_title_and_flair(fake):
    submit = fake.post(f"{API}/api/submit").mock(
        return_value=_submitted(
            url="https://www.reddit.com/r/Breadit/comments/1abcde/my_first_rye/",
            id="1abcde",
            name="t3_1abcde",
        )
    )
    ctx = _ctx({"subreddit": "r/Breadit", "title": "My first rye", "flair_id": "f-1"})

    published = RedditAdapter().publish_segment(ctx, SegmentPayload(0, "Crumb shot"), reply_to=None)

    request = submit.calls.last.request
    assert request.headers["User-Agent"] == UA
    assert request.headers["Authorization"] == "Bearer RD-TOKEN"
    assert _form(request) == {
        "sr": "Breadit",
        "title": "My first rye",
        "kind": "self",
        "api_type": "json",
        "resubmit": "true",
        "sendreplies": "true",
        "nsfw": "false",
        "spoiler": "false",
        "text": "Crumb shot",
        "flair_id": "f-1",
    }
    assert published.provider_post_id == "t3_1abcde"
    assert published.provider_url.endswith("/comments/1abcde/my_first_rye/")


def test_a_link_post_sends_the_url_and_the_body_text(fake):
    submit = fake.post(f"{API}/api/submit").mock(
        return_value=_submitted(url="https://www.reddit.com/r/x/comments/2/", id="2", name="t3_2")
    )
    RedditAdapter().publish_segment(
        _ctx({"subreddit": "x", "title": "Recipe", "url": "https://bakery.example.com/r"}),
        SegmentPayload(0, "The method, step by step"),
        reply_to=None,
    )
    form = _form(submit.calls.last.request)
    assert form["kind"] == "link" and form["url"] == "https://bakery.example.com/r"
    assert form["text"] == "The method, step by step"


def test_a_link_post_without_text_sends_none(fake):
    submit = fake.post(f"{API}/api/submit").mock(
        return_value=_submitted(url="https://www.reddit.com/r/x/comments/2/", id="2", name="t3_2")
    )
    RedditAdapter().publish_segment(
        _ctx({"subreddit": "x", "title": "Recipe", "url": "https://bakery.example.com/r"}),
        SegmentPayload(0, ""),
        reply_to=None,
    )
    assert "text" not in _form(submit.calls.last.request)


def test_an_image_post_is_uploaded_then_found_in_the_submissions(fake):
    lease = fake.post(f"{API}/api/media/asset.json").respond(
        200,
        json={
            "args": {
                "action": "//reddit-uploaded-media.s3-accelerate.amazonaws.com",
                "fields": [
                    {"name": "acl", "value": "private"},
                    {"name": "key", "value": "rte_images/abc123"},
                    {"name": "policy", "value": "eyJ"},
                ],
            },
            "asset": {
                "asset_id": "abc123",
                "payload": {"filepath": "image.png"},
                "websocket_url": "wss://ws.example.com/rte_images/abc123",
            },
        },
    )
    storage = fake.post("https://reddit-uploaded-media.s3-accelerate.amazonaws.com").respond(201)
    submit = fake.post(f"{API}/api/submit").mock(
        return_value=_submitted(user_submitted_page="https://www.reddit.com/user/baker/submitted/",
                                websocket_url="wss://ws.example.com/x")
    )  # fmt: skip
    image = MediaPayload(1, "image", "image/png", 4, "", lambda: io.BytesIO(b"\x89PNG"))
    adapter, ctx = RedditAdapter(), _ctx()

    pending = adapter.publish_segment(ctx, SegmentPayload(0, "", [image]), reply_to=None)

    assert pending.pending is True
    assert _form(lease.calls.last.request) == {"filepath": "image.png", "mimetype": "image/png"}
    assert b"rte_images/abc123" in storage.calls.last.request.content
    assert "Authorization" not in storage.calls.last.request.headers
    form = _form(submit.calls.last.request)
    assert form["kind"] == "image"
    assert form["url"] == (
        "https://reddit-uploaded-media.s3-accelerate.amazonaws.com/rte_images/abc123"
    )

    submitted_at = ctx.checkpoint["submitted_at"]
    fake.get(f"{API}/user/baker/submitted").mock(
        side_effect=[
            httpx.Response(200, json={"kind": "Listing", "data": {"children": []}}),
            httpx.Response(200, json=_listing(("Breadit", "My first rye", submitted_at + 20))),
        ]
    )
    assert adapter.poll_segment(ctx, pending) == pending
    published = adapter.poll_segment(ctx, pending)
    assert published.provider_post_id == "t3_p0"
    assert published.pending is False


def _listing(*posts):
    return {
        "kind": "Listing",
        "data": {
            "after": None,
            "children": [
                {
                    "kind": "t3",
                    "data": {
                        "id": f"p{i}",
                        "name": f"t3_p{i}",
                        "subreddit": subreddit,
                        "title": title,
                        "created_utc": float(created),
                        "permalink": f"/r/{subreddit}/comments/p{i}/slug/",
                    },
                }
                for i, (subreddit, title, created) in enumerate(posts)
            ],
        },
    }


@pytest.mark.parametrize(
    ("error", "kind", "action"),
    [
        (("SUBREDDIT_NOEXIST", "that subreddit doesn't exist", "sr"), ErrorKind.CONTENT_REJECTED,
         Action.EDIT),
        (("SUBREDDIT_NOTALLOWED", "you aren't allowed to post there.", "sr"),
         ErrorKind.CONTENT_REJECTED, Action.EDIT),
        (("NO_SELFS", "that subreddit doesn't allow text posts", "sr"),
         ErrorKind.CONTENT_REJECTED, Action.EDIT),
        (("NO_LINKS", "that subreddit only allows text posts", "sr"),
         ErrorKind.CONTENT_REJECTED, Action.EDIT),
        (("TOO_LONG", "this is too long (max: 300)", "title"), ErrorKind.CONTENT_REJECTED,
         Action.EDIT),
        (("NO_TEXT", "we need something here", "title"), ErrorKind.CONTENT_REJECTED, Action.EDIT),
        (("BAD_URL", "you should check that url", "url"), ErrorKind.CONTENT_REJECTED, Action.EDIT),
        (("SUBMIT_VALIDATION_FLAIR_REQUIRED", "Your post must contain post flair.", "flair"),
         ErrorKind.CONTENT_REJECTED, Action.EDIT),
        (("ALREADY_SUB", "that link has already been submitted", "url"),
         ErrorKind.DUPLICATE_CONTENT, Action.EDIT),
    ],
)  # fmt: skip
def test_200_with_errors_is_a_refusal(fake, error, kind, action):
    fake.post(f"{API}/api/submit").mock(return_value=_errors(error))
    with pytest.raises(ProviderError) as err:
        RedditAdapter().publish_segment(_ctx(), SegmentPayload(0, "t"), reply_to=None)
    assert (err.value.kind, err.value.action, err.value.retryable) == (kind, action, False)
    assert (err.value.code, err.value.http_status, err.value.message) == (error[0], 200, error[1])


@pytest.mark.parametrize(
    ("message", "wait"),
    [
        ("you are doing that too much. try again in 9 minutes.", timedelta(minutes=9)),
        ("you are doing that too much. try again in 1 minute.", timedelta(minutes=1)),
        ("Looks like you've been doing that a lot. Take a break for 52 seconds before trying "
         "again.", timedelta(seconds=52)),
        ("try again in 500 milliseconds", timedelta(milliseconds=500)),
        ("you are doing that too much", None),
    ],
)  # fmt: skip
def test_the_ratelimit_wait_is_read_from_the_message(message, wait):
    assert ratelimit_wait(message) == wait


def test_a_ratelimit_in_the_body_sets_the_retry_time(fake):
    fake.post(f"{API}/api/submit").mock(
        return_value=_errors(
            ("RATELIMIT", "you are doing that too much. try again in 9 minutes.", "ratelimit")
        )
    )
    before = datetime.now(UTC)
    with pytest.raises(ProviderError) as err:
        RedditAdapter().publish_segment(_ctx(), SegmentPayload(0, "t"), reply_to=None)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retryable is True
    assert before + timedelta(minutes=9) <= err.value.retry_at <= before + timedelta(minutes=10)


def test_a_429_waits_for_the_window_reset(fake):
    fake.post(f"{API}/api/submit").respond(
        429,
        headers={"X-Ratelimit-Used": "100", "X-Ratelimit-Remaining": "0.0",
                 "X-Ratelimit-Reset": "37"},
        json={"message": "Too Many Requests", "error": 429},
    )  # fmt: skip
    before = datetime.now(UTC)
    with pytest.raises(ProviderError) as err:
        RedditAdapter().publish_segment(_ctx(), SegmentPayload(0, "t"), reply_to=None)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert before + timedelta(seconds=36) <= err.value.retry_at <= before + timedelta(seconds=39)


@pytest.mark.parametrize(
    ("response", "kind", "action"),
    [
        (httpx.Response(401, json={"message": "Unauthorized", "error": 401}),
         ErrorKind.AUTH_EXPIRED, Action.RECONNECT),
        (httpx.Response(403, json={"message": "Forbidden", "error": 403}),
         ErrorKind.PERMISSION_MISSING, Action.RECONNECT),
        (httpx.Response(502, text="<html><body>502 Bad Gateway</body></html>"),
         ErrorKind.OUTCOME_UNKNOWN, Action.VERIFY),
    ],
)  # fmt: skip
def test_http_errors_are_classified(fake, response, kind, action):
    fake.post(f"{API}/api/submit").mock(return_value=response)
    with pytest.raises(ProviderError) as err:
        RedditAdapter().publish_segment(_ctx(), SegmentPayload(0, "t"), reply_to=None)
    assert (err.value.kind, err.value.action, err.value.retryable) == (kind, action, False)


@pytest.mark.parametrize("rendition_settings", [{"title": "t"}, {"subreddit": "x"}])
def test_subreddit_and_title_are_required(fake, rendition_settings):
    submit = fake.post(f"{API}/api/submit")
    with pytest.raises(ProviderError) as err:
        RedditAdapter().publish_segment(
            _ctx(rendition_settings), SegmentPayload(0, "t"), reply_to=None
        )
    assert err.value.code == "subreddit_and_title_required"
    assert not submit.called


def test_a_lost_submit_is_never_retried_and_is_reconciled_by_listing(fake):
    fake.post(f"{API}/api/submit").mock(side_effect=httpx.ReadTimeout("slow"))
    adapter = RedditAdapter()
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(_ctx(), SegmentPayload(0, "Crumb shot"), reply_to=None)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert err.value.retryable is False
    assert adapter.is_retry_safe(_ctx().account) is False

    attempt = datetime(2026, 3, 1, 10, 0, 0, 500000, tzinfo=UTC)
    t = int(attempt.timestamp())
    listing = fake.get(f"{API}/user/baker/submitted").respond(
        200,
        json=_listing(
            ("Breadit", "My first rye", t - 3600),  # an older identical post
            ("baking", "My first rye", t + 5),  # another subreddit
            ("breadit", "My first rye", t),  # ours: same second as the attempt
        ),
    )

    found = adapter.lookup_segment(_ctx(), SegmentPayload(0, "Crumb shot"), not_before=attempt)

    assert found.provider_post_id == "t3_p2"
    assert found.provider_url == "https://www.reddit.com/r/breadit/comments/p2/slug/"
    request = listing.calls.last.request
    assert parse_qs(urlsplit(str(request.url)).query) == {"sort": ["new"], "limit": ["25"]}
    assert request.headers["User-Agent"] == UA


def test_lookup_finds_nothing_when_the_post_is_absent(fake):
    fake.get(f"{API}/user/baker/submitted").respond(
        200, json=_listing(("Breadit", "Something else", 1_900_000_000))
    )
    found = RedditAdapter().lookup_segment(
        _ctx(), SegmentPayload(0, "x"), not_before=datetime(2026, 3, 1, tzinfo=UTC)
    )
    assert found is None


def test_connect_asks_for_a_permanent_grant(fake):
    token = fake.post("https://www.reddit.com/api/v1/access_token").respond(
        200,
        json={
            "access_token": "RD-A",
            "token_type": "bearer",
            "expires_in": 86400,
            "refresh_token": "RD-R",
            "scope": "identity submit read history flair",
        },
    )
    me = fake.get(f"{API}/api/v1/me").respond(200, json={"id": "abc12", "name": "baker"})
    adapter = RedditAdapter()

    url = adapter.authorization_url(state="S", code_challenge="", redirect_uri="https://app/cb")
    identity = adapter.complete_connect(
        code="CODE", code_verifier="", redirect_uri="https://app/cb"
    )

    query = parse_qs(urlsplit(url).query)
    assert url.startswith("https://www.reddit.com/api/v1/authorize?")
    assert query["duration"] == ["permanent"]
    assert query["scope"] == ["identity submit read history flair edit"]
    request = token.calls.last.request
    assert (
        request.headers["Authorization"]
        == "Basic " + base64.b64encode(b"rd-client:rd-secret").decode()
    )
    assert request.headers["User-Agent"] == UA
    assert _form(request) == {
        "grant_type": "authorization_code",
        "code": "CODE",
        "redirect_uri": "https://app/cb",
    }
    assert me.calls.last.request.headers["User-Agent"] == UA
    assert (identity.remote_id, identity.handle) == ("abc12", "baker")
    assert identity.credentials["refresh_token"] == "RD-R"


def test_a_refused_code_answered_with_200_asks_to_reconnect(fake):
    fake.post("https://www.reddit.com/api/v1/access_token").respond(
        200, json={"error": "invalid_grant"}
    )
    with pytest.raises(ProviderError) as err:
        RedditAdapter().complete_connect(code="OLD", code_verifier="", redirect_uri="r")
    assert err.value.kind == ErrorKind.AUTH_EXPIRED
    assert err.value.code == "invalid_grant"


def test_refresh_keeps_the_refresh_token(fake):
    refresh = fake.post("https://www.reddit.com/api/v1/access_token").respond(
        200,
        json={"access_token": "RD-B", "token_type": "bearer", "expires_in": 86400, "scope": "*"},
    )
    account = SocialAccount(
        platform="reddit", token_expires_at=datetime.now(UTC) + timedelta(minutes=1)
    )
    fresh = RedditAdapter().refresh_credentials(
        account, {"access_token": "RD-A", "refresh_token": "RD-R"}
    )
    assert _form(refresh.calls.last.request) == {
        "grant_type": "refresh_token",
        "refresh_token": "RD-R",
    }
    assert fresh["access_token"] == "RD-B" and fresh["refresh_token"] == "RD-R"


def test_a_published_segment_is_not_pending(fake):
    fake.post(f"{API}/api/submit").mock(
        return_value=_submitted(url="https://www.reddit.com/r/x/comments/3/", id="3", name="t3_3")
    )
    published = RedditAdapter().publish_segment(_ctx(), SegmentPayload(0, "t"), reply_to=None)
    assert published == PublishedSegment(
        provider_post_id="t3_3",
        provider_url="https://www.reddit.com/r/x/comments/3/",
        published_at=published.published_at,
    )
