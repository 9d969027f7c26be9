"""The soak's replies from the inbox: once the posts are settled, a visitor comments under
some of the sandbox's published posts and the inbox replies to each, while workers are
still killed at random; then every reply is matched to the replies the sandbox holds.

A reply held more than once is a duplicate (the promise: none); one called sent that the
sandbox does not hold is lost; one the sandbox holds that is not called sent was sent
without its answer and left to a person (counted, not an error).
"""

from __future__ import annotations

import time
from collections import Counter

from apps.inbox.models import Reply
from apps.inbox.replies import reply_create
from apps.inbox.sync import store_comments, sync_start
from apps.providers.comment_reading import RemoteComment
from apps.renditions.models import Rendition
from apps.sandbox.comments import sandbox_comment_add
from apps.sandbox.models import SandboxPost

SANDBOX = "sandbox"
# Replies still on their way: the wait goes on while any is.
UNSETTLED = (Reply.Status.PENDING,)


def start_replies(rendition_ids: list[int], *, tag: str, count: int) -> list[int]:
    """A visitor's comment under up to `count` published sandbox posts, and a reply to
    each from the inbox; returns the replies' ids."""
    renditions = (
        Rendition.objects.filter(pk__in=rendition_ids, status="published", platform=SANDBOX)
        .exclude(provider_post_id="")
        .select_related("social_account")
        .order_by("pk")[:count]
    )
    reply_ids = []
    for rendition in renditions:
        post = SandboxPost.objects.select_related("account").get(pk=int(rendition.provider_post_id))
        visitor = sandbox_comment_add(post=post, handle=f"{tag}-fan", text="When do you open?")
        item = RemoteComment(
            platform_id=str(visitor.pk), text=visitor.text, created_at=visitor.created_at
        )
        (comment,) = store_comments(sync_start(rendition), [item])
        reply = reply_create(
            comment=comment,
            author=None,
            text=f"{tag} reply {rendition.pk}",
            needs_approval=False,
        )
        reply_ids.append(reply.pk)
    return reply_ids


def wait_replies(reply_ids: list[int], *, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not Reply.objects.filter(pk__in=reply_ids, status__in=UNSETTLED).exists():
            return
        time.sleep(0.5)


def reply_figures(reply_ids: list[int]) -> dict:
    """Each reply against the replies the sandbox holds under its comment, by its text."""
    replies = Reply.objects.filter(pk__in=reply_ids).select_related(
        "comment__rendition__social_account"
    )
    by_status: Counter = Counter()
    duplicates = lost = held_not_sent = 0
    for reply in replies:
        by_status[reply.status] += 1
        held = SandboxPost.objects.filter(
            reply_to_id=int(reply.comment.platform_id),
            account_id=int(reply.comment.rendition.social_account.remote_id),
            text=reply.text,
        ).count()
        duplicates += max(0, held - 1)
        if reply.status == Reply.Status.SENT and not held:
            lost += 1
        elif reply.status != Reply.Status.SENT and held:
            held_not_sent += 1
    return {
        "replies": sum(by_status.values()),
        "replies_by_status": dict(sorted(by_status.items())),
        "reply_duplicates": duplicates,
        "replies_lost": lost,
        "replies_held_not_sent": held_not_sent,
    }
