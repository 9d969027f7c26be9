"""An Instagram media's comments (``GET /{media-id}/comments`` with their ``replies``).
A reply is ``POST /{comment-id}/replies``; Instagram takes no idempotency handle, so a
lost answer is looked for among the comment's replies (weak). The account hides
(``POST /{comment-id}?hide=``) and deletes (``DELETE /{comment-id}``) comments on its
media."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.comment_reading import CommentReader, InboxOffer, RemoteComment
from apps.providers.instagram.connect import INSTAGRAM_GRAPH
from apps.providers.matching import normalize_text
from apps.providers.meta.graph import graph_call, graph_client, graph_delete, parse_graph_time

_ONE = "id,text,username,timestamp,hidden,from{id,username}"
FIELDS = f"{_ONE},replies{{{_ONE}}}"
PAGE = 50
MAX_PAGES = 4


class InstagramComments(CommentReader):
    platform = "instagram"
    offer = InboxOffer(
        read=True,
        reply=True,
        hide=True,
        delete=True,
        note="Comments give no permalink; the thread links to the post.",
    )
    reply_lookup_is_strong = False  # a listing of the comment's replies, which may lag

    def read_comments(
        self, ctx: PublishContext, post: PublishedSegment, since: datetime | None
    ) -> list[RemoteComment]:
        params: dict = {"fields": FIELDS, "limit": PAGE}
        url = f"{INSTAGRAM_GRAPH}/{post.provider_post_id}/comments"
        found: list[RemoteComment] = []
        with graph_client(ctx.credentials.get("access_token")) as client:
            for _ in range(MAX_PAGES):
                body = graph_call(client, "GET", url, params=params, is_create=False)
                for item in body.get("data", []):
                    found.append(_comment(item, None, post.provider_url))
                    replies = (item.get("replies") or {}).get("data", [])
                    found.extend(_comment(r, str(item["id"]), post.provider_url) for r in replies)
                after = ((body.get("paging") or {}).get("cursors") or {}).get("after")
                if not (body.get("paging") or {}).get("next") or not after:
                    break
                params = {**params, "after": after}
        return found

    def reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment:
        with graph_client(ctx.credentials.get("access_token")) as client:
            body = graph_call(
                client,
                "POST",
                f"{INSTAGRAM_GRAPH}/{comment_id}/replies",
                data={"message": text},
                is_create=True,
            )
        return PublishedSegment(provider_post_id=str(body["id"]), published_at=timezone.now())

    def find_reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment | None:
        wanted, handle = normalize_text(text), ctx.account.handle.casefold()
        with graph_client(ctx.credentials.get("access_token")) as client:
            body = graph_call(
                client,
                "GET",
                f"{INSTAGRAM_GRAPH}/{comment_id}/replies",
                params={"fields": "id,text,username,timestamp", "limit": PAGE},
                is_create=False,
            )
        for item in body.get("data", []):
            if (item.get("username") or "").casefold() == handle and (
                normalize_text(item.get("text")) == wanted
            ):
                return PublishedSegment(
                    provider_post_id=str(item["id"]),
                    published_at=parse_graph_time(item.get("timestamp")),
                )
        return None

    def hide_comment(self, ctx: PublishContext, comment_id: str, *, hidden: bool) -> None:
        with graph_client(ctx.credentials.get("access_token")) as client:
            graph_call(
                client,
                "POST",
                f"{INSTAGRAM_GRAPH}/{comment_id}",
                params={"hide": "true" if hidden else "false"},
                is_create=False,
            )

    def delete_comment(self, ctx: PublishContext, comment_id: str) -> None:
        with graph_client(ctx.credentials.get("access_token")) as client:
            graph_delete(client, f"{INSTAGRAM_GRAPH}/{comment_id}")


def _comment(item: dict, parent: str | None, post_url: str) -> RemoteComment:
    author = item.get("from") or {}
    return RemoteComment(
        platform_id=str(item["id"]),
        text=item.get("text", ""),
        created_at=parse_graph_time(item.get("timestamp")) or timezone.now(),
        author_id=str(author.get("id", "")),
        author_handle=item.get("username") or author.get("username", ""),
        author_name=item.get("username", ""),
        parent_id=parent,
        url=post_url,
        is_hidden=bool(item.get("hidden")),
    )


READER = InstagramComments()
