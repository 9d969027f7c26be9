"""The Mastodon adapter against a respx fake of the documented API."""

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from apps.common import outbound
from apps.common.errors import ValidationFailed
from apps.providers.base import PublishedSegment, ReplyTarget, SegmentPayload, get_adapter
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.mastodon.adapter import MastodonAdapter
from apps.providers.mastodon.models import MastodonApp
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

INSTANCE = "https://mastodon.example"
REDIRECT = "http://127.0.0.1:8000/connect/mastodon/callback/"


@pytest.fixture(autouse=True)
def waits(monkeypatch):
    return go_offline(monkeypatch)


@pytest.fixture
def account(workspace_a):
    return make_account(
        workspace_a,
        "mastodon",
        remote_id="1090@mastodon.example",
        handle="alice@mastodon.example",
        credentials={"access_token": "tok-1"},
        settings={"instance": INSTANCE, "account_id": "1090"},
    )


def _status(status_id="111", text="<p>hello</p>", created="2026-12-02T10:00:00.000Z"):
    return {
        "id": status_id,
        "url": f"{INSTANCE}/@alice/{status_id}",
        "uri": f"{INSTANCE}/users/alice/statuses/{status_id}",
        "created_at": created,
        "content": text,
    }


def test_it_is_registered_and_declares_its_idempotency_window():
    adapter = get_adapter("mastodon")
    assert isinstance(adapter, MastodonAdapter)
    assert adapter.retry_safe_after_unknown is True
    assert adapter.idempotency_window == timedelta(hours=1)


def test_it_publishes_text_with_the_idempotency_key_and_settings(respx_mock, account):
    route = respx_mock.post(f"{INSTANCE}/api/v1/statuses").respond(200, json=_status())
    ctx = make_ctx(
        account,
        settings={"visibility": "unlisted", "spoiler_text": "spoilers", "language": "pl"},
    )
    published = MastodonAdapter().publish_segment(ctx, SegmentPayload(0, "hello"), reply_to=None)

    request = route.calls.last.request
    assert request.headers["Authorization"] == "Bearer tok-1"
    assert request.headers["Idempotency-Key"] == "r7-s0"
    assert body(request) == {
        "status": "hello",
        "visibility": "unlisted",
        "spoiler_text": "spoilers",
        "sensitive": True,
        "language": "pl",
    }
    assert published.provider_post_id == "111"
    assert published.provider_url == f"{INSTANCE}/@alice/111"
    assert published.published_at == datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


def test_a_retry_sends_the_same_key_so_the_server_returns_the_first_status(respx_mock, account):
    # The instance honours the key: a repeat returns the original status.
    route = respx_mock.post(f"{INSTANCE}/api/v1/statuses").mock(
        side_effect=[httpx.ReadTimeout("lost"), httpx.Response(200, json=_status("222"))]
    )
    adapter = MastodonAdapter()
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(make_ctx(account), SegmentPayload(1, "again"), reply_to=None)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert adapter.is_retry_safe(account) is True
    again = adapter.publish_segment(make_ctx(account), SegmentPayload(1, "again"), reply_to=None)
    keys = [call.request.headers["Idempotency-Key"] for call in route.calls]
    assert keys == ["r7-s1", "r7-s1"]
    assert again.provider_post_id == "222"


def test_an_instance_that_ignores_the_key_is_not_retry_safe(workspace_a):
    account = make_account(
        workspace_a,
        "mastodon",
        remote_id="9@pleroma.example",
        handle="bob@pleroma.example",
        credentials={"access_token": "t"},
        settings={"instance": "https://pleroma.example", "honours_idempotency_key": False},
    )
    assert MastodonAdapter().is_retry_safe(account) is False


def test_media_is_uploaded_with_alt_text_and_waited_for(respx_mock, account, waits):
    upload = respx_mock.post(f"{INSTANCE}/api/v2/media").respond(
        202, json={"id": "m1", "type": "image", "url": None}
    )
    poll = respx_mock.get(f"{INSTANCE}/api/v1/media/m1").mock(
        side_effect=[httpx.Response(206, json={"id": "m1"}), httpx.Response(200, json={"id": "m1"})]
    )
    create = respx_mock.post(f"{INSTANCE}/api/v1/statuses").respond(200, json=_status())
    MastodonAdapter().publish_segment(
        make_ctx(account), SegmentPayload(0, "pic", [image()]), reply_to=None
    )
    request = upload.calls.last.request
    assert multipart_field(request, "description") == b"A red square"
    assert multipart_field(request, "file") == b"\x89PNG fake"
    assert poll.call_count == 2
    assert waits == [1.0, 2.0]  # 1 s, doubling
    assert body(create.calls.last.request)["media_ids"] == ["m1"]


def test_small_images_processed_at_once_are_not_polled(respx_mock, account):
    respx_mock.post(f"{INSTANCE}/api/v2/media").respond(200, json={"id": "m2", "url": "x"})
    create = respx_mock.post(f"{INSTANCE}/api/v1/statuses").respond(200, json=_status())
    MastodonAdapter().publish_segment(
        make_ctx(account), SegmentPayload(0, "pic", [image()]), reply_to=None
    )
    assert body(create.calls.last.request)["media_ids"] == ["m2"]


def test_media_still_processing_after_the_budget_resumes_on_the_same_upload(respx_mock, account):
    upload = respx_mock.post(f"{INSTANCE}/api/v2/media").respond(202, json={"id": "m3"})
    poll = respx_mock.get(f"{INSTANCE}/api/v1/media/m3").respond(206, json={"id": "m3"})
    ctx = make_ctx(account)
    with pytest.raises(ProviderError) as err:
        MastodonAdapter().publish_segment(ctx, SegmentPayload(0, "vid", [image()]), reply_to=None)
    assert err.value.kind == ErrorKind.MEDIA_PROCESSING
    assert err.value.retryable is True
    assert ctx.checkpoint == {"mastodon_media_s0": {"1": "m3"}}

    poll.respond(200, json={"id": "m3"})
    respx_mock.post(f"{INSTANCE}/api/v1/statuses").respond(200, json=_status())
    MastodonAdapter().publish_segment(ctx, SegmentPayload(0, "vid", [image()]), reply_to=None)
    assert upload.call_count == 1  # resumed, not uploaded again


def test_media_that_fails_processing_is_rejected(respx_mock, account):
    respx_mock.post(f"{INSTANCE}/api/v2/media").respond(202, json={"id": "m4"})
    respx_mock.get(f"{INSTANCE}/api/v1/media/m4").respond(422, json={"error": "Failed"})
    with pytest.raises(ProviderError) as err:
        MastodonAdapter().publish_segment(
            make_ctx(account), SegmentPayload(0, "x", [image()]), reply_to=None
        )
    assert err.value.kind == ErrorKind.CONTENT_REJECTED
    assert err.value.code == "media_processing_failed"


def test_a_thread_replies_to_the_previous_status(respx_mock, account):
    create = respx_mock.post(f"{INSTANCE}/api/v1/statuses").respond(200, json=_status("302"))
    root = PublishedSegment("300")
    parent = PublishedSegment("301")
    MastodonAdapter().publish_segment(
        make_ctx(account), SegmentPayload(2, "3/3"), reply_to=ReplyTarget(root=root, parent=parent)
    )
    request = create.calls.last.request
    assert body(request)["in_reply_to_id"] == "301"
    assert request.headers["Idempotency-Key"] == "r7-s2"


@pytest.mark.parametrize(
    ("status", "error", "kind", "code", "action"),
    [
        (401, "The access token is invalid", ErrorKind.AUTH_EXPIRED, "invalid_token", "reconnect"),
        (
            403,
            "This action is outside the authorized scopes",
            ErrorKind.PERMISSION_MISSING,
            "forbidden",
            "reconnect",
        ),
        (
            403,
            "Your login is currently disabled",
            ErrorKind.PERMISSION_MISSING,
            "account_disabled",
            "contact_support",
        ),
        (
            422,
            "Validation failed: Text character limit of 500 exceeded",
            ErrorKind.CONTENT_REJECTED,
            "validation_failed",
            "edit",
        ),
        (
            422,
            "Validation failed: Text can't be blank",
            ErrorKind.CONTENT_REJECTED,
            "validation_failed",
            "edit",
        ),
        (
            422,
            "Cannot attach files that have not finished processing. Try again in a moment!",
            ErrorKind.MEDIA_PROCESSING,
            "media_not_ready",
            "wait",
        ),
        (500, "Internal server error", ErrorKind.OUTCOME_UNKNOWN, "server_error", "verify"),
        (503, "Service unavailable", ErrorKind.OUTCOME_UNKNOWN, "server_error", "verify"),
    ],
)
def test_documented_errors_are_classified(respx_mock, account, status, error, kind, code, action):
    respx_mock.post(f"{INSTANCE}/api/v1/statuses").respond(status, json={"error": error})
    with pytest.raises(ProviderError) as err:
        MastodonAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == kind
    assert err.value.code == code
    assert err.value.http_status == status
    assert err.value.action == Action(action)
    assert err.value.retryable is (kind == ErrorKind.MEDIA_PROCESSING)
    assert err.value.message == error


def test_rate_limit_honours_the_iso_reset_header(respx_mock, account):
    respx_mock.post(f"{INSTANCE}/api/v1/statuses").respond(
        429,
        json={"error": "Too many requests"},
        headers={
            "X-RateLimit-Limit": "300",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": "2026-12-02T15:30:00.123Z",
        },
    )
    with pytest.raises(ProviderError) as err:
        MastodonAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retryable is True
    assert err.value.retry_at == datetime(2026, 12, 2, 15, 30, 0, 123000, tzinfo=UTC)


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (httpx.ConnectError("refused"), ErrorKind.NETWORK_BEFORE_SEND),
        (httpx.ReadTimeout("slow"), ErrorKind.OUTCOME_UNKNOWN),
    ],
)
def test_transport_failures_are_before_send_or_unknown(respx_mock, account, exc, kind):
    respx_mock.post(f"{INSTANCE}/api/v1/statuses").mock(side_effect=exc)
    with pytest.raises(ProviderError) as err:
        MastodonAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == kind


def test_lookup_finds_our_status_by_text_after_not_before(respx_mock, account):
    route = respx_mock.get(f"{INSTANCE}/api/v1/accounts/1090/statuses").respond(
        200,
        json=[
            _status("5", "<p>something else</p>", "2026-12-02T10:05:00Z"),
            _status(
                "4",
                '<p>Hi <span class="h-card"><a href="https://b.example/@bob" class="u-url '
                'mention">@<span>bob</span></a></span> &amp; <a href="https://example.com/a">'
                '<span class="invisible">https://</span><span class="">example.com/a</span>'
                "</a></p><p>line two</p>",
                "2026-12-02T10:01:00Z",
            ),
        ],
    )
    found = MastodonAdapter().lookup_segment(
        make_ctx(account),
        SegmentPayload(0, "Hi @bob@b.example & https://example.com/a\n\nline two"),
        not_before=datetime(2026, 12, 2, 10, 0, tzinfo=UTC),
    )
    assert found.provider_post_id == "4"
    params = route.calls.last.request.url.params
    assert params["limit"] == "40"
    assert params["exclude_reblogs"] == "true"


def test_lookup_ignores_older_statuses_and_reports_absence(respx_mock, account):
    respx_mock.get(f"{INSTANCE}/api/v1/accounts/1090/statuses").respond(
        200, json=[_status("3", "<p>hello</p>", "2026-12-01T09:00:00Z")]
    )
    found = MastodonAdapter().lookup_segment(
        make_ctx(account),
        SegmentPayload(0, "hello"),
        not_before=datetime(2026, 12, 2, 10, 0, tzinfo=UTC),
    )
    assert found is None


def test_tokens_do_not_expire_so_there_is_nothing_to_refresh(account):
    assert MastodonAdapter().refresh_credentials(account, {"access_token": "tok-1"}) is None


def test_authorization_registers_the_app_once_per_instance(respx_mock):
    apps = respx_mock.post(f"{INSTANCE}/api/v1/apps").respond(
        200,
        json={"client_id": "cid", "client_secret": "csecret", "client_secret_expires_at": 0},
    )
    adapter = MastodonAdapter()
    url = adapter.authorization_url(
        state="st", code_challenge="ch", redirect_uri=REDIRECT, instance="Mastodon.Example/"
    )
    adapter.authorization_url(
        state="st2", code_challenge="ch", redirect_uri=REDIRECT, instance="@me@mastodon.example"
    )
    assert apps.call_count == 1
    assert form(apps.calls.last.request) == {
        "client_name": "Socialpost",
        "redirect_uris": REDIRECT,
        "scopes": "read:accounts read:statuses write:statuses write:media",
        "website": "http://127.0.0.1:8000",
    }
    parsed = httpx.URL(url)
    assert str(parsed.copy_with(query=None)) == f"{INSTANCE}/oauth/authorize"
    assert dict(parsed.params) == {
        "response_type": "code",
        "client_id": "cid",
        "redirect_uri": REDIRECT,
        "scope": "read:accounts read:statuses write:statuses write:media",
        "state": "st",
        "code_challenge": "ch",
        "code_challenge_method": "S256",
    }
    app = MastodonApp.objects.get(instance_url=INSTANCE)
    assert b"csecret" not in bytes(app.client_secret_ciphertext)
    assert app.client_secret == "csecret"


def test_complete_connect_exchanges_the_code_and_reads_the_profile(respx_mock):
    app = MastodonApp(instance_url=INSTANCE, client_id="cid", redirect_uri=REDIRECT, scopes="s")
    app.set_client_secret("csecret")
    app.save()
    token = respx_mock.post(f"{INSTANCE}/oauth/token").respond(
        200, json={"access_token": "new-token", "token_type": "Bearer", "scope": "read"}
    )
    respx_mock.get(f"{INSTANCE}/api/v1/accounts/verify_credentials").respond(
        200, json={"id": "1090", "username": "alice", "acct": "alice", "display_name": "Alice"}
    )
    respx_mock.get(f"{INSTANCE}/api/v2/instance").respond(
        200,
        json={"version": "4.3.2", "configuration": {"statuses": {"max_characters": 1000}}},
    )
    identity = MastodonAdapter().complete_connect(
        code="the-code", code_verifier="verifier", redirect_uri=REDIRECT, instance=INSTANCE
    )
    assert form(token.calls.last.request) == {
        "grant_type": "authorization_code",
        "code": "the-code",
        "client_id": "cid",
        "client_secret": "csecret",
        "redirect_uri": REDIRECT,
        "code_verifier": "verifier",
        "scope": "read:accounts read:statuses write:statuses write:media",
    }
    assert identity.remote_id == "1090@mastodon.example"
    assert identity.handle == "alice@mastodon.example"
    assert identity.display_name == "Alice"
    assert identity.credentials == {"access_token": "new-token"}
    assert identity.token_expires_at is None
    assert identity.settings == {
        "instance": INSTANCE,
        "account_id": "1090",
        "server_version": "4.3.2",
        "honours_idempotency_key": True,
        "max_characters": 1000,
    }


def test_a_refused_code_asks_to_reconnect(respx_mock):
    app = MastodonApp(instance_url=INSTANCE, client_id="cid", redirect_uri=REDIRECT, scopes="s")
    app.set_client_secret("csecret")
    app.save()
    respx_mock.post(f"{INSTANCE}/oauth/token").respond(
        400,
        json={"error": "invalid_grant", "error_description": "The provided grant is invalid"},
    )
    with pytest.raises(ProviderError) as err:
        MastodonAdapter().complete_connect(
            code="old", code_verifier="v", redirect_uri=REDIRECT, instance=INSTANCE
        )
    assert err.value.kind == ErrorKind.AUTH_EXPIRED
    assert err.value.code == "invalid_grant"


@pytest.mark.parametrize("instance", ["", "not a host", "http://", "localhost"])
def test_an_invalid_instance_is_refused(instance):
    with pytest.raises(ValidationFailed) as err:
        MastodonAdapter().authorization_url(
            state="s", code_challenge="c", redirect_uri=REDIRECT, instance=instance
        )
    assert err.value.code == "INVALID_INSTANCE"


def test_an_instance_on_a_private_address_is_refused(monkeypatch):
    monkeypatch.setattr(outbound, "resolve", lambda host, port: ["10.0.0.5"])
    with pytest.raises(ValidationFailed) as err:
        MastodonAdapter().authorization_url(
            state="s", code_challenge="c", redirect_uri=REDIRECT, instance="evil.example"
        )
    assert "private" in err.value.message


def test_the_admin_lists_apps_without_their_secret(admin_client):
    from django.urls import reverse

    app = MastodonApp(instance_url=INSTANCE, client_id="cid", redirect_uri=REDIRECT, scopes="s")
    app.set_client_secret("very-secret-value")
    app.save()
    url = reverse("admin:providers_mastodonapp_changelist")
    assert admin_client.get(url, {"q": "mastodon"}).status_code == 200
    page = admin_client.get(reverse("admin:providers_mastodonapp_change", args=[app.pk]))
    assert page.status_code == 200
    assert b"very-secret-value" not in page.content


def test_lookup_pages_back_until_statuses_are_older_than_the_attempt(respx_mock, account):
    newer = [_status(str(100 - i), "<p>noise</p>", "2026-12-02T11:00:00Z") for i in range(40)]
    route = respx_mock.get(f"{INSTANCE}/api/v1/accounts/1090/statuses").mock(
        side_effect=[
            httpx.Response(200, json=newer),
            httpx.Response(200, json=[_status("50", "<p>ours</p>", "2026-12-02T10:01:00Z")]),
        ]
    )
    found = MastodonAdapter().lookup_segment(
        make_ctx(account),
        SegmentPayload(0, "ours"),
        not_before=datetime(2026, 12, 2, 10, 0, tzinfo=UTC),
    )
    assert found.provider_post_id == "50"
    assert route.calls[1].request.url.params["max_id"] == "61"
