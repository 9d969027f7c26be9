"""A video's comments: ``commentThreads.list`` (top-level comments with up to five of their
replies each, 1 quota unit a page) and ``comments.list?parentId=`` for threads with more.
A reply is ``comments.insert`` with the thread's ``parentId`` (50 units; no idempotency
handle, so a lost answer is looked for among the thread's replies: weak). The channel
hides a comment under its video with ``comments.setModerationStatus`` (rejected) and
deletes only its own comments."""

from __future__ import annotations

from datetime import datetime

import httpx
from django.conf import settings
from django.utils import timezone

from apps.providers import httpcall
from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.comment_reading import CommentReader, InboxOffer, RemoteComment
from apps.providers.matching import normalize_text
from apps.providers.youtube.comments import COMMENT_THREADS, comment_url
from apps.providers.youtube.errors import classify_comment

COMMENTS = "https://www.googleapis.com/youtube/v3/comments"
PAGE = 100
MAX_PAGES = 3
INLINE_REPLIES = 5  # commentThreads gives at most this many replies of a thread


class YouTubeComments(CommentReader):
    platform = "youtube"
    offer = InboxOffer(
        read=True,
        reply=True,
        hide=True,
        note=(
            "Each read costs quota units from the project's 10,000 a day (a reply 50). "
            "The channel deletes only its own comments; others' can be hidden (rejected). "
            "Comments held for review are not listed."
        ),
    )
    reply_lookup_is_strong = False

    def read_comments(
        self, ctx: PublishContext, post: PublishedSegment, since: datetime | None
    ) -> list[RemoteComment]:
        video = post.provider_post_id
        params: dict = {
            "part": "snippet,replies",
            "videoId": video,
            "order": "time",
            "textFormat": "plainText",
            "maxResults": PAGE,
        }
        found: list[RemoteComment] = []
        with _client(ctx) as client:
            for _ in range(MAX_PAGES):
                body = _get(client, COMMENT_THREADS, params)
                for thread in body.get("items", []):
                    top = (thread.get("snippet") or {}).get("topLevelComment") or {}
                    found.append(_comment(video, top, None))
                    replies = (thread.get("replies") or {}).get("comments", [])
                    if thread["snippet"].get("totalReplyCount", 0) > INLINE_REPLIES:
                        replies = _replies(client, str(top["id"]))
                    found.extend(_comment(video, r, str(top["id"])) for r in replies)
                token = body.get("nextPageToken")
                if not token:
                    break
                params = {**params, "pageToken": token}
        return found

    def reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment:
        thread = comment_id.split(".", 1)[0]  # a reply's id is "<thread id>.<reply id>"
        body_in = {"snippet": {"parentId": thread, "textOriginal": text}}
        with _client(ctx) as client:
            response = httpcall.send(
                client, "POST", COMMENTS, is_create=True, params={"part": "snippet"}, json=body_in
            )
        if response.status_code != 200:
            raise classify_comment(response, is_create=True)
        body = response.json()
        return PublishedSegment(
            provider_post_id=str(body["id"]),
            provider_url=comment_url(post.provider_post_id, str(body["id"])),
            published_at=timezone.now(),
        )

    def find_reply(
        self, ctx: PublishContext, post: PublishedSegment, comment_id: str, text: str, *, key: str
    ) -> PublishedSegment | None:
        wanted = normalize_text(text)
        with _client(ctx) as client:
            replies = _replies(client, comment_id.split(".", 1)[0])
        for item in replies:
            snippet = item.get("snippet") or {}
            author = (snippet.get("authorChannelId") or {}).get("value")
            said = snippet.get("textOriginal") or snippet.get("textDisplay")
            if author == ctx.account.remote_id and normalize_text(said) == wanted:
                return PublishedSegment(
                    provider_post_id=str(item["id"]),
                    provider_url=comment_url(post.provider_post_id, str(item["id"])),
                )
        return None

    def hide_comment(self, ctx: PublishContext, comment_id: str, *, hidden: bool) -> None:
        status = "rejected" if hidden else "published"
        with _client(ctx) as client:
            response = httpcall.send(
                client,
                "POST",
                f"{COMMENTS}/setModerationStatus",
                is_create=False,
                params={"id": comment_id, "moderationStatus": status},
            )
        if response.status_code not in (200, 204):
            raise classify_comment(response, is_create=False)


def _client(ctx: PublishContext) -> httpx.Client:
    return httpcall.client(
        headers={"Authorization": f"Bearer {ctx.credentials.get('access_token', '')}"},
        timeout=settings.PROVIDER_TIMEOUT_S,
    )


def _get(client: httpx.Client, url: str, params: dict) -> dict:
    response = httpcall.send(client, "GET", url, is_create=False, params=params)
    if response.status_code != 200:
        raise classify_comment(response, is_create=False)
    return response.json()


def _replies(client: httpx.Client, thread_id: str) -> list[dict]:
    params = {"part": "snippet", "parentId": thread_id, "maxResults": PAGE}
    return _get(client, COMMENTS, {**params, "textFormat": "plainText"}).get("items", [])


def _comment(video: str, item: dict, parent: str | None) -> RemoteComment:
    snippet = item.get("snippet") or {}
    published = snippet.get("publishedAt")
    return RemoteComment(
        platform_id=str(item["id"]),
        text=snippet.get("textOriginal") or snippet.get("textDisplay") or "",
        created_at=(
            datetime.fromisoformat(published.replace("Z", "+00:00"))
            if published
            else timezone.now()
        ),
        author_id=(snippet.get("authorChannelId") or {}).get("value", ""),
        author_name=snippet.get("authorDisplayName", ""),
        author_handle=snippet.get("authorDisplayName", "").lstrip("@"),
        parent_id=parent,
        url=comment_url(video, str(item["id"])),
    )


READER = YouTubeComments()
