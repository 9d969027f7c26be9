"""Bluesky's comments: the post's thread (``app.bsky.feed.getPostThread``), replies at any
depth. A reply names the thread's root (our post) and its parent (the comment), and is
written under a record key derived from its key, so a lookup by that key is exact. Others'
replies cannot be deleted; hiding them (a threadgate's hidden replies) is not built."""

from __future__ import annotations

from datetime import UTC, datetime

from apps.providers.base import PublishContext, PublishedSegment, get_adapter
from apps.providers.bluesky.adapter import (
    BlueskyAdapter,
    _comment_rkeys,
    _KeyTaken,
    _text_record,
    _Xrpc,
)
from apps.providers.bluesky.errors import classify
from apps.providers.comment_reading import CommentReader, InboxOffer, RemoteComment
from apps.providers.errors import ErrorKind, ProviderError

THREAD_DEPTH = 10  # replies deeper than this are not returned by one call


class BlueskyComments(CommentReader):
    platform = "bluesky"
    offer = InboxOffer(
        read=True,
        reply=True,
        note=(
            "Bluesky lets an account delete only its own records; others' replies can be "
            "hidden with a threadgate, which the inbox does not set. Replies deeper than "
            f"{THREAD_DEPTH} levels are not read."
        ),
    )
    reply_lookup_is_strong = True  # the reply's record key is derived from its key

    @staticmethod
    def _adapter() -> BlueskyAdapter:
        adapter = get_adapter("bluesky")
        assert isinstance(adapter, BlueskyAdapter)
        return adapter

    def read_comments(
        self, ctx: PublishContext, post: PublishedSegment, since: datetime | None
    ) -> list[RemoteComment]:
        response = _Xrpc(ctx).call(
            "GET",
            "app.bsky.feed.getPostThread",
            is_create=False,
            params={"uri": post.provider_post_id, "depth": THREAD_DEPTH, "parentHeight": 0},
        )
        if response.status_code != 200:
            raise classify(response, is_create=False)
        found: list[RemoteComment] = []
        _walk(response.json().get("thread") or {}, found)
        return found

    def reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment:
        xrpc = _Xrpc(ctx)
        created_at = datetime.now(UTC)
        record = _text_record(ctx, xrpc, text, created_at)
        record["reply"] = {
            "root": xrpc.strong_ref(post.provider_post_id),
            "parent": xrpc.strong_ref(comment_id),
        }
        for rkey in _comment_rkeys(ctx, key):
            try:
                return self._adapter()._create(xrpc, rkey, record, created_at)
            except _KeyTaken:
                continue  # our create never landed under it: the fallback is as safe
        raise ProviderError(
            ErrorKind.UNKNOWN,
            "Bluesky holds other posts under this reply's record keys.",
            code="rkey_taken",
        )

    def find_reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment | None:
        return self._adapter().find_comment(ctx, post, text, key=key)


def _walk(node: dict, found: list[RemoteComment]) -> None:
    """Each reply of a thread view, depth first; blocked or missing posts are skipped."""
    for child in node.get("replies") or []:
        post = child.get("post")
        if not post:
            continue
        record = post.get("record") or {}
        author = post.get("author") or {}
        parent = ((record.get("reply") or {}).get("parent") or {}).get("uri")
        handle = author.get("handle", "")
        found.append(
            RemoteComment(
                platform_id=post["uri"],
                text=record.get("text", ""),
                created_at=datetime.fromisoformat(
                    (record.get("createdAt") or post["indexedAt"]).replace("Z", "+00:00")
                ),
                author_id=author.get("did", ""),
                author_handle=handle,
                author_name=author.get("displayName") or handle,
                parent_id=parent,
                url=f"https://bsky.app/profile/{handle}/post/{post['uri'].rsplit('/', 1)[-1]}",
            )
        )
        _walk(child, found)


READER = BlueskyComments()
