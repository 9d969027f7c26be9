"""Comments on a Facebook Page's posts, as the Graph API serves them (graph-api/reference/
object/comments, /comment): `GET /{object-id}/comments` (`filter=stream`: every comment
under the object at any depth, each with its `parent`; `toplevel`, the default: the direct
ones), `POST /{object-id}/comments` (`message`) as the Page, `POST /{comment-id}`
(`is_hidden`) and `DELETE /{comment-id}` by the Page that owns the post. The object is a
feed post (`{page-id}_{post-id}`) or a video, whose id is the video's own (graph-api/
reference/video/comments: the same edge). A listing pages by `limit` (25 unless asked,
at most 100) with an `after` cursor. Like every Graph write, a comment takes no
idempotency handle: a resend is a second comment.
"""

from __future__ import annotations

import time

from loadtest.platform_fakes.base import FakeRequest, FakeResponse, route
from loadtest.platform_fakes.meta import VERSION, MetaGraphFake, graph_id, graph_time

PAGE = 25
MAX_PAGE = 100
# A post (`{page-id}_{post-id}`) or a video (its own id) takes comments on the same edge.
COMMENTED = r"(?P<obj>\d+(?:_\d+)?)"


class CommentsMixin(MetaGraphFake):
    """The Facebook fake's comments: they live beside the posts, so they never count as the
    Page's posts."""

    def __init__(self, faults=None) -> None:
        super().__init__(faults)
        self.comments: dict[str, dict] = {}  # comment id -> the comment

    def add_comment(self, object_id: str, name: str, text: str) -> dict:
        """Someone else's comment under a post or a comment (what the inbox reads)."""
        return self._comment(object_id, {"id": graph_id(), "name": name}, text)

    def _comment(self, object_id: str, author: dict, text: str) -> dict:
        post_id = self.comments[object_id]["post"] if object_id in self.comments else object_id
        comment_id = f"{post_id.split('_')[-1]}_{graph_id()}"
        comment = {
            "id": comment_id,
            "post": post_id,
            "parent": object_id if object_id in self.comments else None,
            "from": author,
            "message": text,
            "created_time": time.time(),
            "is_hidden": False,
        }
        with self.lock:
            self.comments[comment_id] = comment
        return comment

    def _comment_json(self, comment: dict) -> dict:
        body = {
            "id": comment["id"],
            "message": comment["message"],
            "from": comment["from"],
            "created_time": graph_time(comment["created_time"]),
            "permalink_url": f"https://www.facebook.com/{comment['id']}",
            "is_hidden": comment["is_hidden"],
        }
        if comment["parent"]:
            body["parent"] = {"id": comment["parent"]}
        return body

    def _under(self, object_id: str, *, stream: bool) -> list[dict]:
        with self.lock:
            ordered = sorted(self.comments.values(), key=lambda c: c["created_time"])
        found, parents = [], {object_id}
        for comment in ordered:
            parent = comment["parent"] or comment["post"]
            if parent in parents:
                found.append(comment)
                if stream:
                    parents.add(comment["id"])
        return found

    def _owner(self, object_id: str) -> str | None:
        """The Page whose post holds the object (a post or a comment), or None."""
        post_id = self.comments[object_id]["post"] if object_id in self.comments else object_id
        post = self.posts.get(post_id)
        return post.account if post is not None else None

    @route("GET", VERSION + "/" + COMMENTED + "/comments")
    def list_comments(self, request: FakeRequest, obj: str) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if self._owner(obj) != account:
            return self.error(100, "Unsupported get request.", subcode=33)
        if self.faults.strikes("poll_rate_limit"):
            return self.throttled(account)
        comments = self._under(obj, stream=request.arg("filter") == "stream")
        if request.arg("order") == "reverse_chronological":
            comments.reverse()
        start = int(request.arg("after") or 0)
        size = min(int(request.arg("limit") or PAGE), MAX_PAGE)
        page = comments[start : start + size]
        body: dict = {"data": [self._comment_json(c) for c in page]}
        if start + size < len(comments):
            after = str(start + size)
            body["paging"] = {"cursors": {"after": after}, "next": f"?after={after}"}
        return self.ok(body, account=account)

    @route("POST", VERSION + "/" + COMMENTED + "/comments")
    def create_comment(self, request: FakeRequest, obj: str) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if self._owner(obj) is None:
            return self.error(100, "Unsupported post request.", subcode=33)
        if fault := self.write_fault(account):
            return fault
        name = self.accounts[account]["handle"]
        message = request.form().get("message", "")
        comment = self._comment(obj, {"id": account, "name": name}, message)
        return self.after_store(self.ok({"id": comment["id"]}, account=account))

    def comment_object(self, obj: str, account: str, *, delete: bool = False) -> FakeResponse:
        """`GET /{comment-id}` (its permalink) or `DELETE /{comment-id}` by the post's Page."""
        if self._owner(obj) != account and self.comments[obj]["from"]["id"] != account:
            return self.error(100, "Unsupported request.", subcode=33)
        if delete:
            with self.lock:
                self.comments.pop(obj, None)
            return self.ok({"success": True}, account=account)
        return self.ok(self._comment_json(self.comments[obj]), account=account)

    @route("POST", VERSION + r"/(?P<obj>\d+_\d+)")
    def hide_comment(self, request: FakeRequest, obj: str) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if obj not in self.comments or self._owner(obj) != account:
            return self.error(100, "Unsupported post request.", subcode=33)
        hidden = request.form().get("is_hidden", "false") == "true"
        with self.lock:
            self.comments[obj]["is_hidden"] = hidden
        return self.ok({"success": True}, account=account)
