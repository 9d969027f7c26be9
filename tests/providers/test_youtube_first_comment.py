"""The YouTube first comment against a respx fake of the documented Data API v3 comment
threads (commentThreads.insert and commentThreads.list)."""

import json
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import respx

from apps.accounts.models import SocialAccount
from apps.providers.base import PublishContext, PublishedSegment, SupportsFirstComment
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.youtube import errors as youtube_errors
from apps.providers.youtube.adapter import YouTubeAdapter
from apps.publishing.delivery.comment import RETRY_KINDS

THREADS = "https://www.googleapis.com/youtube/v3/commentThreads"
CHANNEL = "UC1"
VIDEO = "dQw4w9WgXcQ"
POST = PublishedSegment(VIDEO, f"https://www.youtube.com/watch?v={VIDEO}")
KEY = "rendition-7-comment"


@pytest.fixture
def fake():
    with respx.mock(assert_all_called=False) as router:
        yield router


def _ctx():
    return PublishContext(
        account=SocialAccount(platform="youtube", remote_id=CHANNEL, handle="@baker"),
        credentials={"access_token": "ya29.TOKEN"},
        settings={},
        rendition_id=7,
        idempotency_base="r7",
    )


def _query(request):
    return {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}


def _thread(comment_id, text, author=CHANNEL, at="2026-03-01T09:00:03Z"):
    return {
        "kind": "youtube#commentThread",
        "id": comment_id,
        "snippet": {
            "channelId": CHANNEL,
            "videoId": VIDEO,
            "topLevelComment": {
                "kind": "youtube#comment",
                "id": comment_id,
                "snippet": {
                    "textOriginal": text,
                    "textDisplay": text,
                    "authorChannelId": {"value": author},
                    "publishedAt": at,
                },
            },
        },
    }


def _google_error(status, reason, message="", domain="youtube.commentThread"):
    return httpx.Response(
        status,
        json={
            "error": {
                "code": status,
                "message": message or reason,
                "errors": [{"domain": domain, "reason": reason, "message": message or reason}],
            }
        },
    )


def test_the_adapter_takes_first_comments():
    adapter = YouTubeAdapter()
    assert isinstance(adapter, SupportsFirstComment)
    assert adapter.comment_lookup_is_strong is False


def test_the_comment_is_one_thread_under_the_video_with_the_token_in_the_header(fake):
    create = fake.post(THREADS).respond(200, json=_thread("Ugz-COMMENT1", "Recipe below"))

    published = YouTubeAdapter().publish_comment(_ctx(), POST, "Recipe below", key=KEY)

    assert create.call_count == 1
    request = create.calls.last.request
    assert request.method == "POST"
    assert _query(request) == {"part": "snippet"}
    assert json.loads(request.content) == {
        "snippet": {
            "channelId": CHANNEL,
            "videoId": VIDEO,
            "topLevelComment": {"snippet": {"textOriginal": "Recipe below"}},
        }
    }
    assert request.headers["Authorization"] == "Bearer ya29.TOKEN"
    assert "access_token" not in str(request.url)
    assert published == PublishedSegment(
        provider_post_id="Ugz-COMMENT1",
        provider_url=f"https://www.youtube.com/watch?v={VIDEO}&lc=Ugz-COMMENT1",
        published_at=datetime(2026, 3, 1, 9, 0, 3, tzinfo=UTC),
    )


def test_find_comment_matches_the_channel_and_the_exact_text(fake):
    listing = fake.get(THREADS).respond(
        200,
        json={
            "items": [
                _thread("c3", "Recipe below", author="UCsomeoneElse"),
                _thread("c2", "Recipe below!"),
                _thread("c1", "  Recipe   below "),
            ]
        },
    )

    found = YouTubeAdapter().find_comment(_ctx(), POST, "Recipe below", key=KEY)

    assert _query(listing.calls.last.request) == {
        "part": "snippet",
        "videoId": VIDEO,
        "order": "time",
        "textFormat": "plainText",
        "maxResults": "100",
    }
    assert listing.calls.last.request.headers["Authorization"] == "Bearer ya29.TOKEN"
    assert found == PublishedSegment(
        provider_post_id="c1",
        provider_url=f"https://www.youtube.com/watch?v={VIDEO}&lc=c1",
        published_at=datetime(2026, 3, 1, 9, 0, 3, tzinfo=UTC),
    )


def test_another_authors_comment_with_the_same_text_is_not_ours(fake):
    fake.get(THREADS).respond(
        200, json={"items": [_thread("c3", "Recipe below", author="UCsomeoneElse")]}
    )

    assert YouTubeAdapter().find_comment(_ctx(), POST, "Recipe below", key=KEY) is None


def test_find_comment_follows_the_page_token(fake):
    listing = fake.get(THREADS).mock(
        side_effect=[
            httpx.Response(
                200,
                json={"items": [_thread("c9", "Hello", author="UCfan")], "nextPageToken": "P2"},
            ),
            httpx.Response(200, json={"items": [_thread("c1", "Recipe below")]}),
        ]
    )

    found = YouTubeAdapter().find_comment(_ctx(), POST, "Recipe below", key=KEY)

    assert found.provider_post_id == "c1"
    assert _query(listing.calls[1].request)["pageToken"] == "P2"


def test_find_comment_reads_a_bounded_number_of_pages(fake):
    page = {"items": [_thread("c9", "Hello", author="UCfan")], "nextPageToken": "P"}
    listing = fake.get(THREADS).respond(200, json=page)

    assert YouTubeAdapter().find_comment(_ctx(), POST, "Recipe below", key=KEY) is None
    assert listing.call_count == 3


def test_comments_turned_off_on_the_video_are_a_refusal(fake):
    fake.post(THREADS).mock(
        return_value=_google_error(
            403,
            "commentsDisabled",
            "The video identified by the videoId parameter has disabled comments.",
        )
    )
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_comment(_ctx(), POST, "Recipe below", key=KEY)
    assert (err.value.kind, err.value.action) == (ErrorKind.CONTENT_REJECTED, Action.EDIT)
    assert err.value.retryable is False
    assert (err.value.code, err.value.http_status) == ("commentsDisabled", 403)
    assert "turned off" in err.value.message


@pytest.mark.parametrize("reason", ["insufficientPermissions", "forbidden", "ineligibleAccount"])
def test_a_missing_permission_asks_to_reconnect(fake, reason):
    fake.post(THREADS).mock(return_value=_google_error(403, reason, domain="global"))
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_comment(_ctx(), POST, "Recipe below", key=KEY)
    assert (err.value.kind, err.value.action) == (ErrorKind.PERMISSION_MISSING, Action.RECONNECT)
    assert err.value.retryable is False
    assert err.value.code == reason
    assert "reconnect" in err.value.message


def test_a_comment_too_long_is_a_refusal(fake):
    fake.post(THREADS).mock(return_value=_google_error(400, "commentTextTooLong"))
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_comment(_ctx(), POST, "Recipe below", key=KEY)
    assert err.value.kind == ErrorKind.CONTENT_REJECTED


def test_a_spent_quota_waits_for_midnight_pacific(fake):
    fake.post(THREADS).mock(
        return_value=_google_error(403, "quotaExceeded", domain="youtube.quota")
    )
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_comment(_ctx(), POST, "Recipe below", key=KEY)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retryable is True
    assert err.value.retry_at == youtube_errors.next_pacific_midnight()


def test_an_expired_token_asks_for_a_reconnect(fake):
    fake.post(THREADS).mock(return_value=_google_error(401, "authError", domain="global"))
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_comment(_ctx(), POST, "Recipe below", key=KEY)
    assert err.value.kind == ErrorKind.AUTH_EXPIRED


@pytest.mark.parametrize(
    "response",
    [_google_error(503, "backendError", domain="global"), httpx.Response(503, text="Unavailable")],
)
def test_a_5xx_to_the_insert_is_retried_through_a_lookup(fake, response):
    """The insert is not repeatable: a 5xx may hide a comment that was made. The job retries
    it (an unknown outcome is in its retry kinds), looking the comment up first."""
    fake.post(THREADS).mock(return_value=response)
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_comment(_ctx(), POST, "Recipe below", key=KEY)
    assert (err.value.kind, err.value.action) == (ErrorKind.OUTCOME_UNKNOWN, Action.VERIFY)
    assert err.value.http_status == 503
    assert err.value.message != "None"
    assert err.value.kind in RETRY_KINDS


def test_a_5xx_to_the_lookup_is_transient(fake):
    fake.get(THREADS).mock(return_value=_google_error(503, "backendError", domain="global"))
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().find_comment(_ctx(), POST, "Recipe below", key=KEY)
    assert (err.value.kind, err.value.action) == (ErrorKind.PROVIDER_UNAVAILABLE, Action.WAIT)
    assert err.value.retryable is True


def test_a_timeout_after_sending_leaves_the_comment_unknown(fake):
    fake.post(THREADS).mock(side_effect=httpx.ReadTimeout("no answer"))
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_comment(_ctx(), POST, "Recipe below", key=KEY)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert err.value.retryable is False


def test_a_connect_failure_sent_nothing(fake):
    fake.post(THREADS).mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().publish_comment(_ctx(), POST, "Recipe below", key=KEY)
    assert err.value.kind == ErrorKind.NETWORK_BEFORE_SEND


def test_a_lookup_that_fails_is_never_unknown(fake):
    fake.get(THREADS).mock(side_effect=httpx.ReadTimeout("no answer"))
    with pytest.raises(ProviderError) as err:
        YouTubeAdapter().find_comment(_ctx(), POST, "Recipe below", key=KEY)
    assert err.value.kind == ErrorKind.NETWORK_BEFORE_SEND
