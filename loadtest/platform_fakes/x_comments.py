"""Replies to an account's posts on X, as the inbox reads them (docs.x.com: search/recent,
hide replies). A reply is a post like any other (`POST /2/tweets` with
`reply.in_reply_to_tweet_id`, no idempotency handle); `GET /2/tweets/search/recent
?query=conversation_id:{id}` finds every post of the conversation under its first post
(not that post itself), newest first, over the last 7 days, with `author_id`,
`created_at`, `referenced_tweets` and `conversation_id` when asked and the authors under
`includes.users`; a new post may show in the search only after a while (`listing_lag`).
The author of the conversation hides a reply with `PUT /2/tweets/{id}/hidden`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from loadtest.platform_fakes.base import (
    FakeRequest,
    FakeResponse,
    PlatformFake,
    StoredPost,
    json_response,
    route,
)

SEARCH_WINDOW_S = 7 * 86400
_CONVERSATION = re.compile(r"^conversation_id:(\d+)$")


class CommentsMixin(PlatformFake):
    """The X fake's replies from others, and the search and hiding the inbox uses."""

    if TYPE_CHECKING:  # provided by XFake
        clock: Callable[[], float]

        def _gate(
            self, request: FakeRequest, endpoint: str, *, fault: str = "rate_limit"
        ) -> tuple[str, dict[str, str], FakeResponse | None]: ...
        def _post_json(self, post: StoredPost, fields: set[str]) -> dict: ...
        def new_account(self, handle: str) -> dict: ...

    def add_comment(self, post_id: str, handle: str, text: str) -> StoredPost:
        """Someone else's reply to a post (ours, or a reply under it)."""
        from loadtest.platform_fakes.x import snowflake

        visitor = self.new_account(handle)["remote_id"]
        now = self.clock()
        post = StoredPost(
            id=snowflake(now),
            account=visitor,
            text=text,
            created_at=now,
            visible_at=now,
            reply_to=post_id,
        )
        return self.store(post)

    def conversation_of(self, post: StoredPost) -> str:
        """The id of the first post of the thread the post belongs to."""
        with self.lock:
            seen = post
            while seen.reply_to and seen.reply_to in self.posts:
                seen = self.posts[seen.reply_to]
            return seen.reply_to or seen.id

    @route("GET", r"/2/tweets/search/recent")
    def search_recent(self, request: FakeRequest) -> FakeResponse:
        from loadtest.platform_fakes.x import _parse_time, invalid

        user, headers, refused = self._gate(request, "search", fault="poll_rate_limit")
        if refused:
            return refused
        match = _CONVERSATION.match(request.arg("query", "").strip())
        try:
            limit = int(request.arg("max_results", "10"))
            start = _parse_time(request.arg("start_time"))
        except ValueError:
            return json_response(invalid("Invalid query parameter."), 400, **headers)
        if match is None or not 10 <= limit <= 100:
            refusal = invalid("This fake searches by conversation_id:{id} only, 10 to 100 results.")
            return json_response(refusal, 400, **headers)
        root, now = match.group(1), self.clock()
        oldest = max(start or 0.0, now - SEARCH_WINDOW_S)
        with self.lock:
            found = [
                p
                for p in self.posts.values()
                if p.reply_to
                and p.state != "failed"
                and p.visible_at <= now
                and p.created_at >= oldest
                and self.conversation_of(p) == root
            ]
        found.sort(key=lambda p: int(p.id), reverse=True)
        if not found:
            return json_response({"meta": {"result_count": 0}}, **headers)
        fields = set((request.arg("tweet.fields") or "").split(",")) | {"author_id"}
        data = []
        for post in found[:limit]:
            item = self._post_json(post, fields)
            item["conversation_id"] = root
            item["referenced_tweets"] = [{"type": "replied_to", "id": post.reply_to}]
            data.append(item)
        users = {p.account for p in found[:limit]}
        body: dict = {
            "data": data,
            "meta": {"result_count": len(data), "newest_id": data[0]["id"]},
        }
        if "author_id" in (request.arg("expansions") or ""):
            body["includes"] = {"users": [self._user_json(u) for u in sorted(users)]}
        return json_response(body, **headers)

    def _user_json(self, user: str) -> dict:
        account = self.accounts.get(user, {})
        return {"id": user, "username": account.get("handle", ""), "name": account.get("name", "")}

    @route("PUT", r"/2/tweets/(?P<post_id>\d+)/hidden")
    def hide_reply(self, request: FakeRequest, post_id: str) -> FakeResponse:
        """Only the author of the conversation's first post may hide a reply in it."""
        from loadtest.platform_fakes.x import not_found, problem

        user, headers, refused = self._gate(request, "hide")
        if refused:
            return refused
        with self.lock:
            post = self.posts.get(post_id)
            root = self.posts.get(self.conversation_of(post)) if post else None
            if post is None or not post.reply_to:
                return json_response(not_found("tweet", post_id), **headers)
            if root is None or root.account != user:
                detail = "You are not allowed to hide replies to this conversation."
                return json_response(problem(403, "Forbidden", detail), 403, **headers)
            post.extra["hidden"] = bool(request.json().get("hidden"))
        return json_response({"data": {"hidden": post.extra["hidden"]}}, **headers)
