"""A Reddit post's comments (``GET /comments/{article}``: the tree, newest first). A reply
is ``POST /api/comment`` with the comment's fullname; Reddit takes no idempotency handle,
so a lost answer is looked for among the account's own newest comments (weak). Deleting
or removing others' comments needs a moderator of the subreddit: not offered."""

from __future__ import annotations

from datetime import UTC, datetime

from apps.providers import httpcall
from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.comment_reading import CommentReader, InboxOffer, RemoteComment
from apps.providers.matching import normalize_text
from apps.providers.reddit import api
from apps.providers.reddit.errors import classify

LIMIT = 500


class RedditComments(CommentReader):
    platform = "reddit"
    offer = InboxOffer(
        read=True,
        reply=True,
        note=(
            "Removing others' comments needs the account to moderate the subreddit; "
            'collapsed "more comments" beyond the first 500 are not read.'
        ),
    )
    reply_lookup_is_strong = False

    def read_comments(
        self, ctx: PublishContext, post: PublishedSegment, since: datetime | None
    ) -> list[RemoteComment]:
        article = post.provider_post_id.removeprefix("t3_")
        with api.client(ctx.credentials) as http:
            # The answer is a list (the post's listing, then its comments'), not an object.
            response = httpcall.send(
                http,
                "GET",
                f"{api.API}/comments/{article}",
                is_create=False,
                params={"sort": "new", "limit": LIMIT, "raw_json": 1},
            )
        if response.status_code != 200:
            raise classify(response, is_create=False)
        listings = response.json()
        found: list[RemoteComment] = []
        if isinstance(listings, list) and len(listings) > 1:
            _walk(listings[1], found)
        return found

    def reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment:
        with api.client(ctx.credentials) as http:
            body = api.call(
                http,
                "POST",
                f"{api.API}/api/comment",
                is_create=True,
                data={"thing_id": _fullname(comment_id), "text": text, "api_type": "json"},
            )
        thing = (((body.get("json") or {}).get("data") or {}).get("things") or [{}])[0]
        data = thing.get("data") or {}
        return PublishedSegment(
            provider_post_id=str(data.get("name") or data.get("id")),
            provider_url=f"https://www.reddit.com{data.get('permalink', '')}",
        )

    def find_reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment | None:
        wanted, parent = normalize_text(text), _fullname(comment_id)
        with api.client(ctx.credentials) as http:
            body = api.call(
                http,
                "GET",
                f"{api.API}/user/{ctx.account.handle}/comments",
                is_create=False,
                params={"sort": "new", "limit": 100, "raw_json": 1},
            )
        for child in (body.get("data") or {}).get("children", []):
            data = child.get("data") or {}
            if data.get("parent_id") == parent and normalize_text(data.get("body")) == wanted:
                return PublishedSegment(
                    provider_post_id=str(data["name"]),
                    provider_url=f"https://www.reddit.com{data.get('permalink', '')}",
                )
        return None


def _fullname(comment_id: str) -> str:
    return comment_id if comment_id.startswith("t1_") else f"t1_{comment_id}"


def _walk(listing: dict, found: list[RemoteComment]) -> None:
    for child in (listing.get("data") or {}).get("children", []):
        if child.get("kind") != "t1":
            continue  # "more": collapsed comments, not read
        data = child["data"]
        parent = data.get("parent_id", "")
        found.append(
            RemoteComment(
                platform_id=data["name"],
                text=data.get("body", ""),
                created_at=datetime.fromtimestamp(float(data.get("created_utc", 0)), UTC),
                author_handle=data.get("author", ""),
                author_name=data.get("author", ""),
                author_id=data.get("author_fullname", ""),
                parent_id=parent if parent.startswith("t1_") else None,
                url=f"https://www.reddit.com{data.get('permalink', '')}",
            )
        )
        replies = data.get("replies")
        if isinstance(replies, dict):
            _walk(replies, found)


READER = RedditComments()
