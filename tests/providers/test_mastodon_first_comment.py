"""The Mastodon first comment: a self-reply under the live post, found again by listing."""

from datetime import UTC, datetime

import httpx
import pytest

from apps.providers.base import PublishedSegment, SupportsFirstComment
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.mastodon.adapter import MastodonAdapter
from tests.providers.social_helpers import body, go_offline, make_account, make_ctx

pytestmark = pytest.mark.django_db

INSTANCE = "https://mastodon.example"
STATUSES = f"{INSTANCE}/api/v1/statuses"
LISTING = f"{INSTANCE}/api/v1/accounts/1090/statuses"
KEY = "rendition-7-comment"
POST = PublishedSegment("111", f"{INSTANCE}/@alice/111")


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


def _status(status_id="222", text="<p>First!</p>", reply_to="111"):
    return {
        "id": status_id,
        "url": f"{INSTANCE}/@alice/{status_id}",
        "uri": f"{INSTANCE}/users/alice/statuses/{status_id}",
        "created_at": "2026-12-02T10:01:00.000Z",
        "content": text,
        "in_reply_to_id": reply_to,
    }


def test_it_takes_first_comments_and_its_lookup_is_not_strong():
    adapter = MastodonAdapter()
    assert isinstance(adapter, SupportsFirstComment)
    assert adapter.comment_lookup_is_strong is False


def test_the_comment_is_a_reply_with_the_posts_visibility_and_the_comment_key(respx_mock, account):
    route = respx_mock.post(STATUSES).respond(200, json=_status())
    ctx = make_ctx(account, settings={"visibility": "unlisted", "spoiler_text": "cw"})
    comment = MastodonAdapter().publish_comment(ctx, POST, "First!", key=KEY)

    request = route.calls.last.request
    assert request.method == "POST"
    assert request.headers["Authorization"] == "Bearer tok-1"
    assert request.headers["Idempotency-Key"] == KEY
    # The post's content warning covers the post's text, not the comment's.
    assert body(request) == {"status": "First!", "in_reply_to_id": "111", "visibility": "unlisted"}
    assert comment == PublishedSegment(
        provider_post_id="222",
        provider_url=f"{INSTANCE}/@alice/222",
        published_at=datetime(2026, 12, 2, 10, 1, tzinfo=UTC),
    )


def test_without_a_visibility_setting_the_account_default_applies(respx_mock, account):
    route = respx_mock.post(STATUSES).respond(200, json=_status())
    MastodonAdapter().publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert body(route.calls.last.request) == {"status": "First!", "in_reply_to_id": "111"}


def test_an_invalid_visibility_is_refused_before_anything_is_sent(respx_mock, account):
    route = respx_mock.post(STATUSES).respond(200, json=_status())
    ctx = make_ctx(account, settings={"visibility": "everyone"})
    with pytest.raises(ProviderError) as err:
        MastodonAdapter().publish_comment(ctx, POST, "First!", key=KEY)
    assert err.value.code == "invalid_visibility"
    assert route.call_count == 0


def test_a_lost_answer_is_an_unknown_outcome_and_the_resend_carries_the_same_key(
    respx_mock, account
):
    route = respx_mock.post(STATUSES).mock(
        side_effect=[httpx.ReadTimeout("lost"), httpx.Response(200, json=_status())]
    )
    adapter = MastodonAdapter()
    with pytest.raises(ProviderError) as err:
        adapter.publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    again = adapter.publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert [call.request.headers["Idempotency-Key"] for call in route.calls] == [KEY, KEY]
    assert again.provider_post_id == "222"


@pytest.mark.parametrize(
    ("status", "payload", "kind", "action"),
    [
        (401, {"error": "The access token is invalid"}, ErrorKind.AUTH_EXPIRED, Action.RECONNECT),
        (
            422,
            {"error": "Validation failed: Text character limit of 500 exceeded"},
            ErrorKind.CONTENT_REJECTED,
            Action.EDIT,
        ),
        (503, {"error": "Service Unavailable"}, ErrorKind.OUTCOME_UNKNOWN, None),
    ],
)
def test_errors_are_classified_as_a_create(respx_mock, account, status, payload, kind, action):
    respx_mock.post(STATUSES).respond(status, json=payload)
    with pytest.raises(ProviderError) as err:
        MastodonAdapter().publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert err.value.kind == kind
    assert err.value.http_status == status
    if action is not None:
        assert err.value.action == action


def test_a_rate_limit_carries_the_iso_reset(respx_mock, account):
    respx_mock.post(STATUSES).respond(
        429,
        json={"error": "Too many requests"},
        headers={"X-RateLimit-Reset": "2026-12-02T11:00:00.000Z"},
    )
    with pytest.raises(ProviderError) as err:
        MastodonAdapter().publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retry_at == datetime(2026, 12, 2, 11, 0, tzinfo=UTC)


def test_find_lists_the_accounts_statuses_newer_than_the_post(respx_mock, account):
    route = respx_mock.get(LISTING).respond(
        200,
        json=[
            _status("230", "<p>First!</p>", reply_to="999"),  # the same text under another post
            _status("225", "<p>Second thoughts</p>"),  # another reply to the post
            _status("222", "<p>First!</p>"),
        ],
    )
    found = MastodonAdapter().find_comment(make_ctx(account), POST, "First!", key=KEY)

    request = route.calls.last.request
    assert request.headers["Authorization"] == "Bearer tok-1"
    assert dict(request.url.params) == {
        "limit": "40",
        "exclude_reblogs": "true",
        "since_id": "111",
    }
    assert found.provider_post_id == "222"
    assert found.provider_url == f"{INSTANCE}/@alice/222"


def test_find_matches_the_text_as_rendered_in_html(respx_mock, account):
    content = (
        '<p>Read <a href="https://example.com/a">https://example.com/a</a> &amp; '
        '<span class="h-card"><a href="https://other.example/@bob">@bob</a></span></p>'
    )
    respx_mock.get(LISTING).respond(200, json=[_status("222", content)])
    found = MastodonAdapter().find_comment(
        make_ctx(account), POST, "Read  https://example.com/a & @bob@other.example", key=KEY
    )
    assert found is not None and found.provider_post_id == "222"


def test_find_pages_back_a_bounded_number_of_pages_then_gives_up(respx_mock, account):
    pages = [[_status(str(300 - n), "<p>other</p>")] for n in range(5)]
    route = respx_mock.get(LISTING).mock(
        side_effect=[httpx.Response(200, json=page) for page in pages]
    )
    assert MastodonAdapter().find_comment(make_ctx(account), POST, "First!", key=KEY) is None
    assert route.call_count == 3
    assert route.calls[1].request.url.params["max_id"] == "300"
    assert route.calls[1].request.url.params["since_id"] == "111"


def test_find_answers_none_when_nothing_is_newer_than_the_post(respx_mock, account):
    route = respx_mock.get(LISTING).respond(200, json=[])
    assert MastodonAdapter().find_comment(make_ctx(account), POST, "First!", key=KEY) is None
    assert route.call_count == 1


def test_a_failed_lookup_is_classified_as_a_read(respx_mock, account):
    respx_mock.get(LISTING).respond(502, json={"error": "Bad Gateway"})
    with pytest.raises(ProviderError) as err:
        MastodonAdapter().find_comment(make_ctx(account), POST, "First!", key=KEY)
    assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE
    assert err.value.retryable is True


def test_a_lookup_timeout_is_not_an_unknown_outcome(respx_mock, account):
    respx_mock.get(LISTING).mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(ProviderError) as err:
        MastodonAdapter().find_comment(make_ctx(account), POST, "First!", key=KEY)
    assert err.value.kind != ErrorKind.OUTCOME_UNKNOWN  # a read creates nothing
    assert err.value.retryable is True
