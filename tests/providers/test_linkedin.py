"""The LinkedIn adapter against a respx fake of the documented Posts API."""

import dataclasses
from datetime import UTC, datetime, time, timedelta

import httpx
import pytest

from apps.providers.base import PublishedSegment, ReplyTarget, SegmentPayload, SupportsLookup
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.linkedin.adapter import LinkedInAdapter
from apps.providers.linkedin.text import commentary
from tests.providers.social_helpers import body, form, go_offline, image, make_account, make_ctx

pytestmark = pytest.mark.django_db

API = "https://api.linkedin.com"
OAUTH = "https://www.linkedin.com/oauth/v2"
REDIRECT = "http://127.0.0.1:8000/connect/linkedin/callback/"
SHARE = "urn:li:share:7012345678901234567"


@pytest.fixture(autouse=True)
def waits(monkeypatch, settings):
    settings.LINKEDIN_CLIENT_ID = "li-client"
    settings.LINKEDIN_CLIENT_SECRET = "li-secret"
    settings.LINKEDIN_API_VERSION = "202609"
    return go_offline(monkeypatch)


@pytest.fixture
def account(workspace_a):
    return make_account(
        workspace_a,
        "linkedin",
        remote_id="abc123",
        handle="Alice Example",
        credentials={
            "access_token": "li-token",
            "expires_at": (datetime.now(UTC) + timedelta(days=50)).isoformat(),
        },
        settings={"author_urn": "urn:li:person:abc123"},
        token_expires_at=datetime.now(UTC) + timedelta(days=50),
    )


def test_it_publishes_text_as_the_member(respx_mock, account):
    create = respx_mock.post(f"{API}/rest/posts").respond(201, headers={"x-restli-id": SHARE})
    published = LinkedInAdapter().publish_segment(
        make_ctx(account), SegmentPayload(0, "Launch (beta) #news"), reply_to=None
    )
    request = create.calls.last.request
    assert request.headers["Authorization"] == "Bearer li-token"
    assert request.headers["LinkedIn-Version"] == "202609"
    assert request.headers["X-Restli-Protocol-Version"] == "2.0.0"
    assert body(request) == {
        "author": "urn:li:person:abc123",
        "commentary": "Launch \\(beta\\) {hashtag|\\#|news}",
        "visibility": "PUBLIC",
        "distribution": {
            "feedDistribution": "MAIN_FEED",
            "targetEntities": [],
            "thirdPartyDistributionChannels": [],
        },
        "lifecycleState": "PUBLISHED",
        "isReshareDisabledByAuthor": False,
    }
    assert published.provider_post_id == SHARE
    assert published.provider_url == f"https://www.linkedin.com/feed/update/{SHARE}"


def test_commentary_escapes_every_reserved_character():
    assert commentary(r"a\b|c{d}e@f[g]h(i)j<k>l*m_n~o #tag x#y") == (
        r"a\\b\|c\{d\}e\@f\[g\]h\(i\)j\<k\>l\*m\_n\~o {hashtag|\#|tag} x\#y"
    )


def test_an_organization_author_is_refused_without_the_organization_scope(respx_mock, account):
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_segment(
            make_ctx(account, settings={"author": "urn:li:organization:555"}),
            SegmentPayload(0, "from the page"),
            reply_to=None,
        )
    assert err.value.kind == ErrorKind.PERMISSION_MISSING
    assert err.value.code == "organization_scope_missing"
    assert not respx_mock.calls  # refused before anything was sent


def test_an_organization_author_and_connections_visibility(respx_mock, account):
    from apps.accounts import services as account_services

    credentials = account_services.social_account_credentials(account)
    credentials["scope"] = "openid,profile,w_member_social,w_organization_social"
    account_services.social_account_store_credentials(account=account, credentials=credentials)
    create = respx_mock.post(f"{API}/rest/posts").respond(201, headers={"x-restli-id": SHARE})
    adapter = LinkedInAdapter()
    adapter.publish_segment(
        make_ctx(account, settings={"author": "urn:li:organization:555"}),
        SegmentPayload(0, "from the page"),
        reply_to=None,
    )
    assert body(create.calls.last.request)["author"] == "urn:li:organization:555"
    adapter.publish_segment(
        make_ctx(account, settings={"visibility": "connections"}),
        SegmentPayload(0, "friends only"),
        reply_to=None,
    )
    assert body(create.calls.last.request)["visibility"] == "CONNECTIONS"
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(
            make_ctx(
                account,
                settings={"author": "urn:li:organization:555", "visibility": "CONNECTIONS"},
            ),
            SegmentPayload(0, "x"),
            reply_to=None,
        )
    assert err.value.code == "invalid_visibility"


def test_an_image_is_initialized_put_and_attached_with_alt_text(respx_mock, account):
    image_urn = "urn:li:image:C4E10AQF"
    upload_url = "https://www.linkedin.com/dms-uploads/C4E10AQF/uploaded-image/0"
    init = respx_mock.post(f"{API}/rest/images", params={"action": "initializeUpload"}).respond(
        200,
        json={
            "value": {
                "uploadUrlExpiresAt": 1796220000000,
                "uploadUrl": upload_url,
                "image": image_urn,
            }
        },
    )
    put = respx_mock.put(upload_url).respond(201)
    status = respx_mock.get(f"{API}/rest/images/urn%3Ali%3Aimage%3AC4E10AQF").mock(
        side_effect=[
            httpx.Response(200, json={"id": image_urn, "status": "PROCESSING"}),
            httpx.Response(200, json={"id": image_urn, "status": "AVAILABLE"}),
        ]
    )
    create = respx_mock.post(f"{API}/rest/posts").respond(201, headers={"x-restli-id": SHARE})
    LinkedInAdapter().publish_segment(
        make_ctx(account), SegmentPayload(0, "pic", [image()]), reply_to=None
    )
    assert body(init.calls.last.request) == {
        "initializeUploadRequest": {"owner": "urn:li:person:abc123"}
    }
    assert put.calls.last.request.content == b"\x89PNG fake"
    assert status.call_count == 2
    assert body(create.calls.last.request)["content"] == {
        "media": {"id": image_urn, "altText": "A red square"}
    }


def test_several_images_become_a_multi_image_post(respx_mock, account):
    urns = iter(["urn:li:image:A", "urn:li:image:B"])
    respx_mock.post(f"{API}/rest/images").mock(
        side_effect=lambda request: httpx.Response(
            200, json={"value": {"uploadUrl": "https://up.example/x", "image": next(urns)}}
        )
    )
    respx_mock.put("https://up.example/x").respond(201)
    # A member token may not read image status: LinkedIn answers 403 and the post goes ahead.
    respx_mock.get(url__startswith=f"{API}/rest/images/").respond(403, json={"status": 403})
    create = respx_mock.post(f"{API}/rest/posts").respond(201, headers={"x-restli-id": SHARE})
    LinkedInAdapter().publish_segment(
        make_ctx(account),
        SegmentPayload(0, "two", [image(1, "first"), image(2, "second")]),
        reply_to=None,
    )
    assert body(create.calls.last.request)["content"] == {
        "multiImage": {
            "images": [
                {"id": "urn:li:image:A", "altText": "first"},
                {"id": "urn:li:image:B", "altText": "second"},
            ]
        }
    }


def test_linkedin_has_no_threads(account):
    root = PublishedSegment(SHARE)
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_segment(
            make_ctx(account), SegmentPayload(1, "2/2"), reply_to=ReplyTarget(root, root)
        )
    assert err.value.code == "threads_unsupported"


@pytest.mark.parametrize(
    ("status", "payload", "kind", "code", "action"),
    [
        (
            401,
            {"serviceErrorCode": 65600, "message": "Invalid access token", "status": 401},
            ErrorKind.AUTH_EXPIRED,
            "65600",
            Action.RECONNECT,
        ),
        (
            401,
            {"serviceErrorCode": 65601, "code": "REVOKED_ACCESS_TOKEN", "message": "revoked"},
            ErrorKind.AUTH_EXPIRED,
            "REVOKED_ACCESS_TOKEN",
            Action.RECONNECT,
        ),
        (
            403,
            {
                "serviceErrorCode": 100,
                "code": "ACCESS_DENIED",
                "message": "Not enough permissions to access: partnerApiPostsExternal.CREATE",
            },
            ErrorKind.PERMISSION_MISSING,
            "ACCESS_DENIED",
            Action.RECONNECT,
        ),
        (
            422,
            {"message": "ERROR :: /commentary :: length 3001 exceeds 3000", "status": 422},
            ErrorKind.CONTENT_REJECTED,
            "http_422",
            Action.EDIT,
        ),
        (
            400,
            {"code": "ILLEGAL_ARGUMENT", "message": "Invalid author", "status": 400},
            ErrorKind.CONTENT_REJECTED,
            "ILLEGAL_ARGUMENT",
            Action.EDIT,
        ),
        (
            500,
            {"message": "Unable to obtain activity", "status": 500},
            ErrorKind.OUTCOME_UNKNOWN,
            "http_500",
            Action.VERIFY,
        ),
        (504, {}, ErrorKind.OUTCOME_UNKNOWN, "http_504", Action.VERIFY),
    ],
)
def test_documented_errors_are_classified(respx_mock, account, status, payload, kind, code, action):
    respx_mock.post(f"{API}/rest/posts").respond(status, json=payload)
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == kind
    assert err.value.code == code
    assert err.value.http_status == status
    assert err.value.action == action
    assert err.value.retryable is False


DUPLICATE = {
    "errorDetailType": "com.linkedin.common.error.BadRequest",
    "message": f"ERROR :: /commentary :: Content is a duplicate of {SHARE}",
    "errorDetails": {
        "inputErrors": [{"description": "Duplicate post is detected", "code": "DUPLICATE_POST"}]
    },
    "status": 422,
}


def test_a_duplicate_post_names_the_existing_urn_once_read_back_as_ours(respx_mock, account):
    respx_mock.post(f"{API}/rest/posts").respond(422, json=DUPLICATE)
    read = respx_mock.get(f"{API}/rest/posts/urn%3Ali%3Ashare%3A7012345678901234567").respond(
        200, json={"id": SHARE, "author": "urn:li:person:abc123", "commentary": "x"}
    )
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert read.called
    assert err.value.kind == ErrorKind.DUPLICATE_CONTENT
    assert err.value.code == "DUPLICATE_POST"
    assert err.value.existing_post_id == SHARE
    assert err.value.as_dict()["existing_post_id"] == SHARE


def _dated_share(at: datetime) -> str:
    """A post id dated as LinkedIn's are: creation milliseconds above the lowest 22 bits."""
    return f"urn:li:share:{(int(at.timestamp() * 1000) << 22) | 12345}"


@pytest.mark.parametrize(
    ("made", "settles"),
    [(timedelta(seconds=1), True), (timedelta(hours=-3), False), (timedelta(hours=2), False)],
)
@pytest.mark.parametrize("read", [403, 429])
def test_a_post_that_cannot_be_read_settles_only_if_its_id_dates_it_to_our_request(
    respx_mock, account, settings, made, settles, read
):
    settings.RECONCILE_SETTLE_S = 300
    sent = datetime(2026, 12, 7, 1, 0, tzinfo=UTC)
    named = _dated_share(sent + made)
    refusal = {**DUPLICATE, "message": f"Content is a duplicate of {named}"}
    respx_mock.post(f"{API}/rest/posts").respond(422, json=refusal)
    # A member token may not read it (403), or the read is throttled (429).
    respx_mock.get(url__startswith=f"{API}/rest/posts/").respond(
        read, json={"message": "Not enough permissions, or throttled"}
    )
    ctx = dataclasses.replace(make_ctx(account), unanswered_sent_at=lambda position: [sent])
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_segment(ctx, SegmentPayload(0, "x"), reply_to=None)
    # Made while our unanswered request could land: that request's post. Made long before
    # (a deleted post's id, an older post with this text) or long after: not taken (a
    # throttled read is tried again).
    assert err.value.existing_post_id == (named if settles else None)
    if settles:
        assert err.value.kind == ErrorKind.DUPLICATE_CONTENT
    else:
        unsettled = "DUPLICATE_POST_UNCONFIRMED" if read == 403 else "DUPLICATE_POST_UNREAD"
        assert err.value.code == unsettled


@pytest.mark.parametrize(
    ("status", "kind"),
    [(429, ErrorKind.RATE_LIMITED), (503, ErrorKind.PROVIDER_UNAVAILABLE)],
)
def test_a_duplicate_whose_post_cannot_be_read_for_now_settles_nothing_and_is_retried(
    respx_mock, account, status, kind
):
    respx_mock.post(f"{API}/rest/posts").respond(422, json=DUPLICATE)
    respx_mock.get(f"{API}/rest/posts/urn%3Ali%3Ashare%3A7012345678901234567").respond(
        status, json={"message": "Resource level throttle limit"}
    )
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    # Neither a duplicate to settle on nor one for a person: the read is tried again.
    assert err.value.kind == kind and err.value.retryable
    assert err.value.code == "DUPLICATE_POST_UNREAD" and err.value.existing_post_id is None
    assert (err.value.retry_at is not None) == (status == 429)


@pytest.mark.parametrize(
    ("status", "found", "why"),
    [
        (404, {}, "does not exist"),
        (403, {}, "may not read"),
        (200, {"author": "urn:li:person:someone", "commentary": "x"}, "another author"),
        (200, {"author": "urn:li:person:abc123", "commentary": "other"}, "other text"),
    ],
)
def test_a_duplicate_naming_a_post_that_is_not_ours_names_nothing(
    respx_mock, account, status, found, why
):
    respx_mock.post(f"{API}/rest/posts").respond(422, json=DUPLICATE)
    respx_mock.get(f"{API}/rest/posts/urn%3Ali%3Ashare%3A7012345678901234567").respond(
        status, json=found
    )
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.DUPLICATE_CONTENT
    assert err.value.existing_post_id is None
    assert err.value.code == "DUPLICATE_POST_UNCONFIRMED" and why in err.value.message
    assert err.value.action == Action.VERIFY


def test_a_duplicate_refusal_of_empty_commentary_names_nothing_and_reads_nothing(
    respx_mock, account
):
    respx_mock.post(f"{API}/rest/posts").respond(422, json=DUPLICATE)
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_segment(make_ctx(account), SegmentPayload(0, ""), reply_to=None)
    assert err.value.existing_post_id is None
    assert LinkedInAdapter().duplicate_refusal_covers(SegmentPayload(0, "  ")) is False
    assert LinkedInAdapter().duplicate_refusal_covers(SegmentPayload(0, "x")) is True


def test_a_throttle_without_headers_waits_for_the_utc_day(respx_mock, account):
    respx_mock.post(f"{API}/rest/posts").respond(
        429, json={"message": "Resource level throttle limit for calls to this resource is reached"}
    )
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    tomorrow = datetime.combine(datetime.now(UTC).date() + timedelta(days=1), time.min, UTC)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retryable is True
    assert err.value.retry_at == tomorrow


def test_an_unknown_outcome_is_a_single_attempt_without_lookup(respx_mock, account):
    route = respx_mock.post(f"{API}/rest/posts").mock(side_effect=httpx.ReadTimeout("lost"))
    adapter = LinkedInAdapter()
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(make_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert route.call_count == 1
    assert adapter.is_retry_safe(account) is False
    assert not isinstance(adapter, SupportsLookup)


def test_refresh_uses_the_refresh_token_when_the_app_has_one(respx_mock, account):
    adapter = LinkedInAdapter()
    credentials = {
        "access_token": "old",
        "refresh_token": "li-refresh",
        "expires_at": (datetime.now(UTC) + timedelta(days=60)).isoformat(),
    }
    assert adapter.refresh_credentials(account, credentials) is None
    credentials["expires_at"] = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    token = respx_mock.post(f"{OAUTH}/accessToken").respond(
        200,
        json={
            "access_token": "new",
            "expires_in": 5184000,
            "refresh_token": "li-refresh",
            "refresh_token_expires_in": 20000000,
        },
    )
    fresh = adapter.refresh_credentials(account, credentials)
    assert form(token.calls.last.request) == {
        "grant_type": "refresh_token",
        "refresh_token": "li-refresh",
        "client_id": "li-client",
        "client_secret": "li-secret",
    }
    assert fresh["access_token"] == "new"
    assert fresh["refresh_token"] == "li-refresh"
    assert datetime.fromisoformat(fresh["expires_at"]) > datetime.now(UTC) + timedelta(days=59)


def test_a_revoked_refresh_token_asks_to_reconnect(respx_mock, account):
    respx_mock.post(f"{OAUTH}/accessToken").respond(
        400,
        json={
            "error": "invalid_request",
            "error_description": "The provided authorization grant or refresh token is "
            "invalid, expired or revoked",
        },
    )
    credentials = {
        "access_token": "old",
        "refresh_token": "dead",
        "expires_at": datetime.now(UTC).isoformat(),
    }
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().refresh_credentials(account, credentials)
    assert err.value.kind == ErrorKind.AUTH_EXPIRED


def test_without_a_refresh_token_an_expired_token_asks_to_reconnect(account):
    adapter = LinkedInAdapter()
    soon = {"access_token": "t", "expires_at": (datetime.now(UTC) + timedelta(days=1)).isoformat()}
    assert adapter.refresh_credentials(account, soon) is None  # still usable
    gone = {"access_token": "t", "expires_at": (datetime.now(UTC) - timedelta(1)).isoformat()}
    with pytest.raises(ProviderError) as err:
        adapter.refresh_credentials(account, gone)
    assert err.value.kind == ErrorKind.AUTH_EXPIRED


def test_connect_builds_the_authorization_url_and_exchanges_the_code(respx_mock):
    adapter = LinkedInAdapter()
    url = httpx.URL(
        adapter.authorization_url(state="st", code_challenge="unused", redirect_uri=REDIRECT)
    )
    assert str(url.copy_with(query=None)) == f"{OAUTH}/authorization"
    assert dict(url.params) == {
        "response_type": "code",
        "client_id": "li-client",
        "redirect_uri": REDIRECT,
        "state": "st",
        "scope": "openid profile w_member_social",
    }
    token = respx_mock.post(f"{OAUTH}/accessToken").respond(
        200, json={"access_token": "li-new", "expires_in": 5184000, "scope": "w_member_social"}
    )
    userinfo = respx_mock.get(f"{API}/v2/userinfo").respond(
        200, json={"sub": "abc123", "name": "Alice Example", "given_name": "Alice"}
    )
    identity = adapter.complete_connect(code="c0de", code_verifier="v", redirect_uri=REDIRECT)
    assert form(token.calls.last.request) == {
        "grant_type": "authorization_code",
        "code": "c0de",
        "redirect_uri": REDIRECT,
        "client_id": "li-client",
        "client_secret": "li-secret",
    }
    assert userinfo.calls.last.request.headers["Authorization"] == "Bearer li-new"
    assert identity.remote_id == "abc123"
    assert identity.display_name == "Alice Example"
    assert identity.settings == {"author_urn": "urn:li:person:abc123"}
    assert identity.credentials["access_token"] == "li-new"
    assert identity.credentials["scope"] == "w_member_social"  # kept: it gates page posts
    assert identity.token_expires_at > datetime.now(UTC) + timedelta(days=59)


def test_connect_needs_the_app_configured(settings):
    from apps.common.errors import ValidationFailed

    settings.LINKEDIN_CLIENT_ID = ""
    with pytest.raises(ValidationFailed) as err:
        LinkedInAdapter().authorization_url(state="s", code_challenge="c", redirect_uri=REDIRECT)
    assert err.value.code == "NOT_CONFIGURED"


def test_an_image_linkedin_cannot_process_is_rejected(respx_mock, account):
    respx_mock.post(f"{API}/rest/images").respond(
        200, json={"value": {"uploadUrl": "https://up.example/y", "image": "urn:li:image:Z"}}
    )
    respx_mock.put("https://up.example/y").respond(201)
    respx_mock.get(f"{API}/rest/images/urn%3Ali%3Aimage%3AZ").respond(
        200, json={"status": "PROCESSING_FAILED", "processingFailureReason": "bad file"}
    )
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_segment(
            make_ctx(account), SegmentPayload(0, "x", [image()]), reply_to=None
        )
    assert err.value.kind == ErrorKind.CONTENT_REJECTED
    assert err.value.code == "PROCESSING_FAILED"
