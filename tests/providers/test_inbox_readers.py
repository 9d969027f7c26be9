"""Each platform's comment reader against its API (respx): what it asks, and the thread it
makes of the answer."""

from __future__ import annotations

import json

import httpx
import pytest

from apps.providers.base import PublishedSegment
from apps.providers.comment_reading import comment_reader
from apps.providers.errors import ErrorKind, ProviderError
from tests.providers.social_helpers import go_offline, make_account, make_ctx

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    return go_offline(monkeypatch)


def test_mastodon_reads_the_context_descendants_as_a_thread(respx_mock, workspace_a):
    account = make_account(
        workspace_a,
        "mastodon",
        remote_id="1090@m.example",
        handle="alice@m.example",
        credentials={"access_token": "tok"},
        settings={"instance": "https://m.example", "account_id": "1090"},
    )
    status = {
        "id": "5",
        "in_reply_to_id": "111",
        "content": "<p>Nice &amp; warm</p>",
        "created_at": "2026-12-02T10:01:00.000Z",
        "url": "https://m.example/@bob/5",
        "account": {"id": "77", "acct": "bob@else.example", "display_name": "Bob"},
    }
    child = {**status, "id": "6", "in_reply_to_id": "5", "content": "<p>yes</p>"}
    route = respx_mock.get("https://m.example/api/v1/statuses/111/context").mock(
        return_value=httpx.Response(200, json={"ancestors": [], "descendants": [status, child]})
    )

    found = comment_reader("mastodon").read_comments(
        make_ctx(account), PublishedSegment("111"), None
    )

    assert route.calls.last.request.headers["Authorization"] == "Bearer tok"
    assert [(c.platform_id, c.parent_id, c.text) for c in found] == [
        ("5", "111", "Nice & warm"),
        ("6", "5", "yes"),
    ]
    assert found[0].author_handle == "bob@else.example" and found[0].author_name == "Bob"


def test_bluesky_walks_the_thread_and_replies_with_root_and_parent(respx_mock, workspace_a):
    did, pds = "did:plc:alice", "https://pds.example"
    account = make_account(
        workspace_a,
        "bluesky",
        remote_id=did,
        handle="alice.example",
        credentials={"access_jwt": "a", "refresh_jwt": "r", "did": did, "pds": pds},
        settings={"pds": pds},
    )
    post_uri = f"at://{did}/app.bsky.feed.post/root1"
    reply_uri = "at://did:plc:bob/app.bsky.feed.post/c1"
    thread = {
        "thread": {
            "post": {"uri": post_uri},
            "replies": [
                {
                    "post": {
                        "uri": reply_uri,
                        "author": {"did": "did:plc:bob", "handle": "bob.example"},
                        "record": {
                            "text": "hi",
                            "createdAt": "2026-12-02T10:00:00.000Z",
                            "reply": {"parent": {"uri": post_uri}, "root": {"uri": post_uri}},
                        },
                    },
                    "replies": [{"$type": "app.bsky.feed.defs#blockedPost"}],
                }
            ],
        }
    }
    respx_mock.get(f"{pds}/xrpc/app.bsky.feed.getPostThread").mock(
        return_value=httpx.Response(200, json=thread)
    )

    found = comment_reader("bluesky").read_comments(
        make_ctx(account), PublishedSegment(post_uri), None
    )

    assert [(c.platform_id, c.parent_id, c.author_handle) for c in found] == [
        (reply_uri, post_uri, "bob.example")
    ]
    assert found[0].url == "https://bsky.app/profile/bob.example/post/c1"


def test_facebook_reads_comments_with_parents_and_hides_one(respx_mock, workspace_a):
    account = make_account(
        workspace_a,
        "facebook",
        remote_id="page1",
        handle="Bakery",
        credentials={"access_token": "page-token"},
    )
    listing = respx_mock.get(url__regex=r".*/page1_9/comments.*").mock(
        return_value=httpx.Response(
            200,
            json={
                "data": [
                    {
                        "id": "c2",
                        "message": "And?",
                        "from": {"id": "u2", "name": "Ann"},
                        "created_time": "2026-12-02T10:00:00+0000",
                        "parent": {"id": "c1"},
                        "is_hidden": True,
                    }
                ]
            },
        )
    )
    hide = respx_mock.post(url__regex=r".*/c2$").mock(
        return_value=httpx.Response(200, json={"success": True})
    )
    reader = comment_reader("facebook")
    ctx = make_ctx(account)

    (found,) = reader.read_comments(ctx, PublishedSegment("page1_9"), None)
    reader.hide_comment(ctx, "c2", hidden=True)

    assert listing.calls.last.request.url.params["filter"] == "stream"
    assert (found.parent_id, found.author_name, found.is_hidden) == ("c1", "Ann", True)
    assert hide.calls.last.request.content == b"is_hidden=true"


def test_youtube_reads_threads_and_a_quota_refusal_is_a_typed_error(respx_mock, workspace_a):
    account = make_account(
        workspace_a, "youtube", remote_id="UC1", handle="chan", credentials={"access_token": "t"}
    )
    top = {
        "id": "T1",
        "snippet": {
            "textOriginal": "Great video",
            "authorDisplayName": "@viewer",
            "authorChannelId": {"value": "UC9"},
            "publishedAt": "2026-12-02T10:00:00Z",
        },
    }
    reply = {"id": "T1.R1", "snippet": {**top["snippet"], "textOriginal": "thanks"}}
    respx_mock.get(url__startswith="https://www.googleapis.com/youtube/v3/commentThreads").mock(
        side_effect=[
            httpx.Response(
                200,
                json={
                    "items": [
                        {
                            "snippet": {"topLevelComment": top, "totalReplyCount": 1},
                            "replies": {"comments": [reply]},
                        }
                    ]
                },
            ),
            httpx.Response(
                403, json={"error": {"code": 403, "errors": [{"reason": "quotaExceeded"}]}}
            ),
        ]
    )
    reader, ctx = comment_reader("youtube"), make_ctx(account)

    found = reader.read_comments(ctx, PublishedSegment("vid1"), None)
    assert [(c.platform_id, c.parent_id) for c in found] == [("T1", None), ("T1.R1", "T1")]
    assert found[0].author_id == "UC9"

    with pytest.raises(ProviderError) as refused:
        reader.read_comments(ctx, PublishedSegment("vid1"), None)
    assert refused.value.kind == ErrorKind.RATE_LIMITED


def test_platforms_without_comments_say_why_and_refuse():
    for platform in ("linkedin", "tiktok", "pinterest"):
        reader = comment_reader(platform)
        assert not reader.offer.read and reader.offer.note
    with pytest.raises(ProviderError) as refused:
        comment_reader("pinterest").reply(None, PublishedSegment("1"), "2", "x", key="k")  # type: ignore[arg-type]
    assert refused.value.code == "inbox_reply_unavailable"


def test_instagram_reads_comments_with_replies_and_finds_its_reply(respx_mock, workspace_a):
    account = make_account(
        workspace_a,
        "instagram",
        remote_id="ig1",
        handle="Bakery",
        credentials={"access_token": "t"},
    )
    comment = {
        "id": "c1",
        "text": "Vegan?",
        "username": "ann",
        "timestamp": "2026-12-02T10:00:00+0000",
        "replies": {"data": [{"id": "c2", "text": "yes", "username": "bakery", "hidden": True}]},
    }
    respx_mock.get(url__regex=r".*/m1/comments.*").mock(
        return_value=httpx.Response(200, json={"data": [comment]})
    )
    replies = respx_mock.get(url__regex=r".*/c1/replies.*").mock(
        return_value=httpx.Response(
            200, json={"data": [{"id": "c3", "text": "Yes!", "username": "BAKERY"}]}
        )
    )
    reader, ctx = comment_reader("instagram"), make_ctx(account)

    found = reader.read_comments(ctx, PublishedSegment("m1", "https://instagram.com/p/x"), None)
    mine = reader.find_reply(ctx, PublishedSegment("m1"), "c1", "Yes!", key="k")

    assert [(c.platform_id, c.parent_id, c.is_hidden) for c in found] == [
        ("c1", None, False),
        ("c2", "c1", True),
    ]
    assert found[0].url == "https://instagram.com/p/x"
    assert replies.called and mine is not None and mine.provider_post_id == "c3"


def test_reddit_walks_the_comment_tree(respx_mock, workspace_a):
    account = make_account(
        workspace_a, "reddit", remote_id="u1", handle="bakery", credentials={"access_token": "t"}
    )

    def thing(name, body, parent, replies=""):
        return {
            "kind": "t1",
            "data": {
                "name": name,
                "body": body,
                "author": "ann",
                "created_utc": 1796205600,
                "parent_id": parent,
                "permalink": f"/r/x/comments/abc/_/{name}/",
                "replies": replies,
            },
        }

    child = thing("t1_b", "agreed", "t1_a")
    top = thing("t1_a", "nice", "t3_abc", {"data": {"children": [child, {"kind": "more"}]}})
    respx_mock.get("https://oauth.reddit.com/comments/abc").mock(
        return_value=httpx.Response(200, json=[{"data": {}}, {"data": {"children": [top]}}])
    )

    found = comment_reader("reddit").read_comments(
        make_ctx(account), PublishedSegment("t3_abc"), None
    )

    assert [(c.platform_id, c.parent_id) for c in found] == [("t1_a", None), ("t1_b", "t1_a")]
    assert found[1].url == "https://www.reddit.com/r/x/comments/abc/_/t1_b/"


def test_x_searches_the_conversation_and_threads_reads_the_conversation(respx_mock, workspace_a):
    x_account = make_account(
        workspace_a, "x", remote_id="42", handle="bakery", credentials={"access_token": "t"}
    )
    search = respx_mock.get(url__startswith="https://api.x.com/2/tweets/search/recent").mock(
        return_value=httpx.Response(
            200,
            json={
                "data": [
                    {
                        "id": "9",
                        "text": "@bakery when?",
                        "author_id": "7",
                        "created_at": "2026-12-02T10:00:00.000Z",
                        "referenced_tweets": [{"type": "replied_to", "id": "1"}],
                    }
                ],
                "includes": {"users": [{"id": "7", "username": "ann", "name": "Ann"}]},
            },
        )
    )
    th_account = make_account(
        workspace_a, "threads", remote_id="th1", handle="bakery", credentials={"access_token": "t"}
    )
    respx_mock.get(url__regex=r".*/p1/conversation.*").mock(
        return_value=httpx.Response(
            200,
            json={
                "data": [
                    {"id": "r1", "text": "hi", "username": "ann", "replied_to": {"id": "p1"}},
                    {"id": "r2", "text": "yo", "username": "bob", "replied_to": {"id": "r1"}},
                ]
            },
        )
    )

    (reply,) = comment_reader("x").read_comments(make_ctx(x_account), PublishedSegment("1"), None)
    threads = comment_reader("threads").read_comments(
        make_ctx(th_account), PublishedSegment("p1"), None
    )

    assert search.calls.last.request.url.params["query"] == "conversation_id:1"
    assert (reply.parent_id, reply.author_handle, reply.url) == (
        None,
        "ann",
        "https://x.com/ann/status/9",
    )
    assert [(c.platform_id, c.parent_id) for c in threads] == [("r1", None), ("r2", "r1")]


def test_x_replies_in_reply_to_the_comment_and_finds_its_reply_by_the_search(
    respx_mock, workspace_a
):
    account = make_account(
        workspace_a, "x", remote_id="42", handle="bakery", credentials={"access_token": "t"}
    )
    create = respx_mock.post("https://api.x.com/2/tweets").mock(
        return_value=httpx.Response(201, json={"data": {"id": "77", "text": "At 7"}})
    )
    respx_mock.get(url__startswith="https://api.x.com/2/tweets/search/recent").mock(
        return_value=httpx.Response(
            200,
            json={
                "data": [
                    {
                        "id": "77",
                        "text": "@ann At 7",
                        "author_id": "42",
                        "created_at": "2026-12-02T10:05:00.000Z",
                        "referenced_tweets": [{"type": "replied_to", "id": "9"}],
                    }
                ],
                "includes": {"users": [{"id": "42", "username": "bakery", "name": "Bakery"}]},
            },
        )
    )
    reader, ctx = comment_reader("x"), make_ctx(account)

    sent = reader.reply(ctx, PublishedSegment("1"), "9", "At 7", key="k")
    found = reader.find_reply(ctx, PublishedSegment("1"), "9", "At 7", key="k")

    assert json.loads(create.calls.last.request.content) == {
        "text": "At 7",
        "reply": {"in_reply_to_tweet_id": "9"},
    }
    assert sent.provider_post_id == "77" and sent.provider_url == "https://x.com/bakery/status/77"
    assert found is not None and found.provider_post_id == "77"
    assert reader.reply_lookup_is_strong is False
