"""The Instagram first comment against a respx fake of the documented Graph comments edge
(/{ig-media-id}/comments on graph.instagram.com)."""

from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import respx

from apps.accounts.models import SocialAccount
from apps.providers.base import PublishContext, PublishedSegment, SupportsFirstComment
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.instagram.adapter import InstagramAdapter
from tests.providers.social_helpers import form

G = "https://graph.instagram.com/v23.0"
IG = "17841400000000001"
MEDIA = "17895695668004550"
POST = PublishedSegment(MEDIA, "https://www.instagram.com/p/Abc/")
KEY = "rendition-7-comment"
COMMENTS = f"{G}/{MEDIA}/comments"


@pytest.fixture
def fake():
    with respx.mock(assert_all_called=False) as router:
        yield router


def _ctx():
    return PublishContext(
        account=SocialAccount(platform="instagram", remote_id=IG, handle="shop"),
        credentials={"access_token": "IG-TOKEN"},
        settings={},
        rendition_id=7,
        idempotency_base="r7",
    )


def _query(request):
    return {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}


def _comment(comment_id, text, username="shop", timestamp="2026-03-01T09:00:03+0000"):
    return {"id": comment_id, "text": text, "username": username, "timestamp": timestamp}


def _graph_error(code, message, subcode=None, status=400, transient=None):
    error = {"message": message, "type": "OAuthException", "code": code, "fbtrace_id": "A6L"}
    if subcode:
        error["error_subcode"] = subcode
    if transient is not None:
        error["is_transient"] = transient
    return httpx.Response(status, json={"error": error})


def test_the_adapter_takes_first_comments():
    adapter = InstagramAdapter()
    assert isinstance(adapter, SupportsFirstComment)
    assert adapter.comment_lookup_is_strong is False


def test_the_comment_goes_under_the_media_with_the_token_in_the_header(fake):
    create = fake.post(COMMENTS).respond(200, json={"id": "17870913679156914"})

    published = InstagramAdapter().publish_comment(_ctx(), POST, "Link in bio", key=KEY)

    request = create.calls.last.request
    assert request.method == "POST"
    assert form(request) == {"message": "Link in bio"}
    assert request.headers["Authorization"] == "Bearer IG-TOKEN"
    assert "access_token" not in str(request.url)
    assert published.provider_post_id == "17870913679156914"
    assert published.provider_url == ""  # the API gives a comment no permalink
    assert published.published_at is not None


def test_find_comment_matches_the_accounts_username_and_exact_text(fake):
    listing = fake.get(COMMENTS).respond(
        200,
        json={
            "data": [
                _comment("c3", "Link in bio", username="someone_else"),
                _comment("c2", "Link in bio!"),
                _comment("c1", "  Link   in bio ", username="Shop"),
            ]
        },
    )

    found = InstagramAdapter().find_comment(_ctx(), POST, "Link in bio", key=KEY)

    assert _query(listing.calls.last.request) == {
        "fields": "id,text,username,timestamp",
        "limit": "50",
    }
    assert listing.calls.last.request.headers["Authorization"] == "Bearer IG-TOKEN"
    assert found == PublishedSegment(
        provider_post_id="c1", published_at=datetime(2026, 3, 1, 9, 0, 3, tzinfo=UTC)
    )


def test_find_comment_follows_the_cursor_to_the_next_page(fake):
    listing = fake.get(COMMENTS).mock(
        side_effect=[
            httpx.Response(
                200,
                json={
                    "data": [_comment("c9", "Hello", username="fan")],
                    "paging": {"cursors": {"after": "CUR1"}, "next": f"{COMMENTS}?after=CUR1"},
                },
            ),
            httpx.Response(200, json={"data": [_comment("c1", "Link in bio")]}),
        ]
    )

    found = InstagramAdapter().find_comment(_ctx(), POST, "Link in bio", key=KEY)

    assert found.provider_post_id == "c1"
    assert _query(listing.calls[1].request)["after"] == "CUR1"


def test_find_comment_is_none_when_no_comment_of_ours_is_listed(fake):
    fake.get(COMMENTS).respond(
        200,
        json={"data": [_comment("c2", "Link in bio", username="fan"), _comment("c1", "Other")]},
    )

    assert InstagramAdapter().find_comment(_ctx(), POST, "Link in bio", key=KEY) is None


def test_find_comment_reads_a_bounded_number_of_pages(fake):
    page = {
        "data": [_comment("c9", "Hello", username="fan")],
        "paging": {"cursors": {"after": "CUR"}, "next": f"{COMMENTS}?after=CUR"},
    }
    listing = fake.get(COMMENTS).respond(200, json=page)

    assert InstagramAdapter().find_comment(_ctx(), POST, "Link in bio", key=KEY) is None
    assert listing.call_count == 3


@pytest.mark.parametrize(
    ("response", "kind", "action"),
    [
        (_graph_error(190, "Error validating access token", 463, status=401),
         ErrorKind.AUTH_EXPIRED, Action.RECONNECT),
        (_graph_error(10, "Application does not have permission for this action", status=403),
         ErrorKind.PERMISSION_MISSING, Action.RECONNECT),
        (_graph_error(100, "Invalid parameter"), ErrorKind.CONTENT_REJECTED, Action.EDIT),
        (_graph_error(2, "Service temporarily unavailable", status=500, transient=True),
         ErrorKind.OUTCOME_UNKNOWN, Action.VERIFY),
        (httpx.Response(502, text="Bad Gateway"), ErrorKind.OUTCOME_UNKNOWN, Action.VERIFY),
    ],
)  # fmt: skip
def test_errors_on_the_comment_are_classified(fake, response, kind, action):
    fake.post(COMMENTS).mock(return_value=response)
    with pytest.raises(ProviderError) as err:
        InstagramAdapter().publish_comment(_ctx(), POST, "Link in bio", key=KEY)
    assert (err.value.kind, err.value.action) == (kind, action)
    assert err.value.http_status == response.status_code


def test_a_throttled_comment_waits_as_meta_says(fake):
    fake.post(COMMENTS).mock(
        return_value=httpx.Response(
            400,
            json={"error": {"message": "Application request limit reached", "code": 4}},
            headers={"Retry-After": "120"},
        )
    )
    with pytest.raises(ProviderError) as err:
        InstagramAdapter().publish_comment(_ctx(), POST, "Link in bio", key=KEY)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retryable is True
    assert err.value.retry_at is not None and err.value.retry_at > datetime.now(UTC)


def test_a_timeout_after_sending_leaves_the_comment_unknown(fake):
    fake.post(COMMENTS).mock(side_effect=httpx.ReadTimeout("no answer"))
    with pytest.raises(ProviderError) as err:
        InstagramAdapter().publish_comment(_ctx(), POST, "Link in bio", key=KEY)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert err.value.retryable is False


def test_a_connect_failure_sent_nothing(fake):
    fake.post(COMMENTS).mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(ProviderError) as err:
        InstagramAdapter().publish_comment(_ctx(), POST, "Link in bio", key=KEY)
    assert err.value.kind == ErrorKind.NETWORK_BEFORE_SEND


def test_a_lookup_that_fails_is_never_unknown(fake):
    fake.get(COMMENTS).mock(side_effect=httpx.ReadTimeout("no answer"))
    with pytest.raises(ProviderError) as err:
        InstagramAdapter().find_comment(_ctx(), POST, "Link in bio", key=KEY)
    assert err.value.kind == ErrorKind.NETWORK_BEFORE_SEND
