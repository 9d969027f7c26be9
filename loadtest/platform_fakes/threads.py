"""Threads (graph.threads.net): container publishing as documented in threads/posts,
threads/reply-management, threads/troubleshooting and get-started/long-lived-tokens.

- `POST /{threads-user-id}/threads` makes a container: `media_type` TEXT, IMAGE, VIDEO or
  CAROUSEL (`children`, 2-20 FINISHED items made with `is_carousel_item`), `text` (at most
  500 characters), `image_url`/`video_url` fetched by Meta, `reply_to_id` for a reply.
- `GET /{container-id}?fields=status,error_message`: text containers are FINISHED at once,
  media containers IN_PROGRESS first (ERROR with e.g. FAILED_PROCESSING_VIDEO), EXPIRED after
  24 h, PUBLISHED once published.
- `POST /{threads-user-id}/threads_publish?creation_id=` publishes a container once.
- `GET /{threads-user-id}/threads` lists the user's own posts, `GET .../replies` their
  replies; `threads_publishing_limit` reports the 250 posts / 1,000 replies a day.
- `GET /refresh_access_token?grant_type=th_refresh_token` renews a long-lived token.
- Replies from others, the conversation read and hiding replies: threads_comments.
"""

from __future__ import annotations

import random
import time

from loadtest.platform_fakes import engagement, multipart
from loadtest.platform_fakes.base import FakeRequest, FakeResponse, StoredPost, route
from loadtest.platform_fakes.limits import ENFORCE
from loadtest.platform_fakes.meta import VERSION, MetaGraphFake, graph_time
from loadtest.platform_fakes.meta_limits import MetaCallBudget
from loadtest.platform_fakes.threads_comments import CommentsMixin

MAX_TEXT = 500
MAX_CAROUSEL = 20
POSTS_PER_DAY, REPLIES_PER_DAY = 250, 1000


class ThreadsFake(CommentsMixin, MetaCallBudget, MetaGraphFake):
    platform = "threads"
    hosts = ("graph.threads.net", "graph.threads.com")
    buc_type = "threads"
    # Per account (`switch`): every media container ends ERROR (`containers_fail`), or
    # expires at once, never published (`containers_expire`), as Meta's do after 24 h;
    # the documented call budget of its reads is enforced (`enforce_limits`, meta_limits).
    account_behaviours = ("containers_fail", "containers_expire", ENFORCE)

    def sample_content(self, rng: random.Random, marker: str) -> dict:
        segments = [{"text": f"{marker} a thought", "media": []}]
        if rng.random() < 0.3:
            segments.append({"text": "and a follow-up", "media": []})
        if rng.random() < 0.2:
            segments[0]["media"] = ["image"]
        return {"segments": segments, "settings": {}}

    # --- containers --------------------------------------------------------------------

    @route("POST", VERSION + r"/(?P<user>\d+)/threads")
    def create_container(self, request: FakeRequest, user: str) -> FakeResponse:
        account = self._writer(request, user)
        if isinstance(account, FakeResponse):
            return account
        if fault := self.write_fault(account):
            return fault
        params = multipart.params(request)
        params.pop("access_token", None)
        problem = self._problem(account, params)
        if problem:
            return self.error(100, problem)
        container = self.make_container(account, params)
        if params.get("media_type") == "CAROUSEL":
            container.children = params["children"].split(",")
        return self.after_store(self.ok({"id": container.id}, account=account))

    def _problem(self, account: str, params: dict) -> str | None:
        media_type = params.get("media_type", "")
        if len(params.get("text", "")) > MAX_TEXT:
            return f"Param text must be at most {MAX_TEXT} characters long."
        if media_type == "TEXT" and not params.get("text"):
            return "A text post needs text."
        if media_type == "IMAGE" and not params.get("image_url"):
            return "Param image_url is required for IMAGE."
        if media_type == "VIDEO" and not params.get("video_url"):
            return "Param video_url is required for VIDEO."
        if media_type == "CAROUSEL":
            children = [c for c in params.get("children", "").split(",") if c]
            if not 2 <= len(children) <= MAX_CAROUSEL:
                return f"A carousel holds 2 to {MAX_CAROUSEL} items."
            for child_id in children:
                child = self.containers.get(child_id)
                if child is None or child.account != account or child.status() != "FINISHED":
                    return f"Carousel item {child_id} is not a FINISHED item of this user."
        if media_type not in ("TEXT", "IMAGE", "VIDEO", "CAROUSEL"):
            return "Param media_type must be one of TEXT, IMAGE, VIDEO, CAROUSEL."
        reply_to = params.get("reply_to_id")
        if reply_to and (reply_to not in self.posts or self.posts[reply_to].state != "published"):
            return "The post to reply to does not exist."
        return None

    @route("POST", VERSION + r"/(?P<user>\d+)/threads_publish")
    def publish(self, request: FakeRequest, user: str) -> FakeResponse:
        account = self._writer(request, user)
        if isinstance(account, FakeResponse):
            return account
        if fault := self.write_fault(account):
            return fault
        container_id = multipart.params(request).get("creation_id", "")
        container = self.containers.get(container_id)
        params = container.params if container else {}
        reply_to = params.get("reply_to_id")
        used = self._used(account, replies=bool(reply_to))
        if used >= (REPLIES_PER_DAY if reply_to else POSTS_PER_DAY):
            return self.error(9, "The user has reached the publishing limit.")
        return self.publish_container(
            account, container_id, text=params.get("text", ""), reply_to=reply_to
        )

    @route("DELETE", VERSION + r"/(?P<obj>\d+)")
    def delete_post(self, request: FakeRequest, obj: str) -> FakeResponse:
        """threads/posts/delete-posts: the user's own post or reply goes, answered
        `{"success": true, "deleted_id"}`; anything else (gone, another user's, a container)
        is Graph's unknown-object error (100/33)."""
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        with self.lock:
            post = self.posts.get(obj)
            if post is None or post.account != account:
                return self.error(100, "Unsupported delete request.", subcode=33)
            self.remove(obj)
        return self.ok({"success": True, "deleted_id": obj}, account=account)

    # --- reads -------------------------------------------------------------------------

    @route("GET", VERSION + r"/(?P<obj>\d+)")
    def read_object(self, request: FakeRequest, obj: str) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        container = self.containers.get(obj)
        if container is not None and container.account == account:
            if self.faults.strikes("poll_rate_limit"):
                return self.throttled(account)
            if refusal := self.budget_refusal(account):
                return refusal
            state = container.status()
            body = {"id": obj, "status": state}
            if state == "ERROR":
                body["error_message"] = "FAILED_PROCESSING_VIDEO"
            return self.ok(body, account=account)
        post = self.posts.get(obj)
        if post is not None:
            return self.ok(self._item(post), account=account)
        return self.error(100, "Unsupported get request.", subcode=33)

    @route("GET", VERSION + r"/(?P<obj>\d+)/insights")
    def post_insights(self, request: FakeRequest, obj: str) -> FakeResponse:
        """A post's lifetime insights, growing with its age (threads_manage_insights)."""
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        post = self.posts.get(obj)
        if post is None:
            return self.error(100, "Unsupported get request.", subcode=33)
        grown = engagement.grown(post, self.clock())
        names = {"views": "views", "likes": "likes", "replies": "replies", "reposts": "reposts",
                 "quotes": "quotes", "shares": "reposts"}  # fmt: skip
        wanted = (request.arg("metric") or "").split(",")
        data = [
            {"name": name, "period": "lifetime", "values": [{"value": grown[names[name]]}]}
            for name in wanted
            if name in names
        ]
        return self.ok({"data": data}, account=account)

    @route("GET", VERSION + r"/me/threads_insights")
    def user_insights(self, request: FakeRequest) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        with self.lock:
            made = sum(1 for p in self.posts.values() if p.account == account)
        total = {"value": engagement.followers(account, made)}
        data = [{"name": "followers_count", "period": "day", "total_value": total}]
        return self.ok({"data": data}, account=account)

    @route("GET", VERSION + r"/me")
    def me(self, request: FakeRequest) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        handle = self.accounts[account]["handle"]
        return self.ok({"id": account, "username": handle, "name": handle})

    @route("GET", VERSION + r"/(?P<user>\d+)/threads")
    def list_threads(self, request: FakeRequest, user: str) -> FakeResponse:
        return self._listing(request, user, replies=False)

    @route("GET", VERSION + r"/(?P<user>\d+)/replies")
    def list_replies(self, request: FakeRequest, user: str) -> FakeResponse:
        return self._listing(request, user, replies=True)

    @route("GET", VERSION + r"/(?P<user>\d+)/threads_publishing_limit")
    def publishing_limit(self, request: FakeRequest, user: str) -> FakeResponse:
        account = self._writer(request, user)
        if isinstance(account, FakeResponse):
            return account
        usage = {
            "quota_usage": self._used(account, replies=False),
            "config": {"quota_total": POSTS_PER_DAY, "quota_duration": 86400},
            "reply_quota_usage": self._used(account, replies=True),
            "reply_config": {"quota_total": REPLIES_PER_DAY, "quota_duration": 86400},
        }
        return self.ok({"data": [usage]}, account=account)

    @route("GET", r"/refresh_access_token")
    def refresh(self, request: FakeRequest) -> FakeResponse:
        return self.refresh_token(request, "th_refresh_token")

    # --- helpers -----------------------------------------------------------------------

    def _writer(self, request: FakeRequest, user: str) -> str | FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if account != user:
            return self.error(10, "Application does not have permission for this action")
        return account

    def _listing(self, request: FakeRequest, user: str, *, replies: bool) -> FakeResponse:
        account = self._writer(request, user)
        if isinstance(account, FakeResponse):
            return account
        if self.faults.strikes("poll_rate_limit"):
            return self.throttled(account)
        if refusal := self.budget_refusal(account):
            return refusal
        limit = int(request.arg("limit", "25") or 25)
        items = [self._item(p) for p in self.visible(account) if bool(p.reply_to) == replies]
        return self.ok({"data": items[:limit], "paging": {}}, account=account)

    def _used(self, account: str, *, replies: bool) -> int:
        cutoff = time.time() - 86400
        with self.lock:
            return sum(
                1
                for p in self.posts.values()
                if p.account == account and p.created_at >= cutoff and bool(p.reply_to) == replies
            )

    def _item(self, post: StoredPost) -> dict:
        handle = self.accounts.get(post.account, {}).get("handle", "user")
        item: dict[str, object] = {
            "id": post.id,
            "text": post.text,
            "timestamp": graph_time(post.created_at),
            "permalink": f"https://www.threads.net/@{handle}/post/{post.id}",
        }
        if post.reply_to:
            item["replied_to"] = {"id": post.reply_to}
        return item


FAKE = ThreadsFake
