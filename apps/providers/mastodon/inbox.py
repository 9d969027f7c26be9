"""Mastodon's comments: the replies under a status are its context's descendants
(``GET /api/v1/statuses/:id/context``), threaded by ``in_reply_to_id``. A reply is a
status in reply to the comment (the first comment's call, keyed within the hour). The
API hides and deletes only the account's own statuses, never others' replies."""

from __future__ import annotations

from datetime import datetime

from apps.providers import httpcall
from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.comment_reading import AdapterReplies, InboxOffer, RemoteComment
from apps.providers.mastodon.adapter import _client, _html_text, _instance, _parse_time
from apps.providers.mastodon.errors import classify


class MastodonComments(AdapterReplies):
    platform = "mastodon"
    offer = InboxOffer(
        read=True,
        reply=True,
        note=(
            "Mastodon lets an account delete or hide only its own statuses; others' replies "
            "can be reported or their authors muted in the app. Replies from servers the "
            "account's server has not seen are missing until it fetches them."
        ),
    )

    def read_comments(
        self, ctx: PublishContext, post: PublishedSegment, since: datetime | None
    ) -> list[RemoteComment]:
        url = f"{_instance(ctx.account)}/api/v1/statuses/{post.provider_post_id}/context"
        with _client(ctx.credentials) as http:
            response = httpcall.send(http, "GET", url, is_create=False)
        if response.status_code != 200:
            raise classify(response, is_create=False)
        return [_comment(status) for status in response.json().get("descendants", [])]


def _comment(status: dict) -> RemoteComment:
    account = status.get("account") or {}
    return RemoteComment(
        platform_id=str(status["id"]),
        text=_html_text(status.get("content", "")),
        created_at=_parse_time(status["created_at"]),
        author_id=str(account.get("id", "")),
        author_handle=account.get("acct", ""),
        author_name=account.get("display_name") or account.get("acct", ""),
        parent_id=str(status["in_reply_to_id"]) if status.get("in_reply_to_id") else None,
        url=status.get("url") or status.get("uri") or "",
    )


READER = MastodonComments()
