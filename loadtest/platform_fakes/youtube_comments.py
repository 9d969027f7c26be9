"""Comments under YouTube videos, as the Data API v3 serves them: `commentThreads.list`
(`videoId`; a thread is a top-level comment with up to five of its replies; newest first
with `order=time`), `commentThreads.insert` (a top-level comment, as the caller's
channel), `comments.list` (`parentId`: a thread's replies), `comments.insert` (a reply,
`snippet.parentId`) and `comments.setModerationStatus` by the video's owner (`rejected`
hides a comment from the listings). No call takes an idempotency handle.

Comments are kept apart from the videos, per video as the soak's witness reads them
(`comments`: video id -> list of {actor, message: {text}, ...}).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from loadtest.platform_fakes.base import (
    FakeRequest,
    FakeResponse,
    PlatformFake,
    json_response,
    route,
)

INLINE_REPLIES = 5
PAGE = 100


def _error(status: int, reason: str, message: str) -> FakeResponse:
    error = {"code": status, "message": message, "errors": [{"reason": reason}]}
    return json_response({"error": error}, status)


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).isoformat().replace("+00:00", "Z")


class CommentsMixin(PlatformFake):
    """The YouTube fake's comments (it provides `_channel`, `_unauthorised` and
    `_throttled`)."""

    def __init__(self, faults=None, **kwargs) -> None:
        super().__init__(faults, **kwargs)
        self.comments: dict[str, list[dict]] = {}  # video id -> its comments, oldest first
        self._comment_ids = 0

    if TYPE_CHECKING:  # what the YouTube fake provides

        def _channel(self, request: FakeRequest) -> str | None: ...

        def _unauthorised(self) -> FakeResponse: ...

        def _throttled(self) -> FakeResponse: ...

    def add_comment(self, video_id: str, name: str, text: str, parent: str | None = None) -> dict:
        """Someone else's comment (or reply to the thread `parent`) under a video."""
        return self._store_comment(video_id, f"UC{name}", name, text, parent)

    def _store_comment(
        self, video_id: str, actor: str, name: str, text: str, parent: str | None
    ) -> dict:
        with self.lock:
            self._comment_ids += 1
            number = f"Ug{self._comment_ids:08d}"
            comment = {
                "id": f"{parent}.{number}" if parent else number,
                "video": video_id,
                "actor": actor,
                "name": name,
                "message": {"text": text},
                "parent": parent,
                "published": time.time(),
                "moderation": "published",
            }
            self.comments.setdefault(video_id, []).append(comment)
        return comment

    def _find_comment(self, comment_id: str) -> dict | None:
        with self.lock:
            for comments in self.comments.values():
                for comment in comments:
                    if comment["id"] == comment_id:
                        return comment
        return None

    def _comment_json(self, comment: dict) -> dict:
        snippet = {
            "videoId": comment["video"],
            "textOriginal": comment["message"]["text"],
            "textDisplay": comment["message"]["text"],
            "authorDisplayName": f"@{comment['name']}",
            "authorChannelId": {"value": comment["actor"]},
            "publishedAt": _iso(comment["published"]),
        }
        if comment["parent"]:
            snippet["parentId"] = comment["parent"]
        return {"kind": "youtube#comment", "id": comment["id"], "snippet": snippet}

    def _shown(self, video_id: str) -> list[dict]:
        with self.lock:
            return [c for c in self.comments.get(video_id, []) if c["moderation"] == "published"]

    @route("GET", r"/youtube/v3/commentThreads")
    def comment_threads(self, request: FakeRequest) -> FakeResponse:
        if self._channel(request) is None:
            return self._unauthorised()
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        shown = self._shown(request.arg("videoId", ""))
        threads = [c for c in reversed(shown) if not c["parent"]]
        start = int(request.arg("pageToken") or 0)
        items = []
        for top in threads[start : start + PAGE]:
            replies = [c for c in shown if c["parent"] == top["id"]]
            inline = replies[:INLINE_REPLIES]
            items.append(
                {
                    "kind": "youtube#commentThread",
                    "id": top["id"],
                    "snippet": {
                        "videoId": top["video"],
                        "topLevelComment": self._comment_json(top),
                        "totalReplyCount": len(replies),
                    },
                    "replies": {"comments": [self._comment_json(r) for r in inline]},
                }
            )
        body: dict = {"kind": "youtube#commentThreadListResponse", "items": items}
        if start + PAGE < len(threads):
            body["nextPageToken"] = str(start + PAGE)
        return FakeResponse(200, body)

    @route("GET", r"/youtube/v3/comments")
    def comments_list(self, request: FakeRequest) -> FakeResponse:
        if self._channel(request) is None:
            return self._unauthorised()
        parent = self._find_comment(request.arg("parentId", ""))
        if parent is None:
            return _error(404, "commentNotFound", "The comment was not found.")
        replies = [c for c in self._shown(parent["video"]) if c["parent"] == parent["id"]]
        items = [self._comment_json(c) for c in replies]
        return FakeResponse(200, {"kind": "youtube#commentListResponse", "items": items})

    @route("POST", r"/youtube/v3/commentThreads")
    def thread_insert(self, request: FakeRequest) -> FakeResponse:
        snippet = request.json().get("snippet") or {}
        video_id = snippet.get("videoId", "")
        text = ((snippet.get("topLevelComment") or {}).get("snippet") or {}).get("textOriginal")
        return self._insert(request, video_id, text, None)

    @route("POST", r"/youtube/v3/comments")
    def comment_insert(self, request: FakeRequest) -> FakeResponse:
        snippet = request.json().get("snippet") or {}
        parent = self._find_comment(snippet.get("parentId", ""))
        if parent is None or parent["parent"]:
            return _error(404, "parentCommentNotFound", "The parent was not found.")
        return self._insert(request, parent["video"], snippet.get("textOriginal"), parent["id"])

    def _insert(
        self, request: FakeRequest, video_id: str, text: str | None, parent: str | None
    ) -> FakeResponse:
        channel = self._channel(request)
        if channel is None:
            return self._unauthorised()
        if video_id not in self.posts:
            return _error(404, "videoNotFound", "The video was not found.")
        if not text:
            return _error(400, "commentTextRequired", "The comment has no text.")
        if self.faults.strikes("rate_limit"):
            return self._throttled()
        if self.faults.strikes("server_error_before"):
            return _error(503, "backendError", "Backend Error")
        name = self.accounts[channel]["handle"]
        comment = self._store_comment(video_id, channel, name, text, parent)
        body = self._comment_json(comment)
        if not parent:
            body = {
                "kind": "youtube#commentThread",
                "id": comment["id"],
                "snippet": {"videoId": video_id, "topLevelComment": body},
            }
        if self.faults.strikes("server_error_after"):
            return _error(503, "backendError", "Backend Error")
        if self.faults.strikes("timeout_after_accept"):
            return FakeResponse(200, body, delay_s=self.faults.hang_s)
        return FakeResponse(200, body)

    @route("POST", r"/youtube/v3/comments/setModerationStatus")
    def set_moderation_status(self, request: FakeRequest) -> FakeResponse:
        channel = self._channel(request)
        if channel is None:
            return self._unauthorised()
        comment = self._find_comment(request.arg("id", ""))
        video = self.posts.get(comment["video"]) if comment else None
        if comment is None or video is None or video.account != channel:
            return _error(403, "forbidden", "The caller may not moderate this comment.")
        with self.lock:
            comment["moderation"] = request.arg("moderationStatus", "published")
        return FakeResponse(204)
