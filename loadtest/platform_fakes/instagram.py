"""Instagram through Instagram Login (graph.instagram.com, the host the adapter speaks to;
graph.facebook.com belongs to the Facebook Pages fake): container publishing as documented
in instagram-platform/content-publishing and the ig-user media, media_publish,
content_publishing_limit and refresh_access_token references.

- `POST /{ig-user-id}/media` makes a container from `image_url` or `video_url` (Meta fetches
  the URL), with `media_type` REELS, STORIES or CAROUSEL (`children`, 2-10 FINISHED item
  containers made with `is_carousel_item`); stories take no caption.
- `GET /{container-id}?fields=status_code,status` is IN_PROGRESS while Meta processes the
  media, then FINISHED (or ERROR with the subcode in `status`), EXPIRED after 24 h, and
  PUBLISHED once published.
- `POST /{ig-user-id}/media_publish?creation_id=` publishes a FINISHED container once; a
  container that is not ready is refused with 9007/2207027, the 24 h cap with 9/2207042.
- `GET /{ig-user-id}/media` lists feed posts and Reels, never stories (those live 24 h on
  the stories edge), with `caption`, `timestamp`, `permalink`.
- A media's comments (the first comment): instagram_comments.
"""

from __future__ import annotations

import random

from loadtest.platform_fakes import engagement, multipart
from loadtest.platform_fakes.base import FakeRequest, FakeResponse, route
from loadtest.platform_fakes.instagram_comments import CommentsMixin
from loadtest.platform_fakes.limits import ENFORCE
from loadtest.platform_fakes.meta import (
    VERSION,
    Container,
    MetaGraphFake,
    graph_time,
)
from loadtest.platform_fakes.meta_limits import MetaCallBudget

QUOTA_TOTAL = 100  # the publishing guide's figure; the reference says "currently 50"
MAX_CAROUSEL = 10


class InstagramFake(CommentsMixin, MetaCallBudget, MetaGraphFake):
    platform = "instagram"
    hosts = ("graph.instagram.com",)
    buc_type = "instagram"
    # Per account (`switch`): every media container ends ERROR (`containers_fail`), or
    # expires at once, never published (`containers_expire`), as Meta's do after 24 h;
    # the documented call budget of its reads is enforced (`enforce_limits`, meta_limits).
    account_behaviours = ("containers_fail", "containers_expire", ENFORCE)
    throttle_code = 80002  # Business Use Case throttling of the Instagram Platform
    throttle_message = "There have been too many calls to this Instagram account."

    def sample_content(self, rng: random.Random, marker: str) -> dict:
        media = ["video"] if rng.random() < 0.15 else ["image"]
        return {"segments": [{"text": f"{marker} on the gram", "media": media}], "settings": {}}

    # --- containers --------------------------------------------------------------------

    @route("POST", VERSION + r"/(?P<user>\d+)/media")
    def create_container(self, request: FakeRequest, user: str) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if account != user:
            return self.error(10, "Application does not have permission for this action")
        if fault := self.write_fault(account):
            return fault
        params = multipart.params(request)
        params.pop("access_token", None)
        media_type = params.get("media_type", "")
        if media_type == "CAROUSEL":
            children = [c for c in params.get("children", "").split(",") if c]
            problem = self._carousel_problem(account, children)
            if problem:
                return self.error(100, problem, subcode=2207028)
        elif not (params.get("image_url") or params.get("video_url")):
            return self.error(100, "The parameter image_url or video_url is required")
        elif media_type in ("", "IMAGE") and params.get("video_url"):
            return self.error(100, "Feed videos are published with media_type=REELS")
        if media_type == "STORIES":
            params.pop("caption", None)  # stories have no caption
        container = self.make_container(account, params)
        if media_type == "CAROUSEL":
            container.children = children
        return self.after_store(self.ok({"id": container.id}, account=account))

    def _carousel_problem(self, account: str, children: list[str]) -> str | None:
        if not 2 <= len(children) <= MAX_CAROUSEL:
            return f"A carousel holds 2 to {MAX_CAROUSEL} items."
        for child_id in children:
            child: Container | None = self.containers.get(child_id)
            if (
                child is None
                or child.account != account
                or not child.params.get("is_carousel_item")
            ):
                return f"{child_id} is not a carousel item of this account."
            if child.status() != "FINISHED":
                return "Every carousel item must be FINISHED first."
        return None

    @route("POST", VERSION + r"/(?P<user>\d+)/media_publish")
    def publish(self, request: FakeRequest, user: str) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if account != user:
            return self.error(10, "Application does not have permission for this action")
        if fault := self.write_fault(account):
            return fault
        if self.published_in_window(account) >= QUOTA_TOTAL:
            return self.error(9, "Application request limit reached", subcode=2207042)
        container_id = multipart.params(request).get("creation_id", "")
        container = self.containers.get(container_id)
        caption = container.params.get("caption", "") if container else ""
        return self.publish_container(account, container_id, text=caption)

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
            detail = {"ERROR": "Error: Media upload has failed with error code 2207026"}
            return self.ok(
                {"id": obj, "status_code": state, "status": detail.get(state, state)},
                account=account,
            )
        post = self.posts.get(obj)
        if post is not None and post.account == account:
            item = self._media_item(post)
            if "like_count" in (request.arg("fields") or ""):
                grown = engagement.grown(post, self.clock())
                item.update(like_count=grown["likes"], comments_count=grown["replies"])
            return self.ok(item, account=account)
        if obj == account:
            handle = self.accounts[account]["handle"]
            return self.ok({"id": obj, "user_id": obj, "username": handle}, account=account)
        return self.error(100, "Unsupported get request.", subcode=33)

    @route("DELETE", VERSION + r"/(?P<obj>\d+)")
    def delete_object(self, request: FakeRequest, obj: str) -> FakeResponse:
        """The IG Media reference documents no delete: Graph refuses the operation as it
        refuses any a node does not take (100/33), and the media stays."""
        if self.caller(request) is None:
            return self.unauthorized()
        return self.error(
            100,
            f"Unsupported delete request. Object with ID '{obj}' does not exist, cannot be "
            "loaded due to missing permissions, or does not support this operation.",
            subcode=33,
        )

    @route("GET", VERSION + r"/me")
    def me(self, request: FakeRequest) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        handle = self.accounts[account]["handle"]
        body = {"id": account, "user_id": account, "username": handle, "name": handle}
        if "followers_count" in (request.arg("fields") or ""):
            with self.lock:
                made = sum(1 for p in self.posts.values() if p.account == account)
            body["followers_count"] = engagement.followers(account, made)
        return self.ok(body, account=account)

    @route("GET", VERSION + r"/(?P<obj>\d+)/insights")
    def media_insights(self, request: FakeRequest, obj: str) -> FakeResponse:
        """A media's lifetime insights (instagram_business_manage_insights)."""
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        post = self.posts.get(obj)
        if post is None or post.account != account:
            return self.error(100, "Unsupported get request.", subcode=33)
        grown = engagement.grown(post, self.clock())
        counts = {"views": grown["views"], "shares": grown["reposts"], "saved": grown["quotes"]}
        wanted = (request.arg("metric") or "").split(",")
        data = [
            {"name": name, "period": "lifetime", "values": [{"value": counts[name]}]}
            for name in wanted
            if name in counts
        ]
        return self.ok({"data": data}, account=account)

    @route("GET", VERSION + r"/(?P<user>\d+)/media")
    def list_media(self, request: FakeRequest, user: str) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if account != user:
            return self.error(10, "Application does not have permission for this action")
        if self.faults.strikes("poll_rate_limit"):
            return self.throttled(account)
        if refusal := self.budget_refusal(account):
            return refusal
        limit = int(request.arg("limit", "25") or 25)
        items = [
            self._media_item(p)
            for p in self.visible(account)
            if p.extra.get("params", {}).get("media_type") != "STORIES"
        ]
        return self.ok({"data": items[:limit], "paging": {}}, account=account)

    @route("GET", VERSION + r"/(?P<user>\d+)/content_publishing_limit")
    def publishing_limit(self, request: FakeRequest, user: str) -> FakeResponse:
        account = self.caller(request)
        if account is None or account != user:
            return self.unauthorized()
        usage = {
            "quota_usage": self.published_in_window(account),
            "config": {"quota_total": QUOTA_TOTAL, "quota_duration": 86400},
        }
        return self.ok({"data": [usage]}, account=account)

    @route("GET", r"/refresh_access_token")
    def refresh(self, request: FakeRequest) -> FakeResponse:
        return self.refresh_token(request, "ig_refresh_token")

    def _media_item(self, post) -> dict:
        params = post.extra.get("params", {})
        kind = {"REELS": "VIDEO", "CAROUSEL": "CAROUSEL_ALBUM"}.get(params.get("media_type"))
        return {
            "id": post.id,
            "caption": post.text,
            "media_type": kind or "IMAGE",
            "timestamp": graph_time(post.created_at),
            "permalink": f"https://www.instagram.com/p/{post.id}/",
        }


FAKE = InstagramFake
