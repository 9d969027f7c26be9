"""The LinkedIn first comment against a respx fake of the documented Comments API
(socialActions/{post urn}/comments)."""

from datetime import UTC, datetime, time, timedelta
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest

from apps.accounts import services as account_services
from apps.providers.base import PublishedSegment, SupportsFirstComment
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.linkedin.adapter import LinkedInAdapter
from tests.providers.social_helpers import body, go_offline, make_account, make_ctx

pytestmark = pytest.mark.django_db

API = "https://api.linkedin.com"
SHARE = "urn:li:share:7012345678901234567"
COMMENTS = f"{API}/rest/socialActions/{quote(SHARE, safe='')}/comments"
POST = PublishedSegment(SHARE, f"https://www.linkedin.com/feed/update/{SHARE}")
COMMENT = "urn:li:comment:(urn:li:activity:7012345678901234000,7099)"
KEY = "rendition-7-comment"
ME = "urn:li:person:abc123"


@pytest.fixture(autouse=True)
def waits(monkeypatch, settings):
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
        settings={"author_urn": ME},
        token_expires_at=datetime.now(UTC) + timedelta(days=50),
    )


def _comment(actor=ME, text="Details in the thread", comment_id="7099", **extra):
    return {
        "actor": actor,
        "commentUrn": f"urn:li:comment:(urn:li:activity:7012345678901234000,{comment_id})",
        "created": {"actor": actor, "time": 1_772_355_600_000},
        "id": comment_id,
        "message": {"attributes": [], "text": text},
        "object": "urn:li:activity:7012345678901234000",
        **extra,
    }


def _query(request):
    return {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}


def test_the_adapter_takes_first_comments():
    adapter = LinkedInAdapter()
    assert isinstance(adapter, SupportsFirstComment)
    assert adapter.comment_lookup_is_strong is False


def test_the_comment_goes_under_the_post_as_the_member(respx_mock, account):
    create = respx_mock.post(COMMENTS).respond(
        201, json=_comment(), headers={"x-restli-id": "7099"}
    )
    published = LinkedInAdapter().publish_comment(
        make_ctx(account), POST, "Details in the thread (link) #news", key=KEY
    )
    request = create.calls.last.request
    assert request.url.raw_path.decode() == (
        "/rest/socialActions/urn%3Ali%3Ashare%3A7012345678901234567/comments"
    )
    assert request.headers["Authorization"] == "Bearer li-token"
    assert request.headers["LinkedIn-Version"] == "202609"
    assert request.headers["X-Restli-Protocol-Version"] == "2.0.0"
    assert body(request) == {
        "actor": ME,
        "object": SHARE,
        # Comment text is plain: no "little text" escaping as in a post's commentary.
        "message": {"text": "Details in the thread (link) #news"},
    }
    assert published.provider_post_id == COMMENT
    assert published.provider_url == (
        f"https://www.linkedin.com/feed/update/{SHARE}?commentUrn={quote(COMMENT, safe='')}"
    )
    assert published.published_at is not None


def test_an_organization_post_is_commented_on_as_the_organization(respx_mock, account):
    credentials = account_services.social_account_credentials(account)
    credentials["scope"] = "openid,profile,w_member_social,w_organization_social"
    account_services.social_account_store_credentials(account=account, credentials=credentials)
    create = respx_mock.post(COMMENTS).respond(201, json=_comment(actor="urn:li:organization:5"))
    LinkedInAdapter().publish_comment(
        make_ctx(account, settings={"author": "urn:li:organization:5"}), POST, "Hi", key=KEY
    )
    assert body(create.calls.last.request)["actor"] == "urn:li:organization:5"


def test_a_comment_named_only_by_its_id_gets_a_composed_urn(respx_mock, account):
    respx_mock.post(COMMENTS).respond(201, headers={"x-restli-id": "7100"})
    published = LinkedInAdapter().publish_comment(make_ctx(account), POST, "Hi", key=KEY)
    assert published.provider_post_id == f"urn:li:comment:({SHARE},7100)"


def test_a_comment_created_without_a_name_is_recorded_not_failed(respx_mock, account):
    respx_mock.post(COMMENTS).respond(201)
    published = LinkedInAdapter().publish_comment(make_ctx(account), POST, "Hi", key=KEY)
    assert published.provider_post_id == f"linkedin-unidentified:{KEY}"
    assert published.provider_url == ""


def test_a_post_linkedin_never_named_takes_no_comment(respx_mock, account):
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_comment(
            make_ctx(account), PublishedSegment("linkedin-unidentified:r7-s0"), "Hi", key=KEY
        )
    assert err.value.code == "post_unidentified"
    assert err.value.retryable is False
    assert not respx_mock.calls


@pytest.mark.parametrize(
    ("status", "payload", "kind", "code"),
    [
        (
            401,
            {"serviceErrorCode": 65601, "code": "REVOKED_ACCESS_TOKEN", "message": "revoked"},
            ErrorKind.AUTH_EXPIRED,
            "REVOKED_ACCESS_TOKEN",
        ),
        (
            403,
            {"serviceErrorCode": 100, "code": "ACCESS_DENIED", "message": "Not enough"},
            ErrorKind.PERMISSION_MISSING,
            "ACCESS_DENIED",
        ),
        (
            422,
            {"message": "ERROR :: /message/text :: too long", "status": 422},
            ErrorKind.CONTENT_REJECTED,
            "http_422",
        ),
        (500, {"message": "Internal error", "status": 500}, ErrorKind.OUTCOME_UNKNOWN, "http_500"),
    ],
)
def test_errors_on_the_comment_are_classified(respx_mock, account, status, payload, kind, code):
    respx_mock.post(COMMENTS).respond(status, json=payload)
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_comment(make_ctx(account), POST, "Hi", key=KEY)
    assert (err.value.kind, err.value.code, err.value.http_status) == (kind, code, status)


def test_a_throttled_comment_waits_for_the_utc_day(respx_mock, account):
    respx_mock.post(COMMENTS).respond(429, json={"message": "throttled"})
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_comment(make_ctx(account), POST, "Hi", key=KEY)
    tomorrow = datetime.combine(datetime.now(UTC).date() + timedelta(days=1), time.min, UTC)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retry_at == tomorrow


def test_a_comment_without_an_answer_is_an_unknown_outcome(respx_mock, account):
    route = respx_mock.post(COMMENTS).mock(side_effect=httpx.ReadTimeout("lost"))
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().publish_comment(make_ctx(account), POST, "Hi", key=KEY)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert err.value.action == Action.VERIFY
    assert route.call_count == 1


def test_find_comment_matches_the_author_and_the_text(respx_mock, account):
    listing = respx_mock.get(COMMENTS).respond(
        200,
        json={
            "elements": [
                _comment(actor="urn:li:person:someone", comment_id="1"),
                _comment(text="Something else", comment_id="2"),
                _comment(text="  Details in the\nthread ", comment_id="3"),
            ],
            "paging": {"start": 0, "count": 50, "total": 3},
        },
    )
    found = LinkedInAdapter().find_comment(
        make_ctx(account), POST, "Details in the thread", key=KEY
    )
    assert found.provider_post_id == "urn:li:comment:(urn:li:activity:7012345678901234000,3)"
    assert found.published_at == datetime.fromtimestamp(1_772_355_600, tz=UTC)
    request = listing.calls.last.request
    assert request.headers["LinkedIn-Version"] == "202609"
    assert _query(request) == {"start": "0", "count": "50"}


def test_find_comment_pages_a_bounded_number_of_times(respx_mock, account):
    others = [_comment(actor="urn:li:person:someone", comment_id=str(i)) for i in range(50)]
    listing = respx_mock.get(COMMENTS).respond(200, json={"elements": others})
    assert LinkedInAdapter().find_comment(make_ctx(account), POST, "Hi", key=KEY) is None
    assert [_query(c.request)["start"] for c in listing.calls] == ["0", "50", "100"]


def test_find_comment_stops_at_the_last_page(respx_mock, account):
    listing = respx_mock.get(COMMENTS).respond(200, json={"elements": [_comment(text="Other")]})
    assert LinkedInAdapter().find_comment(make_ctx(account), POST, "Hi", key=KEY) is None
    assert listing.call_count == 1


def test_a_refused_listing_finds_nothing(respx_mock, account):
    # Member tokens read comments only with the restricted r_member_social.
    respx_mock.get(COMMENTS).respond(403, json={"code": "ACCESS_DENIED", "message": "no"})
    assert LinkedInAdapter().find_comment(make_ctx(account), POST, "Hi", key=KEY) is None


def test_a_failing_listing_is_classified_as_a_read(respx_mock, account):
    respx_mock.get(COMMENTS).respond(503, json={"message": "down"})
    with pytest.raises(ProviderError) as err:
        LinkedInAdapter().find_comment(make_ctx(account), POST, "Hi", key=KEY)
    assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE
    assert err.value.retryable is True
