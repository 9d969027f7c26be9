"""Replies to a post on X: a recent search by conversation (``GET /2/tweets/search/recent
?query=conversation_id:{id}``), which covers the last 7 days and is a billed read on X's
paid tiers. A reply from the inbox is a post in reply to the comment (``POST /2/tweets``
with ``reply.in_reply_to_tweet_id``); X's create takes no idempotency handle, so a lost
answer is looked for by the same search, from the account (weak: the search lags). The
author of a post may hide replies to it (``PUT /2/tweets/{id}/hidden``), not delete them."""

from __future__ import annotations

from datetime import datetime

from apps.providers.base import PublishContext, PublishedSegment, get_adapter
from apps.providers.comment_reading import CommentReader, InboxOffer, RemoteComment
from apps.providers.x.adapter import API, XAdapter, _Api, _normalize
from apps.providers.x.errors import classify

MAX_RESULTS = 100


class XComments(CommentReader):
    platform = "x"
    offer = InboxOffer(
        read=True,
        reply=True,
        hide=True,
        note=(
            "Replies are found by a recent search: only the last 7 days, and each read is "
            "billed on X's paid API tiers. The author of a post can hide replies but not "
            "delete them."
        ),
    )
    reply_lookup_is_strong = False

    @staticmethod
    def _api(ctx: PublishContext) -> _Api:
        adapter = get_adapter("x")
        assert isinstance(adapter, XAdapter)
        return _Api(ctx, adapter)

    def read_comments(
        self, ctx: PublishContext, post: PublishedSegment, since: datetime | None
    ) -> list[RemoteComment]:
        params = {
            "query": f"conversation_id:{post.provider_post_id}",
            "max_results": MAX_RESULTS,
            "tweet.fields": "author_id,created_at,referenced_tweets,conversation_id",
            "expansions": "author_id",
            "user.fields": "username,name",
        }
        if since is not None:
            params["start_time"] = since.strftime("%Y-%m-%dT%H:%M:%SZ")
        response = self._api(ctx).send("GET", f"{API}/tweets/search/recent", params=params)
        if response.status_code != 200:
            raise classify(response, is_create=False)
        body = response.json()
        users = {u["id"]: u for u in (body.get("includes") or {}).get("users", [])}
        return [_comment(item, users, post.provider_post_id) for item in body.get("data", [])]

    def reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment:
        payload = {"text": text, "reply": {"in_reply_to_tweet_id": comment_id}}
        response = self._api(ctx).send("POST", f"{API}/tweets", is_create=True, json=payload)
        if response.status_code != 201:
            raise classify(response, is_create=True)
        reply_id = str(response.json()["data"]["id"])
        return PublishedSegment(reply_id, f"https://x.com/{ctx.account.handle}/status/{reply_id}")

    def find_reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment | None:
        wanted = _normalize(text)
        for item in self.read_comments(ctx, post, None):
            if (
                item.author_id == ctx.account.remote_id
                and item.parent_id == comment_id
                and _normalize(item.text) == wanted
            ):
                return PublishedSegment(item.platform_id, item.url)
        return None

    def hide_comment(self, ctx: PublishContext, comment_id: str, *, hidden: bool) -> None:
        response = self._api(ctx).send(
            "PUT", f"{API}/tweets/{comment_id}/hidden", json={"hidden": hidden}
        )
        if response.status_code != 200:
            raise classify(response, is_create=False)


def _comment(item: dict, users: dict, post_id: str) -> RemoteComment:
    author = users.get(item.get("author_id", ""), {})
    parent = next(
        (r["id"] for r in item.get("referenced_tweets", []) if r.get("type") == "replied_to"),
        None,
    )
    username = author.get("username", "")
    return RemoteComment(
        platform_id=str(item["id"]),
        text=item.get("text", ""),
        created_at=datetime.fromisoformat(item["created_at"].replace("Z", "+00:00")),
        author_id=str(item.get("author_id", "")),
        author_handle=username,
        author_name=author.get("name", username),
        parent_id=None if parent == post_id else parent,
        url=f"https://x.com/{username or 'i'}/status/{item['id']}",
    )


READER = XComments()
