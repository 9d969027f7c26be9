"""Facebook Pages (graph.facebook.com, videos on graph-video.facebook.com) as documented in
pages-api/posts, graph-api/video-uploads, video-api/guides/publishing and the Video
reference's `status` field.

- `POST /{page-id}/feed` (`message`, `link`, `attached_media`) answers `{"id":
  "{page-id}_{post-id}"}`; the same message as the Page's last post is `(#506) Duplicate
  status message`.
- `POST /{page-id}/photos` (`url` or a multipart `source`, `message`, `published`): a
  published photo is a post (`{"id", "post_id"}`), an unpublished one waits to be attached
  to a feed post by its `media_fbid`.
- Videos are uploaded only to graph-video.facebook.com: in one request (`file_url`, or a
  multipart `source`), or resumably (`upload_phase=start` with `file_size`, then `transfer`
  chunks at the offsets the server names, then `finish`). An uploaded video is processed
  before it is published: `GET /{video-id}?fields=status` says `upload_complete`, then
  `processing`, then `ready` with `publishing_phase.status=complete` (or `error`). Only a
  ready video is a post in the Page's `published_posts`.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field

from loadtest.platform_fakes import engagement, multipart
from loadtest.platform_fakes.base import FakeRequest, FakeResponse, StoredPost, route
from loadtest.platform_fakes.facebook_comments import CommentsMixin
from loadtest.platform_fakes.meta import VERSION, MetaGraphFake, graph_id, graph_time

VIDEO_HOST = "graph-video.facebook.com"
CHUNK = 64 * 1024  # the resumable upload's chunk size, as the server names it


@dataclass
class Upload:
    """A resumable upload session: nothing exists on the Page until `finish`."""

    video_id: str
    page: str
    size: int
    received: bytearray = field(default_factory=bytearray)


class FacebookFake(CommentsMixin, MetaGraphFake):
    platform = "facebook"
    hosts = ("graph.facebook.com", VIDEO_HOST)
    buc_type = "pages"
    throttle_code = 80001  # Business Use Case throttling of Page tokens
    throttle_message = "There have been too many calls to this Page account."

    def __init__(self, faults=None) -> None:
        super().__init__(faults)
        self.photos: dict[str, str] = {}  # unpublished photo id -> page
        self.uploads: dict[str, Upload] = {}
        self.page_tokens_open_upload_sessions = False

    def new_account(self, handle: str) -> dict:
        account = super().new_account(handle)
        # A Page token derived from a long-lived user token does not expire.
        account["credentials"].pop("expires_at")
        account["settings"] = {"page_id": account["remote_id"]}
        return account

    def sample_content(self, rng: random.Random, marker: str) -> dict:
        roll = rng.random()
        media = ["video"] if roll < 0.15 else ["image"] if roll < 0.5 else []
        return {"segments": [{"text": f"{marker} from the Page", "media": media}], "settings": {}}

    # --- posts -------------------------------------------------------------------------

    @route("POST", VERSION + r"/(?P<page>\d+)/feed")
    def feed(self, request: FakeRequest, page: str) -> FakeResponse:
        account = self._writer(request, page)
        if isinstance(account, FakeResponse):
            return account
        args = multipart.params(request)
        if fault := self.write_fault(account):
            return fault
        message = args.get("message", "")
        if not (message or args.get("link") or args.get("attached_media")):
            return self.error(100, "(#100) The post is empty.")
        if message and self._last_message(page) == message:
            return self.error(506, "(#506) Duplicate status message")
        media = []
        for item in json.loads(args.get("attached_media") or "[]"):
            if self.photos.pop(str(item.get("media_fbid")), None) != page:
                return self.error(100, "(#100) attached_media names no photo of this Page")
            media.append("image")
        post = self.store(
            StoredPost(id=f"{page}_{graph_id()}", account=page, text=message, media=media)
        )
        return self.after_store(self.ok({"id": post.id}, account=page))

    @route("POST", VERSION + r"/(?P<page>\d+)/photos")
    def photos_edge(self, request: FakeRequest, page: str) -> FakeResponse:
        account = self._writer(request, page)
        if isinstance(account, FakeResponse):
            return account
        fields = multipart.form_fields(request)
        args = multipart.params(request)
        if not (args.get("url") or fields.get("source")):
            return self.error(100, "(#100) A photo needs a url or a source.")
        if fault := self.write_fault(account):
            return fault
        photo_id = graph_id()
        if args.get("published", "true") == "false":
            with self.lock:
                self.photos[photo_id] = page
            return self.after_store(self.ok({"id": photo_id}, account=page))
        text = args.get("message") or args.get("caption", "")
        post = self.store(
            StoredPost(id=f"{page}_{photo_id}", account=page, text=text, media=["image"])
        )
        return self.after_store(self.ok({"id": photo_id, "post_id": post.id}, account=page))

    # --- videos ------------------------------------------------------------------------

    @route("POST", VERSION + r"/(?P<page>\d+)/videos")
    def videos(self, request: FakeRequest, page: str) -> FakeResponse:
        account = self._writer(request, page)
        if isinstance(account, FakeResponse):
            return account
        if request.host != VIDEO_HOST:
            # "Videos must be published to graph-video.facebook.com instead of the regular
            # Graph API URL" (graph-api/video-uploads).
            return self.error(100, "(#100) Video uploads must be sent to graph-video.facebook.com.")
        fields = multipart.form_fields(request)
        args = multipart.params(request)
        phase = args.get("upload_phase")
        if phase == "start":
            return self._start(page, args)
        if phase == "transfer":
            return self._transfer(page, args, fields.get("video_file_chunk", b""))
        if phase == "finish":
            return self._finish(page, args)
        if not (args.get("file_url") or fields.get("source")):
            return self.error(100, "(#100) A video needs a file_url, a source or an upload_phase.")
        if fault := self.write_fault(account):
            return fault
        video = self._video_post(page, graph_id(), args)
        return self.after_store(self.ok({"id": video.id}, account=page))

    def _start(self, page: str, args: dict) -> FakeResponse:
        if fault := self.write_fault(page):
            return fault
        size = int(args.get("file_size") or 0)
        if size <= 0:
            return self.error(100, "(#100) file_size is required to start an upload.")
        upload = Upload(video_id=graph_id(), page=page, size=size)
        session = graph_id()
        with self.lock:
            self.uploads[session] = upload
        body = {
            "video_id": upload.video_id,
            "upload_session_id": session,
            "start_offset": "0",
            "end_offset": str(min(CHUNK, size)),
        }
        return self.ok(body, account=page)

    def _transfer(self, page: str, args: dict, chunk: bytes) -> FakeResponse:
        upload = self.uploads.get(args.get("upload_session_id", ""))
        if upload is None or upload.page != page:
            return self.error(100, "(#100) No such upload session.")
        if self.faults.strikes("drop_mid_upload"):
            return FakeResponse(drop=True)
        if int(args.get("start_offset") or -1) != len(upload.received):
            return self.error(6001, "There was a problem uploading your video.", subcode=1363037)
        upload.received += chunk[: upload.size - len(upload.received)]
        start = len(upload.received)
        body = {"start_offset": str(start), "end_offset": str(min(start + CHUNK, upload.size))}
        return self.ok(body, account=page)

    def _finish(self, page: str, args: dict) -> FakeResponse:
        session = args.get("upload_session_id", "")
        upload = self.uploads.get(session)
        if upload is None or upload.page != page:
            return self.error(100, "(#100) No such upload session.")
        if len(upload.received) != upload.size:
            return self.error(6001, "The upload is incomplete.", subcode=1363019)
        if fault := self.write_fault(page):
            return fault
        with self.lock:
            del self.uploads[session]
        self._video_post(page, upload.video_id, args)
        return self.after_store(self.ok({"success": True}, account=page))

    def _video_post(self, page: str, video_id: str, args: dict) -> StoredPost:
        """The video exists from here on: processing, then published (or failed)."""
        seconds = self.faults.processing_s
        if self.faults.strikes("slow_processing"):
            seconds *= self.slow_factor
        post = StoredPost(
            id=video_id,
            account=page,
            text=args.get("description", ""),
            media=["video"],
            state="processing",
            extra={
                "title": args.get("title", ""),
                "uploaded_at": time.time(),
                "ready_at": time.time() + seconds,
                "fails": self.faults.strikes("processing_fails"),
            },
        )
        return self.store(post)

    def _advance(self, post: StoredPost) -> None:
        """A processing video becomes published (or failed) once its time has come."""
        with self.lock:
            if post.state == "processing" and time.time() >= post.extra["ready_at"]:
                post.state = "failed" if post.extra["fails"] else "published"
                post.created_at = post.extra["ready_at"]  # the post appears when published
                post.visible_at = max(post.visible_at, post.created_at)

    def _video_status(self, post: StoredPost) -> dict:
        self._advance(post)
        done = {"status": "complete"}
        if post.state == "failed":
            error = {"code": 1363008, "message": "The video could not be processed."}
            return {
                "video_status": "error",
                "uploading_phase": done,
                "processing_phase": {"status": "error", "errors": [error]},
                "publishing_phase": {"status": "not_started"},
            }
        if post.state == "published":
            return {
                "video_status": "ready",
                "uploading_phase": done,
                "processing_phase": done,
                "publishing_phase": {
                    "status": "complete",
                    "publish_status": "published",
                    "publish_time": graph_time(post.created_at),
                },
            }
        extra = post.extra
        started = time.time() - extra["uploaded_at"]
        early = started < (extra["ready_at"] - extra["uploaded_at"]) / 3
        return {
            "video_status": "upload_complete" if early else "processing",
            "uploading_phase": done,
            "processing_phase": {"status": "not_started" if early else "in_progress"},
            "publishing_phase": {"status": "not_started"},
        }

    def published(self) -> list[StoredPost]:
        for post in list(self.posts.values()):
            self._advance(post)
        return super().published()

    # --- reads -------------------------------------------------------------------------

    @route("GET", VERSION + r"/(?P<obj>\d+(?:_\d+)?)")
    def read_object(self, request: FakeRequest, obj: str) -> FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if obj in self.comments:
            return self.comment_object(obj, account)
        post = self.posts.get(obj)
        if post is None and obj == account and "followers_count" in (request.arg("fields") or ""):
            with self.lock:
                made = sum(1 for p in self.posts.values() if p.account == account)
            followers = engagement.followers(account, made)
            return self.ok({"id": obj, "followers_count": followers}, account=account)
        if post is None or post.account != account:
            if any(u.video_id == obj for u in self.uploads.values()):
                uploading = {"status": "in_progress"}
                body = {
                    "id": obj,
                    "status": {"video_status": "uploading", "uploading_phase": uploading},
                }
                return self.ok(body, account=account)
            return self.error(100, "Unsupported get request.", subcode=33)
        if post.media == ["video"] and "ready_at" in post.extra:
            if self.faults.strikes("poll_rate_limit"):
                return self.throttled(account)
            body = {
                "id": obj,
                "status": self._video_status(post),
                "permalink_url": f"/{account}/videos/{obj}/",
            }
            return self.ok(body, account=account)
        body = {"id": obj, "permalink_url": self._permalink(post)}
        if "reactions" in (request.arg("fields") or ""):
            grown = engagement.grown(post, self.clock())
            body["reactions"] = {"data": [], "summary": {"total_count": grown["likes"]}}
            body["comments"] = {"data": [], "summary": {"total_count": grown["replies"]}}
            if grown["reposts"]:
                body["shares"] = {"count": grown["reposts"]}
        return self.ok(body, account=account)

    @route("GET", VERSION + r"/(?P<obj>\d+_\d+)/insights")
    def post_insights(self, request: FakeRequest, obj: str) -> FakeResponse:
        """A Page post's lifetime insights (read_insights)."""
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        post = self.posts.get(obj)
        if post is None or post.account != account:
            return self.error(100, "Unsupported get request.", subcode=33)
        grown = engagement.grown(post, self.clock())
        counts = {"post_media_view": grown["views"], "post_clicks": grown["views"] // 20}
        wanted = (request.arg("metric") or "").split(",")
        data = [
            {"name": name, "period": "lifetime", "values": [{"value": counts[name]}]}
            for name in wanted
            if name in counts
        ]
        return self.ok({"data": data}, account=account)

    @route("POST", VERSION + r"/(?P<app>\d+)/uploads")
    def upload_session(self, request: FakeRequest, app: str) -> FakeResponse:
        """The Resumable Upload API's session (`file_name`, `file_length`, `file_type`):
        its reference asks for the user token of someone with a role on the app, so a Page
        token is refused as a permission error (the refusal's exact form is not documented;
        `page_tokens_open_upload_sessions` models Meta accepting Page tokens after all)."""
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if not self.page_tokens_open_upload_sessions:
            return self.error(10, "(#10) Application does not have permission for this action")
        return self.ok({"id": f"upload:{self.new_id()}"}, account=account)

    @route("DELETE", VERSION + r"/(?P<obj>\d+(?:_\d+)?)")
    def delete_object(self, request: FakeRequest, obj: str) -> FakeResponse:
        """pages-api/posts: the Page's own post (or video) goes, answered `{"success":
        true}`; one that is gone or another Page's is the unknown-object error (100/33)."""
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if obj in self.comments:
            return self.comment_object(obj, account, delete=True)
        with self.lock:
            post = self.posts.get(obj)
            if post is None or post.account != account:
                return self.error(100, "Unsupported delete request.", subcode=33)
            self.remove(obj)
        return self.ok({"success": True}, account=account)

    @route("GET", VERSION + r"/(?P<page>\d+)/published_posts")
    def published_posts(self, request: FakeRequest, page: str) -> FakeResponse:
        account = self._writer(request, page)
        if isinstance(account, FakeResponse):
            return account
        if self.faults.strikes("poll_rate_limit"):
            return self.throttled(account)
        since = float(request.arg("since", "0") or 0)
        limit = int(request.arg("limit", "25") or 25)
        for post in list(self.posts.values()):
            self._advance(post)
        items = [
            {
                "id": p.id,
                "message": p.text,
                "created_time": graph_time(p.created_at),
                "permalink_url": self._permalink(p),
            }
            for p in self.visible(page)
            if p.created_at >= since
        ]
        return self.ok({"data": items[:limit], "paging": {}}, account=account)

    # --- helpers -----------------------------------------------------------------------

    def _writer(self, request: FakeRequest, page: str) -> str | FakeResponse:
        account = self.caller(request)
        if account is None:
            return self.unauthorized()
        if account != page:
            return self.error(200, "(#200) The user hasn't authorized the app for this Page.")
        return account

    def _last_message(self, page: str) -> str | None:
        with self.lock:
            mine = [p for p in self.posts.values() if p.account == page and p.text]
        return max(mine, key=lambda p: p.created_at).text if mine else None

    @staticmethod
    def _permalink(post: StoredPost) -> str:
        page, _, number = post.id.partition("_")
        if not number:
            return f"https://www.facebook.com/{post.account}/videos/{post.id}/"
        return f"https://www.facebook.com/{page}/posts/{number}"


FAKE = FacebookFake
