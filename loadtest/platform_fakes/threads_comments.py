"""Replies under an account's Threads posts, as the inbox reads them (threads/reply-management):
`GET /{threads-media-id}/conversation` lists every reply at any depth, each naming the post
it replies to (`replied_to`), chronological when `reverse=false` (newest first otherwise),
paged by `after`; `POST /{reply-id}/manage_reply` (`hide`) hides or shows a reply to the
account's own post. A reply is a post like any other, made by a container with
`reply_to_id` and published (no idempotency handle); a new one may show only after a while
(`listing_lag`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loadtest.platform_fakes import multipart
from loadtest.platform_fakes.base import FakeRequest, FakeResponse, StoredPost, route
from loadtest.platform_fakes.meta import VERSION, MetaGraphFake, graph_id

PAGE = 25


class CommentsMixin(MetaGraphFake):
    """The Threads fake's replies from others, the conversation read and hiding."""

    if TYPE_CHECKING:  # provided by ThreadsFake

        def _item(self, post: StoredPost) -> dict: ...

    def add_comment(self, post_id: str, handle: str, text: str) -> StoredPost:
        """Someone else's reply to a post (ours, or a reply under it)."""
        visitor = self.new_account(handle)["remote_id"]
        now = self.clock()
        return self.store(
            StoredPost(id=graph_id(), account=visitor, text=text, created_at=now, reply_to=post_id)
        )

    def root_of(self, post: StoredPost) -> str:
        with self.lock:
            seen = post
            while seen.reply_to and seen.reply_to in self.posts:
                seen = self.posts[seen.reply_to]
            return seen.reply_to or seen.id

    @route("GET", VERSION + r"/(?P<obj>\d+)/conversation")
    def conversation(self, request: FakeRequest, obj: str) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        root = self.posts.get(obj)
        if root is None or root.account != account:
            return self.error(100, "Unsupported get request.", subcode=33)
        if self.faults.strikes("poll_rate_limit"):
            return self.throttled(account)
        now = self.clock()
        with self.lock:
            found = [
                p
                for p in self.posts.values()
                if p.reply_to and p.visible_at <= now and self.root_of(p) == obj
            ]
        found.sort(key=lambda p: p.created_at, reverse=request.arg("reverse", "true") != "false")
        start = int(request.arg("after") or 0)
        size = min(int(request.arg("limit") or PAGE), 100)
        body: dict = {"data": [self._reply_json(p) for p in found[start : start + size]]}
        if start + size < len(found):
            after = str(start + size)
            body["paging"] = {"cursors": {"after": after}, "next": f"?after={after}"}
        return self.ok(body, account=account)

    def _reply_json(self, post: StoredPost) -> dict:
        item = self._item(post)
        item["username"] = self.accounts.get(post.account, {}).get("handle", "")
        item["hide_status"] = "HIDDEN" if post.extra.get("hidden") else "NOT_HUSHED"
        return item

    @route("POST", VERSION + r"/(?P<reply>\d+)/manage_reply")
    def manage_reply(self, request: FakeRequest, reply: str) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        with self.lock:
            post = self.posts.get(reply)
            root = self.posts.get(self.root_of(post)) if post and post.reply_to else None
            if post is None or root is None or root.account != account:
                return self.error(100, "Unsupported post request.", subcode=33)
            post.extra["hidden"] = multipart.params(request).get("hide") == "true"
        return self.ok({"success": True}, account=account)
