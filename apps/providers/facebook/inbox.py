"""A Page post's comments (``GET /{post-id}/comments?filter=stream``: every comment and
reply, each with its parent). A reply is a comment under the comment (the first comment's
call, found again by listing: weak). The Page hides (``POST /{comment-id} is_hidden``) and
deletes (``DELETE /{comment-id}``) comments on its posts (``pages_manage_engagement``)."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.comment_reading import AdapterReplies, InboxOffer, RemoteComment
from apps.providers.meta.graph import (
    FACEBOOK_GRAPH,
    graph_call,
    graph_client,
    graph_delete,
    parse_graph_time,
)

PAGE = 100
MAX_PAGES = 5
FIELDS = "id,message,from{id,name},created_time,parent{id},permalink_url,is_hidden"


class FacebookComments(AdapterReplies):
    platform = "facebook"
    offer = InboxOffer(
        read=True,
        reply=True,
        hide=True,
        delete=True,
        note=(
            "Comment authors' names come only with the Page's pages_read_user_content "
            "permission; without it, comments arrive without their author."
        ),
    )

    def read_comments(
        self, ctx: PublishContext, post: PublishedSegment, since: datetime | None
    ) -> list[RemoteComment]:
        params: dict = {"filter": "stream", "order": "chronological", "fields": FIELDS}
        params["limit"] = PAGE
        if since is not None:
            params["since"] = int(since.timestamp())
        url = f"{FACEBOOK_GRAPH}/{post.provider_post_id}/comments"
        found: list[RemoteComment] = []
        with graph_client(ctx.credentials.get("access_token")) as client:
            for _ in range(MAX_PAGES):
                body = graph_call(client, "GET", url, params=params, is_create=False)
                found.extend(_comment(c) for c in body.get("data", []))
                after = ((body.get("paging") or {}).get("cursors") or {}).get("after")
                if not (body.get("paging") or {}).get("next") or not after:
                    break
                params = {**params, "after": after}
        return found

    def hide_comment(self, ctx: PublishContext, comment_id: str, *, hidden: bool) -> None:
        with graph_client(ctx.credentials.get("access_token")) as client:
            graph_call(
                client,
                "POST",
                f"{FACEBOOK_GRAPH}/{comment_id}",
                data={"is_hidden": "true" if hidden else "false"},
                is_create=False,
            )

    def delete_comment(self, ctx: PublishContext, comment_id: str) -> None:
        with graph_client(ctx.credentials.get("access_token")) as client:
            graph_delete(client, f"{FACEBOOK_GRAPH}/{comment_id}")


def _comment(item: dict) -> RemoteComment:
    author = item.get("from") or {}
    return RemoteComment(
        platform_id=str(item["id"]),
        text=item.get("message", ""),
        created_at=parse_graph_time(item.get("created_time")) or timezone.now(),
        author_id=str(author.get("id", "")),
        author_name=author.get("name", ""),
        parent_id=str((item.get("parent") or {}).get("id") or "") or None,
        url=item.get("permalink_url", ""),
        is_hidden=bool(item.get("is_hidden")),
    )


READER = FacebookComments()
