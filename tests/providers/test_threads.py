"""Threads through its adapter against a respx fake of the documented Graph endpoints:
containers (create, status, publish), reply chains, carousels, long-lived tokens."""

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import respx

from apps.accounts.models import SocialAccount
from apps.providers.base import (
    MediaPayload,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    SupportsLookup,
    SupportsOAuthConnect,
    SupportsStatusPoll,
    get_adapter,
)
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.threads.adapter import POLL_SCHEDULE, ThreadsAdapter

G = "https://graph.threads.net/v1.0"
USER = "1001"


@pytest.fixture
def fake():
    with respx.mock(assert_all_called=False) as router:
        yield router


@pytest.fixture(autouse=True)
def _apps(settings):
    settings.META_APP_ID = "meta-app"
    settings.META_APP_SECRET = "meta-secret"
    settings.THREADS_APP_ID = "threads-app"
    settings.THREADS_APP_SECRET = "threads-secret"


def _ctx(settings=None, checkpoint=None, expires_at=None):
    account = SocialAccount(
        platform="threads", remote_id=USER, handle="alice", token_expires_at=expires_at
    )
    return PublishContext(
        account=account,
        credentials={"access_token": "LONG-TOKEN"},
        settings=settings or {},
        rendition_id=1,
        idempotency_base="r1",
        checkpoint={} if checkpoint is None else checkpoint,
    )


def _form(request: httpx.Request) -> dict:
    return {k: v[0] for k, v in parse_qs(request.content.decode()).items()}


def _query(request: httpx.Request) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}


def _image(url="https://media.example.com/signed/a.jpg", alt="A cat"):
    return MediaPayload(
        media_id=1,
        kind="image",
        mime_type="image/jpeg",
        size_bytes=10,
        alt_text=alt,
        open=lambda: None,
        public_url=url,
    )


def _graph_error(code, message, subcode=None, status=400, **extra):
    error = {"message": message, "type": "OAuthException", "code": code, "fbtrace_id": "Ab1"}
    if subcode:
        error["error_subcode"] = subcode
    error.update(extra)
    return httpx.Response(status, json={"error": error})


def _status(fake, container, *states):
    return fake.get(f"{G}/{container}").mock(
        side_effect=[httpx.Response(200, json={"status": s, "id": container}) for s in states]
    )


def test_it_registers_with_the_optional_capabilities():
    adapter = get_adapter("threads")
    assert isinstance(adapter, ThreadsAdapter)
    assert isinstance(adapter, SupportsStatusPoll)
    assert isinstance(adapter, SupportsLookup)
    assert isinstance(adapter, SupportsOAuthConnect)
    # The publish call itself has no dedupe: an unknown outcome is reconciled, never resent.
    assert adapter.is_retry_safe(_ctx().account) is False
    assert adapter.poll_schedule is POLL_SCHEDULE
    assert POLL_SCHEDULE.next_delay(polls_done=0, elapsed_s=0) == 10
    assert POLL_SCHEDULE.next_delay(polls_done=1, elapsed_s=10) == 60
    assert POLL_SCHEDULE.next_delay(polls_done=14, elapsed_s=870) == 30  # the budget's rest
    assert POLL_SCHEDULE.next_delay(polls_done=3, elapsed_s=900) is None


def test_a_text_post_waits_in_a_container_then_publishes(fake):
    create = fake.post(f"{G}/{USER}/threads").respond(200, json={"id": "C1"})
    status = _status(fake, "C1", "FINISHED")
    publish = fake.post(f"{G}/{USER}/threads_publish").respond(200, json={"id": "M1"})
    permalink = fake.get(f"{G}/M1").respond(
        200, json={"permalink": "https://www.threads.net/@alice/post/abc", "id": "M1"}
    )
    adapter, ctx = ThreadsAdapter(), _ctx()

    pending = adapter.publish_segment(ctx, SegmentPayload(0, "hello threads"), reply_to=None)

    assert pending == PublishedSegment(provider_post_id="C1", pending=True)
    assert _form(create.calls.last.request) == {"media_type": "TEXT", "text": "hello threads"}
    assert create.calls.last.request.headers["Authorization"] == "Bearer LONG-TOKEN"
    assert "access_token" not in str(create.calls.last.request.url)
    assert ctx.checkpoint["containers"]["0"]["id"] == "C1"
    assert not publish.called  # publishing is the poll's job

    published = adapter.poll_segment(ctx, pending)

    assert _query(status.calls.last.request)["fields"] == "status,error_message"
    assert _form(publish.calls.last.request) == {"creation_id": "C1"}
    assert _query(permalink.calls.last.request)["fields"] == "permalink"
    assert published.provider_post_id == "M1"  # the media id, not the container id
    assert published.provider_url == "https://www.threads.net/@alice/post/abc"
    assert published.pending is False and published.published_at is not None


def test_an_in_progress_container_stays_pending(fake):
    _status(fake, "C1", "IN_PROGRESS")
    publish = fake.post(f"{G}/{USER}/threads_publish")
    pending = PublishedSegment(provider_post_id="C1", pending=True)

    assert ThreadsAdapter().poll_segment(_ctx(), pending) == pending
    assert not publish.called


def test_a_permalink_failure_does_not_undo_a_publish(fake):
    _status(fake, "C1", "FINISHED")
    fake.post(f"{G}/{USER}/threads_publish").respond(200, json={"id": "M1"})
    fake.get(f"{G}/M1").respond(500, json={"error": {"code": 2, "message": "down"}})

    published = ThreadsAdapter().poll_segment(_ctx(), PublishedSegment("C1", pending=True))

    assert published.provider_post_id == "M1"
    assert published.provider_url == ""


def test_a_reply_names_the_previous_segment(fake):
    create = fake.post(f"{G}/{USER}/threads").respond(200, json={"id": "C2"})
    root = PublishedSegment(provider_post_id="M1")

    ThreadsAdapter().publish_segment(
        _ctx({"reply_control": "accounts_you_follow"}),
        SegmentPayload(1, "2/2"),
        reply_to=ReplyTarget(root=root, parent=root),
    )

    assert _form(create.calls.last.request) == {
        "media_type": "TEXT",
        "text": "2/2",
        "reply_to_id": "M1",
        "reply_control": "accounts_you_follow",
    }


def test_an_image_goes_by_its_public_url_with_alt_text(fake):
    create = fake.post(f"{G}/{USER}/threads").respond(200, json={"id": "C1"})

    ThreadsAdapter().publish_segment(_ctx(), SegmentPayload(0, "pic", [_image()]), reply_to=None)

    assert _form(create.calls.last.request) == {
        "media_type": "IMAGE",
        "image_url": "https://media.example.com/signed/a.jpg",
        "text": "pic",
        "alt_text": "A cat",
    }


def test_media_without_a_public_url_cannot_be_sent(fake):
    create = fake.post(f"{G}/{USER}/threads")
    with pytest.raises(ProviderError) as err:
        ThreadsAdapter().publish_segment(
            _ctx(), SegmentPayload(0, "pic", [_image(url=None)]), reply_to=None
        )
    assert err.value.code == "media_url_missing"
    assert err.value.retryable is False
    assert not create.called


def test_a_carousel_makes_item_containers_then_the_carousel(fake):
    create = fake.post(f"{G}/{USER}/threads").mock(
        side_effect=[
            httpx.Response(200, json={"id": "I1"}),
            httpx.Response(200, json={"id": "I2"}),
            httpx.Response(200, json={"id": "CAR"}),
        ]
    )
    _status(fake, "I1", "FINISHED")
    _status(fake, "I2", "FINISHED")
    ctx = _ctx()

    pending = ThreadsAdapter().publish_segment(
        ctx,
        SegmentPayload(0, "two pics", [_image(), _image("https://m.example.com/b.jpg", "")]),
        reply_to=None,
    )

    items = [_form(call.request) for call in create.calls]
    assert items[0] == {
        "media_type": "IMAGE",
        "image_url": "https://media.example.com/signed/a.jpg",
        "alt_text": "A cat",
        "is_carousel_item": "true",
    }
    assert items[1]["is_carousel_item"] == "true" and "alt_text" not in items[1]
    assert items[2] == {"media_type": "CAROUSEL", "children": "I1,I2", "text": "two pics"}
    assert pending == PublishedSegment(provider_post_id="CAR", pending=True)
    assert ctx.checkpoint["containers"]["0"]["children"] == ["I1", "I2"]


def test_a_carousel_waits_for_its_items_before_the_carousel_container(fake):
    create = fake.post(f"{G}/{USER}/threads").mock(
        side_effect=[
            httpx.Response(200, json={"id": "I1"}),
            httpx.Response(200, json={"id": "I2"}),
            httpx.Response(200, json={"id": "CAR"}),
        ]
    )
    _status(fake, "I1", "FINISHED", "FINISHED")
    _status(fake, "I2", "IN_PROGRESS", "FINISHED")
    _status(fake, "CAR", "FINISHED")
    publish = fake.post(f"{G}/{USER}/threads_publish").respond(200, json={"id": "M9"})
    fake.get(f"{G}/M9").respond(200, json={"permalink": "https://www.threads.net/p/9"})
    adapter, ctx = ThreadsAdapter(), _ctx()
    root = PublishedSegment(provider_post_id="M1")

    pending = adapter.publish_segment(
        ctx,
        SegmentPayload(1, "items", [_image(), _image()]),
        reply_to=ReplyTarget(root=root, parent=root),
    )
    assert pending == PublishedSegment(provider_post_id="children:I1,I2", pending=True)
    assert create.call_count == 2

    published = adapter.poll_segment(ctx, pending)

    assert _form(create.calls.last.request) == {
        "media_type": "CAROUSEL",
        "children": "I1,I2",
        "text": "items",
        "reply_to_id": "M1",
    }
    assert _form(publish.calls.last.request) == {"creation_id": "CAR"}
    assert published.provider_post_id == "M9"


def test_a_failed_container_is_a_content_rejection(fake):
    fake.get(f"{G}/C1").respond(
        200, json={"status": "ERROR", "error_message": "FAILED_DOWNLOADING_VIDEO"}
    )
    with pytest.raises(ProviderError) as err:
        ThreadsAdapter().poll_segment(_ctx(), PublishedSegment("C1", pending=True))
    assert err.value.kind == ErrorKind.CONTENT_REJECTED
    assert err.value.code == "FAILED_DOWNLOADING_VIDEO"
    assert err.value.retryable is False
    assert err.value.action == Action.EDIT


def test_an_expired_container_is_handed_to_reconciliation_not_polled_again(fake):
    _status(fake, "C1", "EXPIRED")
    with pytest.raises(ProviderError) as err:
        ThreadsAdapter().poll_segment(_ctx(), PublishedSegment("C1", pending=True))
    # Polling an expired container again cannot help; reconciliation makes a new one.
    assert err.value.kind == ErrorKind.UNKNOWN
    assert err.value.code == "container_expired"
    assert err.value.retryable is False


def test_a_repeated_attempt_reuses_its_container(fake):
    create = fake.post(f"{G}/{USER}/threads").respond(200, json={"id": "NEW"})
    _status(fake, "C1", "FINISHED")
    ctx = _ctx(checkpoint={"containers": {"0": {"id": "C1", "text": "x", "created_at": None}}})

    again = ThreadsAdapter().publish_segment(ctx, SegmentPayload(0, "x"), reply_to=None)

    assert again == PublishedSegment(provider_post_id="C1", pending=True)
    assert not create.called


def test_a_repeated_attempt_after_an_expired_container_makes_a_new_one(fake):
    create = fake.post(f"{G}/{USER}/threads").respond(200, json={"id": "NEW"})
    _status(fake, "C1", "EXPIRED")
    ctx = _ctx(checkpoint={"containers": {"0": {"id": "C1", "text": "x", "created_at": None}}})

    again = ThreadsAdapter().publish_segment(ctx, SegmentPayload(0, "x"), reply_to=None)

    assert create.call_count == 1
    assert again.provider_post_id == "NEW"
    assert ctx.checkpoint["containers"]["0"]["id"] == "NEW"


def _published_listing(fake, text, timestamp):
    return fake.get(f"{G}/{USER}/threads").respond(
        200,
        json={
            "data": [
                {
                    "id": "OLD",
                    "text": text,
                    "timestamp": "2020-01-01T00:00:00+0000",
                    "permalink": "https://www.threads.net/p/old",
                },
                {
                    "id": "M7",
                    "text": text,
                    "timestamp": timestamp,
                    "permalink": "https://www.threads.net/p/7",
                },
            ],
            "paging": {},
        },
    )


def test_an_unknown_publish_is_reconciled_by_the_container_status(fake):
    _status(fake, "C1", "FINISHED")
    fake.post(f"{G}/{USER}/threads_publish").mock(side_effect=httpx.ReadTimeout("slow"))
    adapter = ThreadsAdapter()
    started = datetime.now(UTC)
    ctx = _ctx(
        checkpoint={
            "containers": {"0": {"id": "C1", "text": "once", "created_at": started.isoformat()}}
        }
    )

    with pytest.raises(ProviderError) as err:
        adapter.poll_segment(ctx, PublishedSegment("C1", pending=True))
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert err.value.retryable is False
    assert err.value.action == Action.VERIFY

    # It went out after all: the container reads PUBLISHED and the post is found by text.
    _status(fake, "C1", "PUBLISHED")
    listing = _published_listing(fake, "once", (started + timedelta(seconds=3)).isoformat())
    found = adapter.lookup_segment(ctx, SegmentPayload(0, "once"), not_before=started)

    assert found == PublishedSegment(
        provider_post_id="M7",
        provider_url="https://www.threads.net/p/7",
        published_at=started + timedelta(seconds=3),
    )
    assert _query(listing.calls.last.request)["fields"] == "id,text,timestamp,permalink"


def test_a_container_still_finished_after_an_unknown_is_not_published(fake):
    _status(fake, "C1", "FINISHED")
    ctx = _ctx(checkpoint={"containers": {"0": {"id": "C1", "text": "x", "created_at": None}}})

    found = ThreadsAdapter().lookup_segment(
        ctx, SegmentPayload(0, "x"), not_before=datetime.now(UTC)
    )

    # Nothing went out; the container can still be published by polling it.
    assert found == PublishedSegment(provider_post_id="C1", pending=True)


def test_lookup_without_a_container_matches_text_and_time(fake):
    now = datetime.now(UTC)
    _published_listing(fake, "same words", (now + timedelta(seconds=5)).isoformat())

    found = ThreadsAdapter().lookup_segment(
        _ctx(), SegmentPayload(0, "same   words"), not_before=now
    )
    assert found.provider_post_id == "M7"

    missing = ThreadsAdapter().lookup_segment(
        _ctx(), SegmentPayload(0, "other words"), not_before=now
    )
    assert missing is None


def test_an_expired_container_in_reconciliation_is_made_anew_once(fake):
    create = fake.post(f"{G}/{USER}/threads").respond(200, json={"id": "NEW"})
    _status(fake, "C1", "EXPIRED")
    ctx = _ctx(checkpoint={"containers": {"0": {"id": "C1", "text": "x", "created_at": None}}})

    found = ThreadsAdapter().lookup_segment(
        ctx, SegmentPayload(0, "x"), not_before=datetime.now(UTC)
    )

    # Never published: a new container stands in for it, still to be published.
    assert found == PublishedSegment(provider_post_id="NEW", pending=True)
    assert create.call_count == 1
    assert ctx.checkpoint["containers"]["0"]["renewed"] == 1


def test_a_rate_limit_waits_for_the_time_meta_names(fake):
    usage = (
        '{"1001": [{"type": "threads", "call_count": 100, "estimated_time_to_regain_access": 17}]}'
    )
    fake.post(f"{G}/{USER}/threads").mock(
        return_value=httpx.Response(
            400,
            headers={"X-Business-Use-Case-Usage": usage},
            json={
                "error": {
                    "message": "Application request limit reached",
                    "type": "OAuthException",
                    "code": 4,
                    "is_transient": True,
                    "fbtrace_id": "x",
                }
            },
        )
    )
    before = datetime.now(UTC)
    with pytest.raises(ProviderError) as err:
        ThreadsAdapter().publish_segment(_ctx(), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retryable is True
    assert err.value.code == "4"
    assert before + timedelta(minutes=17) <= err.value.retry_at <= before + timedelta(minutes=18)


@pytest.mark.parametrize(
    ("response", "kind", "retryable", "action"),
    [
        (
            _graph_error(190, "Error validating access token: Session has expired", 463, 401),
            ErrorKind.AUTH_EXPIRED,
            False,
            Action.RECONNECT,
        ),
        (
            _graph_error(100, "Param text must be at most 500 characters long."),
            ErrorKind.CONTENT_REJECTED,
            False,
            Action.EDIT,
        ),
        (
            _graph_error(10, "Application does not have permission for this action", 403),
            ErrorKind.PERMISSION_MISSING,
            False,
            Action.RECONNECT,
        ),
        (
            _graph_error(1, "An unknown error occurred", status=500),
            ErrorKind.PROVIDER_UNAVAILABLE,
            True,
            Action.WAIT,
        ),
        (
            _graph_error(100, "The user is restricted", 4279013),
            ErrorKind.PERMISSION_MISSING,
            False,
            Action.RECONNECT,
        ),
    ],
)
def test_container_errors_are_classified(fake, response, kind, retryable, action):
    fake.post(f"{G}/{USER}/threads").mock(return_value=response)
    with pytest.raises(ProviderError) as err:
        ThreadsAdapter().publish_segment(_ctx(), SegmentPayload(0, "x"), reply_to=None)
    assert (err.value.kind, err.value.retryable, err.value.action) == (kind, retryable, action)
    assert err.value.http_status == response.status_code


def test_a_transient_error_on_publish_leaves_the_outcome_unknown(fake):
    _status(fake, "C1", "FINISHED")
    fake.post(f"{G}/{USER}/threads_publish").mock(
        return_value=_graph_error(2, "Service temporarily unavailable", status=500)
    )
    with pytest.raises(ProviderError) as err:
        ThreadsAdapter().poll_segment(_ctx(), PublishedSegment("C1", pending=True))
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert err.value.retryable is False


def test_quota_usage_reads_the_publishing_limit(fake):
    route = fake.get(f"{G}/{USER}/threads_publishing_limit").respond(
        200,
        json={
            "data": [
                {
                    "quota_usage": 4,
                    "config": {"quota_total": 250, "quota_duration": 86400},
                    "reply_quota_usage": 1,
                    "reply_config": {"quota_total": 1000, "quota_duration": 86400},
                }
            ]
        },
    )
    assert ThreadsAdapter().quota_usage(_ctx()) == {
        "used": 4,
        "total": 250,
        "window_s": 86400,
        "replies_used": 1,
        "replies_total": 1000,
    }
    assert (
        _query(route.calls.last.request)["fields"]
        == "quota_usage,config,reply_quota_usage,reply_config"
    )


def test_connect_exchanges_the_code_then_a_long_lived_token(fake):
    token = fake.post("https://graph.threads.net/oauth/access_token").respond(
        200, json={"access_token": "SHORT", "user_id": 1001}
    )
    exchange = fake.get("https://graph.threads.net/access_token").respond(
        200, json={"access_token": "LONG", "token_type": "bearer", "expires_in": 5183944}
    )
    me = fake.get(f"{G}/me").respond(200, json={"id": "1001", "username": "alice", "name": "Alice"})
    adapter = ThreadsAdapter()

    url = adapter.authorization_url(state="S", code_challenge="C", redirect_uri="https://app/cb")
    identity = adapter.complete_connect(
        code="CODE", code_verifier="V", redirect_uri="https://app/cb"
    )

    assert url.startswith("https://threads.net/oauth/authorize?")
    assert _query(httpx.Request("GET", url)) == {
        "client_id": "threads-app",
        "redirect_uri": "https://app/cb",
        "scope": "threads_basic,threads_content_publish,threads_manage_replies,threads_delete",
        "response_type": "code",
        "state": "S",
    }
    assert _form(token.calls.last.request) == {
        "client_id": "threads-app",
        "client_secret": "threads-secret",
        "code": "CODE",
        "grant_type": "authorization_code",
        "redirect_uri": "https://app/cb",
    }
    assert _query(exchange.calls.last.request) == {
        "grant_type": "th_exchange_token",
        "client_secret": "threads-secret",
        "access_token": "SHORT",
    }
    assert me.calls.last.request.headers["Authorization"] == "Bearer LONG"
    assert (identity.remote_id, identity.handle, identity.display_name) == (
        "1001",
        "alice",
        "Alice",
    )
    assert identity.credentials["access_token"] == "LONG"
    assert identity.token_expires_at - datetime.now(UTC) > timedelta(days=59)


def test_threads_app_falls_back_to_the_meta_app(settings):
    settings.THREADS_APP_ID = ""
    url = ThreadsAdapter().authorization_url(state="S", code_challenge="", redirect_uri="r")
    assert "client_id=meta-app" in url


def test_a_bad_code_asks_to_reconnect(fake):
    fake.post("https://graph.threads.net/oauth/access_token").mock(
        return_value=_graph_error(100, "Invalid verification code format.", 36007)
    )
    with pytest.raises(ProviderError) as err:
        ThreadsAdapter().complete_connect(code="BAD", code_verifier="", redirect_uri="r")
    assert err.value.kind == ErrorKind.AUTH_EXPIRED
    assert err.value.action == Action.RECONNECT


def test_a_token_is_refreshed_only_near_expiry(fake):
    refresh = fake.get("https://graph.threads.net/refresh_access_token").respond(
        200, json={"access_token": "NEWER", "token_type": "bearer", "expires_in": 5184000}
    )
    adapter = ThreadsAdapter()
    far = _ctx(expires_at=datetime.now(UTC) + timedelta(days=30))
    assert adapter.refresh_credentials(far.account, far.credentials) is None
    assert not refresh.called

    near = _ctx(expires_at=datetime.now(UTC) + timedelta(days=2))
    fresh = adapter.refresh_credentials(near.account, near.credentials)

    assert _query(refresh.calls.last.request) == {
        "grant_type": "th_refresh_token",
        "access_token": "LONG-TOKEN",
    }
    assert fresh["access_token"] == "NEWER"
    assert datetime.fromisoformat(fresh["expires_at"]) > datetime.now(UTC) + timedelta(days=59)


def test_an_expired_or_refused_token_asks_to_reconnect(fake):
    adapter = ThreadsAdapter()
    gone = _ctx(expires_at=datetime.now(UTC) - timedelta(minutes=1))
    with pytest.raises(ProviderError) as err:
        adapter.refresh_credentials(gone.account, gone.credentials)
    assert err.value.kind == ErrorKind.AUTH_EXPIRED

    fake.get("https://graph.threads.net/refresh_access_token").mock(
        return_value=_graph_error(190, "Error validating access token", 460, 400)
    )
    near = _ctx(expires_at=datetime.now(UTC) + timedelta(days=1))
    with pytest.raises(ProviderError) as err:
        adapter.refresh_credentials(near.account, near.credentials)
    assert err.value.kind == ErrorKind.AUTH_EXPIRED
    assert err.value.code == "190/460"


def test_tokens_in_exchange_urls_never_reach_the_logs(fake, caplog):
    fake.get("https://graph.threads.net/refresh_access_token").respond(
        200, json={"access_token": "NEWER", "token_type": "bearer", "expires_in": 5184000}
    )
    near = _ctx(expires_at=datetime.now(UTC) + timedelta(days=1))
    with caplog.at_level("INFO", logger="httpx"):
        ThreadsAdapter().refresh_credentials(near.account, near.credentials)
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "refresh_access_token" in logged
    assert "LONG-TOKEN" not in logged
    assert "access_token=[redacted]" in logged


def test_a_half_made_carousel_is_not_remembered(fake):
    fake.post(f"{G}/{USER}/threads").mock(
        side_effect=[
            httpx.Response(200, json={"id": "I1"}),
            _graph_error(2, "Service temporarily unavailable", status=503),
        ]
    )
    ctx = _ctx()
    with pytest.raises(ProviderError) as err:
        ThreadsAdapter().publish_segment(
            ctx, SegmentPayload(0, "two", [_image(), _image()]), reply_to=None
        )
    # Item containers are invisible: the next attempt simply makes the whole set again.
    assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE
    assert err.value.retryable is True
    assert "containers" not in ctx.checkpoint
