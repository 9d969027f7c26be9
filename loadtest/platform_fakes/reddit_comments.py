"""Comments on Reddit posts, as oauth.reddit.com serves them: `GET /comments/{article}`
(the post's listing, then its comment tree: each `t1` with its `replies`, a listing or
""), `POST /api/comment` (`thing_id`, `text`, `api_type=json`: a reply to a post or a
comment as the caller; no idempotency handle) and `GET /user/{name}/comments` (the
user's comments, newest first).

Comments are kept apart from the posts, per post as the soak's witness reads them
(`comments`: post fullname -> list of {actor, message: {text}, ...}).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from loadtest.platform_fakes.base import (
    FakeRequest,
    FakeResponse,
    PlatformFake,
    json_response,
    route,
)


class CommentsMixin(PlatformFake):
    """The Reddit fake's comments (it provides `_caller`, `_new_post_id` and `accounts`
    with each user's `name`)."""

    def __init__(self, faults=None, **kwargs) -> None:
        super().__init__(faults, **kwargs)
        self.comments: dict[str, list[dict]] = {}  # post fullname -> comments, oldest first

    if TYPE_CHECKING:  # what the Reddit fake provides

        def _caller(self, request: FakeRequest) -> tuple[str, dict]: ...

        def _new_post_id(self) -> str: ...

    def add_comment(self, thing_id: str, name: str, text: str) -> dict:
        """Someone else's comment under a post (t3_) or a comment (t1_)."""
        return self._store_comment(thing_id, f"user-{name}", name, text)

    def _store_comment(self, thing_id: str, actor: str, name: str, text: str) -> dict:
        post_id = thing_id if thing_id.startswith("t3_") else self._post_of(thing_id)
        comment = {
            "id": f"t1_{self._new_post_id()}",
            "post": post_id,
            "parent": thing_id,
            "actor": actor,
            "name": name,
            "message": {"text": text},
            "created": time.time(),
        }
        with self.lock:
            self.comments.setdefault(post_id, []).append(comment)
        return comment

    def _post_of(self, comment_id: str) -> str:
        with self.lock:
            for post_id, comments in self.comments.items():
                if any(c["id"] == comment_id for c in comments):
                    return post_id
        return ""

    def _thing(self, comment: dict, replies: dict | str = "") -> dict:
        short = comment["id"].removeprefix("t1_")
        article = comment["post"].removeprefix("t3_")
        return {
            "kind": "t1",
            "data": {
                "id": short,
                "name": comment["id"],
                "author": comment["name"],
                "author_fullname": f"t2_{comment['actor']}",
                "body": comment["message"]["text"],
                "created_utc": comment["created"],
                "parent_id": comment["parent"],
                "link_id": comment["post"],
                "permalink": f"/r/x/comments/{article}/_/{short}/",
                "replies": replies,
            },
        }

    def _tree(self, comments: list[dict], parent: str) -> dict:
        children = [
            self._thing(c, self._tree(comments, c["id"]) or "")
            for c in comments
            if c["parent"] == parent
        ]
        return {"kind": "Listing", "data": {"children": children}} if children else {}

    @route("GET", r"/comments/(?P<article>[0-9a-z]+)")
    def comment_tree(self, request: FakeRequest, article: str) -> FakeResponse:
        self._caller(request)
        post_id = f"t3_{article}"
        if post_id not in self.posts:
            return json_response({"message": "Not Found", "error": 404}, 404)
        with self.lock:
            comments = list(self.comments.get(post_id, []))
        tree = self._tree(comments, post_id) or {"kind": "Listing", "data": {"children": []}}
        post = {
            "kind": "Listing",
            "data": {"children": [{"kind": "t3", "data": {"name": post_id}}]},
        }
        return json_response([post, tree])

    @route("POST", r"/api/comment")
    def comment(self, request: FakeRequest) -> FakeResponse:
        user_id, account = self._caller(request)
        form = request.form()
        thing_id, text = form.get("thing_id", ""), form.get("text", "")
        if not (thing_id in self.posts or self._post_of(thing_id)) or not text:
            return json_response({"json": {"errors": [["NO_THING_ID", "not found", "parent"]]}})
        if self.faults.strikes("rate_limit"):
            return json_response({"json": {"errors": [["RATELIMIT", "take a break", "ratelimit"]]}})
        stored = self._store_comment(thing_id, user_id, account["name"], text)
        body = {"json": {"errors": [], "data": {"things": [self._thing(stored)]}}}
        if self.faults.strikes("timeout_after_accept"):
            return FakeResponse(200, body, delay_s=self.faults.hang_s)
        return json_response(body)

    @route("GET", r"/user/(?P<name>[^/]+)/comments")
    def user_comments(self, request: FakeRequest, name: str) -> FakeResponse:
        self._caller(request)
        with self.lock:
            mine = [c for cs in self.comments.values() for c in cs if c["name"] == name]
        mine.sort(key=lambda c: c["created"], reverse=True)
        children = [self._thing(c) for c in mine[: int(request.arg("limit", "25"))]]
        return json_response({"kind": "Listing", "data": {"children": children}})
