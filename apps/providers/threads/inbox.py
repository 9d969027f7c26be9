"""Replies under a Threads post: ``GET /{media-id}/conversation`` (every reply at any depth,
each naming the post it replies to), with ``threads_read_replies``. The author hides a
reply with ``POST /{reply-id}/manage_reply`` (``threads_manage_replies``).

A reply from the inbox takes two steps: a text container with ``reply_to_id`` (nothing is
public yet, so a container whose answer is lost is harmless and simply made again), then
``threads_publish`` with its ``creation_id``, the one irreversible call. Neither takes an
idempotency handle: a publish without an answer is looked for in the post's conversation
(a reply by the account under the comment, with the same words; weak, as the listing may
lag)."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.comment_reading import CommentRead, CommentReader, InboxOffer, RemoteComment
from apps.providers.meta.graph import graph_call, graph_client, parse_graph_time
from apps.providers.threads.connect import THREADS_GRAPH

FIELDS = "id,text,username,timestamp,permalink,replied_to,hide_status"
MAX_PAGES = 4


class ThreadsComments(CommentReader):
    platform = "threads"
    offer = InboxOffer(
        read=True,
        reply=True,
        hide=True,
        note=(
            "Needs the threads_read_replies and threads_manage_replies permissions. "
            "Others' replies can be hidden, not deleted."
        ),
    )
    reply_lookup_is_strong = False

    def read_comments(
        self, ctx: PublishContext, post: PublishedSegment, since: datetime | None
    ) -> list[RemoteComment]:
        params: dict = {"fields": FIELDS, "reverse": "false"}
        url = f"{THREADS_GRAPH}/{post.provider_post_id}/conversation"
        found = CommentRead()
        with graph_client(ctx.credentials.get("access_token")) as client:
            for _ in range(MAX_PAGES):
                body = graph_call(client, "GET", url, params=params, is_create=False)
                found.extend(_comment(item, post.provider_post_id) for item in body["data"])
                after = ((body.get("paging") or {}).get("cursors") or {}).get("after")
                if not (body.get("paging") or {}).get("next") or not after:
                    found.complete = True  # the last page: every reply the post has
                    break
                params = {**params, "after": after}
        return found

    def reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment:
        user = f"{THREADS_GRAPH}/{ctx.account.remote_id}"
        params = {"media_type": "TEXT", "text": text, "reply_to_id": comment_id}
        with graph_client(ctx.credentials.get("access_token")) as client:
            # An unpublished container is never shown: a lost answer here may be retried.
            container = graph_call(client, "POST", f"{user}/threads", data=params, is_create=False)
            published = graph_call(
                client,
                "POST",
                f"{user}/threads_publish",
                data={"creation_id": str(container["id"])},
                is_create=True,
            )
        # No read of the permalink here: a failing read must not pass for a failed send.
        return PublishedSegment(str(published["id"]))

    def find_reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment | None:
        wanted = " ".join(text.split())
        for item in self.read_comments(ctx, post, None):
            if (
                item.author_handle == ctx.account.handle
                and item.parent_id == comment_id
                and " ".join(item.text.split()) == wanted
            ):
                return PublishedSegment(item.platform_id, item.url)
        return None

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
