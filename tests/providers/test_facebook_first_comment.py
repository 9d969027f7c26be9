"""The Facebook Page first comment against a respx fake of the documented Graph comments
edge (/{post-id}/comments)."""

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import respx

from apps.accounts.models import SocialAccount
from apps.providers.base import PublishContext, PublishedSegment, SupportsFirstComment
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.facebook.adapter import FacebookPagesAdapter
from apps.providers.meta.graph import parse_graph_time
from tests.providers.social_helpers import form

G = "https://graph.facebook.com/v23.0"
PAGE = "1122334455"
POST_ID = f"{PAGE}_987"
POST = PublishedSegment(POST_ID, "https://www.facebook.com/bakery/posts/987")
KEY = "rendition-3-comment"


@pytest.fixture
def fake():
    with respx.mock(assert_all_called=False) as router:
        yield router


def _ctx():
    return PublishContext(
        account=SocialAccount(platform="facebook", remote_id=PAGE, handle="Bakery"),
        credentials={"access_token": "PAGE-TOKEN"},
        settings={},
        rendition_id=3,
        idempotency_base="r3",
    )


def _query(request):
    return {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}


def _comment(comment_id, message, author=PAGE, created="2026-03-01T09:00:03+0000"):
    return {
        "id": comment_id,
        "message": message,
        "from": {"id": author, "name": "Someone"},
        "created_time": created,
        "permalink_url": f"https://www.facebook.com/bakery/posts/987?comment_id={comment_id}",
    }


def _graph_error(code, message, subcode=None, status=400):
    error = {"message": message, "type": "OAuthException", "code": code, "fbtrace_id": "F1"}
    if subcode:
        error["error_subcode"] = subcode
    return httpx.Response(status, json={"error": error})


def test_the_adapter_takes_first_comments():
    adapter = FacebookPagesAdapter()
    assert isinstance(adapter, SupportsFirstComment)
    assert adapter.comment_lookup_is_strong is False


def test_the_comment_goes_under_the_post_with_the_page_token(fake):
    create = fake.post(f"{G}/{POST_ID}/comments").respond(200, json={"id": "987_555"})
    fake.get(f"{G}/987_555").respond(
        200, json={"id": "987_555", "permalink_url": "https://www.facebook.com/c/987_555"}
    )
    published = FacebookPagesAdapter().publish_comment(_ctx(), POST, "Order at the link", key=KEY)
    request = create.calls.last.request
    assert form(request) == {"message": "Order at the link"}
    assert request.headers["Authorization"] == "Bearer PAGE-TOKEN"
    assert "access_token" not in str(request.url)
    assert published.provider_post_id == "987_555"
    assert published.provider_url == "https://www.facebook.com/c/987_555"
    assert published.published_at is not None


def test_an_unreadable_permalink_falls_back_to_the_comment_id(fake):
    fake.post(f"{G}/{POST_ID}/comments").respond(200, json={"id": "987_555"})
    fake.get(f"{G}/987_555").mock(return_value=_graph_error(2, "Service unavailable", status=503))
    published = FacebookPagesAdapter().publish_comment(_ctx(), POST, "Hi", key=KEY)
    assert published.provider_url == "https://www.facebook.com/987_555"


@pytest.mark.parametrize(
    ("response", "kind", "retryable"),
    [
        (_graph_error(190, "Session has expired", 463, 401), ErrorKind.AUTH_EXPIRED, False),
        (_graph_error(200, "Permissions error", status=403), ErrorKind.PERMISSION_MISSING, False),
        (_graph_error(100, "Invalid parameter"), ErrorKind.CONTENT_REJECTED, False),
        (_graph_error(2, "Service unavailable", status=503), ErrorKind.OUTCOME_UNKNOWN, False),
        (httpx.Response(502, text="<html>Bad gateway</html>"), ErrorKind.OUTCOME_UNKNOWN, False),
    ],
)
def test_errors_on_the_comment_are_classified(fake, response, kind, retryable):
    fake.post(f"{G}/{POST_ID}/comments").mock(return_value=response)
    with pytest.raises(ProviderError) as err:
        FacebookPagesAdapter().publish_comment(_ctx(), POST, "Hi", key=KEY)
    assert (err.value.kind, err.value.retryable) == (kind, retryable)


def test_a_throttled_comment_waits_as_told(fake):
    fake.post(f"{G}/{POST_ID}/comments").mock(
        return_value=httpx.Response(
            400,
            headers={"Retry-After": "120"},
            json={"error": {"message": "limit", "type": "OAuthException", "code": 32}},
        )
    )
    with pytest.raises(ProviderError) as err:
        FacebookPagesAdapter().publish_comment(_ctx(), POST, "Hi", key=KEY)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retry_at is not None


def test_a_comment_without_an_answer_is_an_unknown_outcome(fake):
    route = fake.post(f"{G}/{POST_ID}/comments").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(ProviderError) as err:
        FacebookPagesAdapter().publish_comment(_ctx(), POST, "Hi", key=KEY)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert err.value.action == Action.VERIFY
    assert route.call_count == 1


def test_find_comment_matches_the_page_and_the_text(fake):
    listing = fake.get(f"{G}/{POST_ID}/comments").respond(
        200,
        json={
            "data": [
                _comment("987_1", "Order at the link", author="999"),
                _comment("987_2", "Something else"),
                _comment("987_3", " Order at the\nlink "),
            ]
        },
    )
    found = FacebookPagesAdapter().find_comment(_ctx(), POST, "Order at the link", key=KEY)
    assert found.provider_post_id == "987_3"
    assert found.provider_url == "https://www.facebook.com/bakery/posts/987?comment_id=987_3"
    assert found.published_at == parse_graph_time("2026-03-01T09:00:03+0000")
    request = listing.calls.last.request
    assert request.headers["Authorization"] == "Bearer PAGE-TOKEN"
    assert _query(request) == {
        "filter": "stream",
        "order": "reverse_chronological",
        "fields": "id,message,from,created_time,permalink_url",
        "limit": "50",
    }


def test_find_comment_follows_cursors_a_bounded_number_of_times(fake):
    others = [_comment(f"987_{i}", "Not ours", author="999") for i in range(50)]
    listing = fake.get(f"{G}/{POST_ID}/comments").respond(
        200,
        json={
            "data": others,
            "paging": {"cursors": {"before": "B", "after": "NEXT"}, "next": f"{G}/next"},
        },
    )
    assert FacebookPagesAdapter().find_comment(_ctx(), POST, "Hi", key=KEY) is None
    assert listing.call_count == 3
    assert "after" not in _query(listing.calls[0].request)
    assert _query(listing.calls[1].request)["after"] == "NEXT"


def test_find_comment_stops_at_the_last_page(fake):
    listing = fake.get(f"{G}/{POST_ID}/comments").respond(
        200, json={"data": [_comment("987_1", "Other")], "paging": {"cursors": {"after": "X"}}}
    )
    assert FacebookPagesAdapter().find_comment(_ctx(), POST, "Hi", key=KEY) is None
    assert listing.call_count == 1


def test_a_failing_listing_is_classified_as_a_read(fake):
    fake.get(f"{G}/{POST_ID}/comments").mock(
        return_value=_graph_error(2, "Service unavailable", status=503)
    )
    with pytest.raises(ProviderError) as err:
        FacebookPagesAdapter().find_comment(_ctx(), POST, "Hi", key=KEY)
    assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE
    assert err.value.retryable is True


def test_a_comment_under_a_post_that_is_gone_fails_saying_so(fake):
    # Graph's answer for an object that does not exist, or that the token cannot load.
    gone = _graph_error(100, "Unsupported post request. Object with ID '1_987' does not exist", 33)
    fake.post(f"{G}/{POST_ID}/comments").mock(return_value=gone)
    fake.get(f"{G}/{POST_ID}/comments").mock(return_value=gone)

    for call in (
        lambda: FacebookPagesAdapter().publish_comment(_ctx(), POST, "Hi", key=KEY),
        lambda: FacebookPagesAdapter().find_comment(_ctx(), POST, "Hi", key=KEY),
    ):
        with pytest.raises(ProviderError) as err:
            call()
        assert (err.value.kind, err.value.code) == (ErrorKind.CONTENT_REJECTED, "post_gone")
        assert not err.value.retryable
        assert "no longer on the Page" in err.value.message
