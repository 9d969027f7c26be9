"""YouTube's first comment: a top-level comment thread under the video
(`commentThreads.insert`), found again after a lost answer by listing the video's threads
(`commentThreads.list`). YouTube takes no idempotency handle for a comment, and a listing
may lag behind a new one, so the lookup is weak.

Quota: an insert costs 50 units and a listing page 1, from the project's 10,000 units a day
(the `videos.insert` calls have a bucket of their own).
"""

from __future__ import annotations

from datetime import datetime

import httpx
from django.utils import timezone

from apps.providers.base import PublishContext, PublishedSegment
from apps.providers.errors import classify_transport
from apps.providers.matching import normalize_text
from apps.providers.youtube.errors import classify_comment

COMMENT_THREADS = "https://www.googleapis.com/youtube/v3/commentThreads"
# Our comment is looked for among the video's newest threads, a few pages deep.
LIST_PAGE = 100  # the most YouTube returns a page
LIST_PAGES = 3


def comment_url(video_id: str, comment_id: str) -> str:
    return f"https://www.youtube.com/watch?v={video_id}&lc={comment_id}"


def insert(client: httpx.Client, ctx: PublishContext, video_id: str, text: str) -> PublishedSegment:
    """Comment under the video as the channel that uploaded it."""
    thread = {
        "snippet": {
            "channelId": ctx.account.remote_id,
            "videoId": video_id,
            "topLevelComment": {"snippet": {"textOriginal": text}},
        }
    }
    try:
        response = client.post(COMMENT_THREADS, params={"part": "snippet"}, json=thread)
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=True) from exc
    if response.status_code != 200:
        raise classify_comment(response, is_create=True)
    body = response.json()
    comment = (body.get("snippet") or {}).get("topLevelComment") or {}
    # A thread's id is its top-level comment's id.
    return _published(video_id, str(comment.get("id") or body["id"]), comment)


def find(
    client: httpx.Client, ctx: PublishContext, video_id: str, text: str
) -> PublishedSegment | None:
    """Our comment among the video's newest threads: written by the account's channel, with
    the same text."""
    wanted = normalize_text(text)
    params: dict = {
        "part": "snippet",
        "videoId": video_id,
        "order": "time",
        "textFormat": "plainText",
        "maxResults": LIST_PAGE,
    }
    for _ in range(LIST_PAGES):
        try:
            response = client.get(COMMENT_THREADS, params=params)
        except httpx.HTTPError as exc:
            raise classify_transport(exc, is_create=False) from exc
        if response.status_code != 200:
            raise classify_comment(response, is_create=False)
        body = response.json()
        for thread in body.get("items", []):
            comment = (thread.get("snippet") or {}).get("topLevelComment") or {}
            snippet = comment.get("snippet") or {}
            author = (snippet.get("authorChannelId") or {}).get("value")
            # textOriginal is given to the comment's author, which we are.
            said = snippet.get("textOriginal") or snippet.get("textDisplay")
            if author == ctx.account.remote_id and normalize_text(said) == wanted:
                return _published(video_id, str(comment.get("id") or thread["id"]), comment)
        token = body.get("nextPageToken")
        if not token:
            return None
        params = {**params, "pageToken": token}
    return None


def _published(video_id: str, comment_id: str, comment: dict) -> PublishedSegment:
    at = (comment.get("snippet") or {}).get("publishedAt")
    return PublishedSegment(
        provider_post_id=comment_id,
        provider_url=comment_url(video_id, comment_id),
        published_at=_parse_time(at) or timezone.now(),
    )


def _parse_time(value: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if value else None
    except ValueError:
        return None
