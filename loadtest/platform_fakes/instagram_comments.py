"""Comments on an account's own Instagram media, as the Instagram Graph API serves them
(instagram-platform/reference/ig-media/comments, ig-comment): `POST /{ig-media-id}/comments`
(`message`) comments as the account, `GET /{ig-media-id}/comments` lists the media's
top-level comments, each with `username`, `text`, `timestamp` and, when asked for, its
`replies`. A comment takes no idempotency handle (a resend is a second comment), and a new
one may show in the listing only after a while (`listing_lag`).
"""

from __future__ import annotations

import time

from loadtest.platform_fakes import multipart
from loadtest.platform_fakes.base import FakeRequest, FakeResponse, route
from loadtest.platform_fakes.meta import VERSION, MetaGraphFake, graph_id, graph_time

PAGE = 25
MAX_TEXT = 2200  # a comment is at most 2,200 characters, like a caption


class CommentsMixin(MetaGraphFake):
    """The Instagram fake's comments: they live beside the media, never counted as posts."""

    def __init__(self, faults=None) -> None:
        super().__init__(faults)
        self.comments: dict[str, dict] = {}  # comment id -> the comment

    def add_comment(self, media_id: str, username: str, text: str, parent: str | None = None):
        """Someone else's comment (or reply, under `parent`) on a media of ours."""
        return self._comment(media_id, {"id": graph_id(), "username": username}, text, parent)

    def comments_on(self, media_id: str) -> list[dict]:
        """Every comment stored on the media, listed or not yet (the witness of duplicates)."""
        with self.lock:
            return [c for c in self.comments.values() if c["media"] == media_id]

    def _comment(self, media_id: str, author: dict, text: str, parent: str | None) -> dict:
        now = time.time()
        lag = self.faults.listing_lag_s if self.faults.strikes("listing_lag") else 0.0
        comment_id = graph_id()
        comment: dict = {
            "id": comment_id,
            "media": media_id,
            "parent": parent,
            "from": author,
            "message": text,  # the key the soak's witness reads (as on Facebook's fake)
            "created_time": now,
            "visible_at": now + lag,
            "hidden": False,
        }
        with self.lock:
            self.comments[comment_id] = comment
        return comment

    def _comment_json(self, comment: dict, with_replies: bool) -> dict:
        body = {
            "id": comment["id"],
            "text": comment["message"],
            "username": comment["from"]["username"],
            "from": dict(comment["from"]),
            "timestamp": graph_time(comment["created_time"]),
            "hidden": comment["hidden"],
        }
        if with_replies:
            replies = [c for c in self._listed(comment["media"]) if c["parent"] == comment["id"]]
            body["replies"] = {"data": [self._comment_json(r, False) for r in replies]}
        return body

    def _listed(self, media_id: str) -> list[dict]:
        now = time.time()
        with self.lock:
            found = [
                c
                for c in self.comments.values()
                if c["media"] == media_id and c["visible_at"] <= now
            ]
        return sorted(found, key=lambda c: c["created_time"], reverse=True)  # newest first

    def _own_media(self, media_id: str, account: str) -> bool:
        post = self.posts.get(media_id)
        return post is not None and post.account == account

    @route("GET", VERSION + r"/(?P<media>\d+)/comments")
    def list_comments(self, request: FakeRequest, media: str) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if not self._own_media(media, account):
            return self.error(100, "Unsupported get request.", subcode=33)
        if self.faults.strikes("poll_rate_limit"):
            return self.throttled(account)
        with_replies = "replies" in (request.arg("fields") or "")
        top = [c for c in self._listed(media) if c["parent"] is None]
        start = int(request.arg("after") or 0)
        size = min(int(request.arg("limit") or PAGE), 50)
        body: dict = {
            "data": [self._comment_json(c, with_replies) for c in top[start : start + size]]
        }
        if start + size < len(top):
            after = str(start + size)
            body["paging"] = {"cursors": {"after": after}, "next": f"?after={after}"}
        return self.ok(body, account=account)

    @route("POST", VERSION + r"/(?P<media>\d+)/comments")
    def create_comment(self, request: FakeRequest, media: str) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if not self._own_media(media, account):
            return self.error(100, "Unsupported post request.", subcode=33)
        message = multipart.params(request).get("message", "")
        if not message or len(message) > MAX_TEXT:
            return self.error(100, "The parameter message is required (up to 2,200 characters)")
        if fault := self.write_fault(account):
            return fault
        author = {"id": account, "username": self.accounts[account]["handle"]}
        comment = self._comment(media, author, message, None)
        return self.after_store(self.ok({"id": comment["id"]}, account=account))

    # --- replies and moderation (the inbox) --------------------------------------------

    def _on_own_media(self, comment_id: str, account: str) -> dict | None:
        comment = self.comments.get(comment_id)
        if comment is None or not self._own_media(comment["media"], account):
            return None
        return comment

    @route("GET", VERSION + r"/(?P<comment>\d+)/replies")
    def list_replies(self, request: FakeRequest, comment: str) -> FakeResponse:
        """`GET /{ig-comment-id}/replies`: the comment's replies, newest first."""
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        parent = self._on_own_media(comment, account)
        if parent is None:
            return self.error(100, "Unsupported get request.", subcode=33)
        replies = [c for c in self._listed(parent["media"]) if c["parent"] == comment]
        return self.ok({"data": [self._comment_json(r, False) for r in replies]}, account=account)

    @route("POST", VERSION + r"/(?P<comment>\d+)/replies")
    def create_reply(self, request: FakeRequest, comment: str) -> FakeResponse:
        """`POST /{ig-comment-id}/replies` (`message`): a reply as the account, on its own
        media; no idempotency handle."""
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        parent = self._on_own_media(comment, account)
        if parent is None:
            return self.error(100, "Unsupported post request.", subcode=33)
        message = multipart.params(request).get("message", "")
        if not message or len(message) > MAX_TEXT:
            return self.error(100, "The parameter message is required (up to 2,200 characters)")
        if fault := self.write_fault(account):
            return fault
        author = {"id": account, "username": self.accounts[account]["handle"]}
        reply = self._comment(parent["media"], author, message, comment)
        return self.after_store(self.ok({"id": reply["id"]}, account=account))

    @route("POST", VERSION + r"/(?P<comment>\d+)")
    def hide_comment(self, request: FakeRequest, comment: str) -> FakeResponse:
        """`POST /{ig-comment-id}?hide=true|false` on the account's own media."""
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        found = self._on_own_media(comment, account)
        if found is None:
            return self.error(100, "Unsupported post request.", subcode=33)
        with self.lock:
            found["hidden"] = multipart.params(request).get("hide") == "true"
        return self.ok({"success": True}, account=account)
