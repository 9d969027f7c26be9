"""Replies under a Threads post: ``GET /{media-id}/conversation`` (every reply at any depth,
each naming the post it replies to), with ``threads_read_replies``. The author hides a
reply with ``POST /{reply-id}/manage_reply`` (``threads_manage_replies``). Replying from
the inbox is not built: a reply is a container published in two steps."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.comment_reading import CommentReader, InboxOffer, RemoteComment
from apps.providers.meta.graph import graph_call, graph_client, parse_graph_time
from apps.providers.threads.connect import THREADS_GRAPH

FIELDS = "id,text,username,timestamp,permalink,replied_to,hide_status"
MAX_PAGES = 4


class ThreadsComments(CommentReader):
    platform = "threads"
    offer = InboxOffer(
        read=True,
        hide=True,
        note=(
            "Needs the threads_read_replies and threads_manage_replies permissions. "
            "Replying from the inbox is not built yet; others' replies can be hidden, "
            "not deleted."
        ),
    )

    def read_comments(
        self, ctx: PublishContext, post: PublishedSegment, since: datetime | None
    ) -> list[RemoteComment]:
        params: dict = {"fields": FIELDS, "reverse": "false"}
        url = f"{THREADS_GRAPH}/{post.provider_post_id}/conversation"
        found: list[RemoteComment] = []
        with graph_client(ctx.credentials.get("access_token")) as client:
            for _ in range(MAX_PAGES):
                body = graph_call(client, "GET", url, params=params, is_create=False)
                found.extend(_comment(item, post.provider_post_id) for item in body["data"])
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
                f"{THREADS_GRAPH}/{comment_id}/manage_reply",
                data={"hide": "true" if hidden else "false"},
                is_create=False,
            )


def _comment(item: dict, post_id: str) -> RemoteComment:
    parent = str((item.get("replied_to") or {}).get("id") or "")
    return RemoteComment(
        platform_id=str(item["id"]),
        text=item.get("text", ""),
        created_at=parse_graph_time(item.get("timestamp")) or timezone.now(),
        author_handle=item.get("username", ""),
        author_name=item.get("username", ""),
        parent_id=None if parent in ("", post_id) else parent,
        url=item.get("permalink", ""),
        is_hidden=item.get("hide_status") in ("HIDDEN", "COVERED"),
    )


READER = ThreadsComments()
