"""The Bluesky first comment: a self-reply under the live post, under a record key derived
from the comment's key, found again by getRecord."""

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from apps.accounts.installation import installation_id
from apps.providers.base import PublishedSegment, SupportsFirstComment
from apps.providers.bluesky.adapter import BlueskyAdapter
from apps.providers.bluesky.tid import MAX_POSITION, is_tid, segment_rkey
from apps.providers.errors import Action, ErrorKind, ProviderError
from tests.providers.social_helpers import body, go_offline, make_account, make_ctx

pytestmark = pytest.mark.django_db

PDS = "https://pds.example"
DID = "did:plc:alice123"
XRPC = f"{PDS}/xrpc"
KEY = "rendition-7-comment"
POST_RKEY = "3lpostpostpo2"
POST_URI = f"at://{DID}/app.bsky.feed.post/{POST_RKEY}"
POST = PublishedSegment(POST_URI, f"https://bsky.app/profile/{DID}/post/{POST_RKEY}")


@pytest.fixture(autouse=True)
def waits(monkeypatch):
    return go_offline(monkeypatch)


@pytest.fixture
def account(workspace_a):
    return make_account(
        workspace_a,
        "bluesky",
        remote_id=DID,
        handle="alice.example",
        credentials={
            "access_jwt": "access-1",
            "refresh_jwt": "refresh-1",
            "did": DID,
            "pds": PDS,
            "expires_at": (datetime.now(UTC) + timedelta(hours=2)).isoformat(),
        },
        settings={"did": DID, "pds": PDS},
        token_expires_at=datetime.now(UTC) + timedelta(hours=2),
    )


def _keys() -> tuple[str, str]:
    base = f"{installation_id()}:{KEY}"
    first = segment_rkey(7, MAX_POSITION, installation=base)
    return first, segment_rkey(7, MAX_POSITION, installation=f"{base}:{first}")


def _uri(rkey: str) -> str:
    return f"at://{DID}/app.bsky.feed.post/{rkey}"


def _record(rkey: str, text: str, cid: str = "bafy-comment") -> dict:
    return {
        "uri": _uri(rkey),
        "cid": cid,
        "value": {"text": text, "createdAt": "2026-12-02T10:01:00.000Z"},
    }


def _not_found() -> httpx.Response:
    return httpx.Response(
        400, json={"error": "RecordNotFound", "message": "Could not locate record"}
    )


def _records(respx_mock, records: dict[str, dict]):
    """getRecord answering from `records` by rkey (the live post is always there)."""
    records = {POST_RKEY: {"uri": POST_URI, "cid": "cid-post", "value": {"text": "p"}}, **records}

    def get_record(request):
        found = records.get(request.url.params["rkey"])
        return httpx.Response(200, json=found) if found else _not_found()

    return respx_mock.get(f"{XRPC}/com.atproto.repo.getRecord").mock(side_effect=get_record)


def _created(rkey: str) -> dict:
    return {"uri": _uri(rkey), "cid": "bafy-comment", "commit": {"cid": "c", "rev": "3k"}}


def test_it_takes_first_comments_and_its_lookup_is_strong():
    adapter = BlueskyAdapter()
    assert isinstance(adapter, SupportsFirstComment)
    assert adapter.comment_lookup_is_strong is True


def test_the_comment_keys_are_valid_tids_apart_from_the_posts_segments():
    first, fallback = _keys()
    assert is_tid(first) and is_tid(fallback)
    assert first != fallback
    segments = {segment_rkey(7, p, installation=installation_id()) for p in range(MAX_POSITION)}
    assert not {first, fallback} & segments


def test_the_comment_replies_to_the_post_under_its_derived_key_with_facets(respx_mock, account):
    get = _records(respx_mock, {})
    respx_mock.get(f"{XRPC}/com.atproto.identity.resolveHandle").respond(
        200, json={"did": "did:plc:bob"}
    )
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        200, json=_created(_keys()[0])
    )
    text = "Thanks @bob.example.com"
    ctx = make_ctx(account, settings={"language": "pl"})
    comment = BlueskyAdapter().publish_comment(ctx, POST, text, key=KEY)

    assert dict(get.calls[0].request.url.params) == {
        "repo": DID,
        "collection": "app.bsky.feed.post",
        "rkey": POST_RKEY,
    }
    request = create.calls.last.request
    assert request.method == "POST"
    assert request.headers["Authorization"] == "Bearer access-1"
    sent = body(request)
    assert sent["repo"] == DID
    assert sent["collection"] == "app.bsky.feed.post"
    assert sent["rkey"] == _keys()[0]
    record = sent["record"]
    assert record["$type"] == "app.bsky.feed.post"
    assert record["text"] == text
    assert record["langs"] == ["pl"]
    assert record["createdAt"].endswith("Z")
    ref = {"uri": POST_URI, "cid": "cid-post"}
    assert record["reply"] == {"root": ref, "parent": ref}
    assert record["facets"] == [
        {
            "index": {"byteStart": 7, "byteEnd": 23},
            "features": [{"$type": "app.bsky.richtext.facet#mention", "did": "did:plc:bob"}],
        }
    ]
    assert "embed" not in record
    rkey = _keys()[0]
    assert comment.provider_post_id == _uri(rkey)
    assert comment.provider_url == f"https://bsky.app/profile/{DID}/post/{rkey}"


def test_a_link_in_the_comment_gets_its_facet_and_card(respx_mock, account):
    _records(respx_mock, {})
    respx_mock.get("https://example.com/a").respond(
        200,
        text='<html><head><meta property="og:title" content="A page"></head></html>',
        headers={"Content-Type": "text/html"},
    )
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        200, json=_created(_keys()[0])
    )
    BlueskyAdapter().publish_comment(make_ctx(account), POST, "https://example.com/a", key=KEY)
    record = body(create.calls.last.request)["record"]
    assert record["facets"][0]["features"] == [
        {"$type": "app.bsky.richtext.facet#link", "uri": "https://example.com/a"}
    ]
    assert record["embed"]["external"]["uri"] == "https://example.com/a"


def test_a_deleted_post_takes_no_comment(respx_mock, account):
    respx_mock.get(f"{XRPC}/com.atproto.repo.getRecord").mock(return_value=_not_found())
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord")
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert err.value.code == "reply_parent_missing"
    assert create.call_count == 0


def test_a_lost_answer_with_nothing_under_the_key_is_an_unknown_outcome(respx_mock, account):
    _records(respx_mock, {})
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").mock(
        side_effect=[httpx.ReadTimeout("lost"), httpx.Response(200, json=_created(_keys()[0]))]
    )
    adapter = BlueskyAdapter()
    with pytest.raises(ProviderError) as err:
        adapter.publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    adapter.publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert [body(c.request)["rkey"] for c in create.calls] == [_keys()[0], _keys()[0]]


def test_a_duplicate_key_500_holding_our_comment_is_the_comment(respx_mock, account):
    first, _ = _keys()
    _records(respx_mock, {first: _record(first, "First!")})
    respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        500, json={"error": "InternalServerError", "message": "Internal Server Error"}
    )
    comment = BlueskyAdapter().publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert comment.provider_post_id == _uri(first)
    assert comment.published_at == datetime(2026, 12, 2, 10, 1, tzinfo=UTC)


def test_a_key_held_by_another_record_moves_the_comment_to_the_fallback(respx_mock, account):
    first, fallback = _keys()
    _records(respx_mock, {first: _record(first, "someone else's words")})
    create = respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").mock(
        side_effect=[
            httpx.Response(500, json={"error": "InternalServerError", "message": "boom"}),
            httpx.Response(200, json=_created(fallback)),
        ]
    )
    comment = BlueskyAdapter().publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert [body(c.request)["rkey"] for c in create.calls] == [first, fallback]
    assert comment.provider_post_id == _uri(fallback)


def test_both_keys_held_by_other_records_is_an_error(respx_mock, account):
    first, fallback = _keys()
    _records(respx_mock, {first: _record(first, "a"), fallback: _record(fallback, "b")})
    respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        409, json={"error": "RecordAlreadyExists", "message": "Record already exists"}
    )
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert err.value.code == "rkey_taken"
    assert err.value.retryable is False


@pytest.mark.parametrize(
    ("status", "error", "kind", "action"),
    [
        (401, "AuthMissing", ErrorKind.AUTH_EXPIRED, Action.RECONNECT),
        (400, "InvalidRequest", ErrorKind.CONTENT_REJECTED, Action.EDIT),
    ],
)
def test_create_errors_are_classified(respx_mock, account, status, error, kind, action):
    _records(respx_mock, {})
    respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        status, json={"error": error, "message": "no"}
    )
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert err.value.kind == kind
    assert err.value.code == error
    assert err.value.action == action


def test_a_5xx_with_nothing_under_the_key_is_a_retryable_outage(respx_mock, account):
    _records(respx_mock, {})
    respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        502, json={"error": "UpstreamFailure", "message": "Upstream Failure"}
    )
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE
    assert err.value.retryable is True


def test_a_rate_limit_carries_the_epoch_reset(respx_mock, account):
    _records(respx_mock, {})
    respx_mock.post(f"{XRPC}/com.atproto.repo.createRecord").respond(
        429,
        json={"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"},
        headers={"RateLimit-Reset": "1796220000"},
    )
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().publish_comment(make_ctx(account), POST, "First!", key=KEY)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retry_at == datetime.fromtimestamp(1796220000, tz=UTC)


def test_find_is_get_record_by_the_comment_key(respx_mock, account):
    first, _ = _keys()
    get = _records(respx_mock, {first: _record(first, "First!")})
    found = BlueskyAdapter().find_comment(make_ctx(account), POST, "First!", key=KEY)
    assert dict(get.calls.last.request.url.params) == {
        "repo": DID,
        "collection": "app.bsky.feed.post",
        "rkey": first,
    }
    assert get.calls.last.request.headers["Authorization"] == "Bearer access-1"
    assert found.provider_post_id == _uri(first)
    assert found.provider_url == f"https://bsky.app/profile/{DID}/post/{first}"


def test_find_answers_none_when_the_key_holds_nothing(respx_mock, account):
    get = _records(respx_mock, {})
    assert BlueskyAdapter().find_comment(make_ctx(account), POST, "First!", key=KEY) is None
    assert get.call_count == 1  # a create only goes to the fallback when the first is taken


def test_find_ignores_another_text_and_looks_under_the_fallback(respx_mock, account):
    first, fallback = _keys()
    get = _records(respx_mock, {first: _record(first, "someone else's words")})
    assert BlueskyAdapter().find_comment(make_ctx(account), POST, "First!", key=KEY) is None
    assert [c.request.url.params["rkey"] for c in get.calls] == [first, fallback]
    _records(
        respx_mock,
        {first: _record(first, "someone else's words"), fallback: _record(fallback, "First!")},
    )
    found = BlueskyAdapter().find_comment(make_ctx(account), POST, "First!", key=KEY)
    assert found.provider_post_id == _uri(fallback)


def test_find_only_looks_in_the_accounts_own_repository(respx_mock, account):
    get = _records(respx_mock, {})
    BlueskyAdapter().find_comment(make_ctx(account), POST, "First!", key=KEY)
    assert get.calls.last.request.url.params["repo"] == DID


def test_a_failed_lookup_is_classified_as_a_read(respx_mock, account):
    respx_mock.get(f"{XRPC}/com.atproto.repo.getRecord").respond(
        502, json={"error": "UpstreamFailure", "message": "Upstream Failure"}
    )
    with pytest.raises(ProviderError) as err:
        BlueskyAdapter().find_comment(make_ctx(account), POST, "First!", key=KEY)
    assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE
    assert err.value.retryable is True
