"""Facebook Pages (graph.facebook.com, videos on graph-video.facebook.com) as documented in
pages-api/posts, graph-api/video-uploads, video-api/guides/publishing and the Video
reference's `status` field.

- `POST /{page-id}/feed` (`message`, `link`, `attached_media`) answers `{"id":
  "{page-id}_{post-id}"}`; the same message as the Page's last post is `(#506) Duplicate
  status message`.
- `POST /{page-id}/photos` (`url` or a multipart `source`, `message`, `published`): a
  published photo is a post (`{"id", "post_id"}`), an unpublished one waits to be attached
  to a feed post by its `media_fbid`.
- Videos (video-api/overview: graph-video.facebook.com is deprecated, both hosts answer):
  in one request (`file_url`, or a multipart `source`); by the Resumable Upload API
  (graph-api/guides/upload: a session from `POST /{app-id}/uploads` with `file_name`,
  `file_length`, `file_type`; bytes appended by `POST /upload:<session>` with the token in
  an `Authorization: OAuth` header and a `file_offset` header; `GET /upload:<session>` says
  how much it holds; the file handle `h` only once the whole file is there), then
  `POST /{page-id}/videos` with `fbuploader_video_file_chunk=<handle>`; or by the videos
  edge's own `upload_phase=start` with `file_size`, `transfer` chunks at the offsets the
  server names, then `finish`. The reference asks for a user or system-user token with a
  role on the app to open a session; whether a Page token may is unconfirmed, so a Page
  token opens one unless its account is switched to `upload_sessions_refused` (or
  `page_tokens_open_upload_sessions` says so for every Page). Meta documents
  neither an error for a wrong `file_offset` nor how long a session lives: a wrong offset
  is refused as an invalid parameter (100), and an expired session (after
  `session_ttl_s`, or `expire_sessions()`) is gone like any unknown object (100/33). An
  append that completes no file answers the session's new `file_offset` (undocumented).
  `GET /{page-id}/videos` lists the Page's videos from the moment they are made. An
  uploaded video is processed
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


UPLOAD_TYPES = ("application/pdf", "image/jpeg", "image/jpg", "image/png", "video/mp4")


@dataclass
class Session:
    """A Resumable Upload API session: bytes held for the token that opened it; a file
    handle once they are all there. Nothing exists on any Page because of it."""

    token: str
    length: int
    file_type: str
    expires_at: float
    received: bytearray = field(default_factory=bytearray)
    handle: str = ""


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
    # Meta refuses this Page's token a Resumable Upload API session (a permission error).
    account_behaviours = ("upload_sessions_refused",)

    def __init__(self, faults=None) -> None:
        super().__init__(faults)
        self.photos: dict[str, str] = {}  # unpublished photo id -> page
        self.uploads: dict[str, Upload] = {}
        self.sessions: dict[str, Session] = {}  # "upload:<id>" -> session
        self.handles: dict[str, Session] = {}  # file handle -> its complete session
        # Tokens of people with a role on the app (the reference's "User or System User").
        self.app_user_tokens: set[str] = set()
        self.page_tokens_open_upload_sessions: bool | None = None
        self.session_ttl_s = 3600.0

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
        fields = multipart.form_fields(request)
        args = multipart.params(request)
        if args.get("fbuploader_video_file_chunk"):
            return self._from_handle(page, args)
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

    def _from_handle(self, page: str, args: dict) -> FakeResponse:
        """video-api/guides/publishing: the Page's video from a Resumable Upload API handle;
        answered `{"id": <video id>}`, then processed like any upload."""
        with self.lock:
            session = self.handles.get(args["fbuploader_video_file_chunk"])
        if session is None:
            return self.error(100, "(#100) Invalid parameter: the file handle is not valid.")
        if not session.file_type.startswith("video/"):
            return self.error(100, "(#100) The file handle does not name a video.")
        if fault := self.write_fault(page):
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

    # --- the Resumable Upload API ------------------------------------------------------

    @route("POST", VERSION + r"/(?P<app>[^/:]+)/uploads")
    def upload_session(self, request: FakeRequest, app: str) -> FakeResponse:
        """`POST /{app-id}/uploads` (`file_name`, `file_length`, `file_type`): a session
        `{"id": "upload:<id>"}`. The reference asks for the user token of someone with a
        role on the app; a Page token is refused as a permission error where its account
        is switched to `upload_sessions_refused` (the refusal's form is not documented)."""
        token = self.token_of(request)
        account = self.caller(request)
        if account is None and token not in self.app_user_tokens:
            return self.unauthorized()
        if account is not None and not self._page_opens_sessions(account):
            return self.error(10, "(#10) Application does not have permission for this action")
        args = multipart.params(request)
        length = int(args.get("file_length") or 0)
        if not args.get("file_name") or length <= 0:
            return self.error(100, "(#100) file_name and file_length are required.")
        if args.get("file_type") not in UPLOAD_TYPES:
            return self.error(100, "(#100) file_type must be one of " + ", ".join(UPLOAD_TYPES))
        session_id = f"upload:{self.new_id()}"
        session = Session(token, length, args["file_type"], time.time() + self.session_ttl_s)
        with self.lock:
            self.sessions[session_id] = session
        return self.ok({"id": session_id}, account=account)

    @route("GET", VERSION + r"/(?P<session_id>upload:[^/]+)")
    def upload_offset(self, request: FakeRequest, session_id: str) -> FakeResponse:
        """`GET /upload:<session>`: `{"id", "file_offset"}`, where to resume."""
        session = self._session(request, session_id)
        if isinstance(session, FakeResponse):
            return session
        return self.ok({"id": session_id, "file_offset": len(session.received)})

    @route("POST", VERSION + r"/(?P<session_id>upload:[^/]+)")
    def upload_append(self, request: FakeRequest, session_id: str) -> FakeResponse:
        """`POST /upload:<session>` with the `file_offset` header (a query parameter does
        not count) and the bytes as the body: the handle `{"h"}` once the file is whole.
        An offset other than what the session holds is refused, nothing appended; a
        dropped connection (`drop_mid_upload`) keeps the first half of what arrived; a
        session may lapse under an append (`session_expires`)."""
        session = self._session(request, session_id)
        if isinstance(session, FakeResponse):
            return session
        offset = request.headers.get("file_offset")
        if offset is None or not offset.isdigit():
            return self.error(100, "(#100) The file_offset header is required.")
        if self.faults.strikes("session_expires"):
            with self.lock:  # lapsed under this append: nothing of it is kept
                self.sessions.pop(session_id, None)
            return self._gone(session_id)
        with self.lock:
            held = len(session.received)
            if int(offset) != held or session.handle:
                return self.error(
                    100, f"(#100) file_offset {offset} does not match the upload's {held}."
                )
            body = request.body[: session.length - held]
            if self.faults.strikes("drop_mid_upload"):
                session.received += body[: len(body) // 2]
                return FakeResponse(drop=True)
            session.received += body
            if len(session.received) < session.length:
                return self.ok({"id": session_id, "file_offset": len(session.received)})
            session.handle = f"2:{self.new_id()}:{session.file_type}:{self.new_id()}"
            self.handles[session.handle] = session
        return self.ok({"h": session.handle})

    def expire_sessions(self) -> None:
        """Every open session lapses now (their handles stay valid)."""
        with self.lock:
            for session in self.sessions.values():
                session.expires_at = 0.0

    def _session(self, request: FakeRequest, session_id: str) -> Session | FakeResponse:
        """The caller's live session; the token must come in the Authorization header
        ("You must include the access token in the header or the call will fail")."""
        if not request.bearer:
            return self.unauthorized()
        with self.lock:
            session = self.sessions.get(session_id)
            if session is not None and session.expires_at <= time.time():
                del self.sessions[session_id]
                session = None
        if session is None or session.token != request.bearer:
            return self._gone(session_id)
        return session

    def _gone(self, session_id: str) -> FakeResponse:
        message = f"Unsupported request. Object with ID '{session_id}' does not exist."
        return self.error(100, message, subcode=33)

    def _page_opens_sessions(self, page: str) -> bool:
        if self.page_tokens_open_upload_sessions is None:
            return not self.switched(page, "upload_sessions_refused")
        return self.page_tokens_open_upload_sessions

    @route("GET", VERSION + r"/(?P<page>\d+)/videos")
    def page_videos(self, request: FakeRequest, page: str) -> FakeResponse:
        """The Page's videos, newest first, from the moment each is made (processing or
        not): `id`, `description`, `created_time`."""
        account = self._writer(request, page)
        if isinstance(account, FakeResponse):
            return account
        if self.faults.strikes("poll_rate_limit"):
            return self.throttled(account)
        limit = int(request.arg("limit", "25") or 25)
        with self.lock:
            mine = [
                p
                for p in self.posts.values()
                if p.account == page and p.media == ["video"] and "uploaded_at" in p.extra
            ]
        mine.sort(key=lambda p: p.extra["uploaded_at"], reverse=True)
        items = [
            {
                "id": p.id,
                "description": p.text,
                "created_time": graph_time(p.extra["uploaded_at"]),
            }
            for p in mine[:limit]
        ]
        return self.ok({"data": items, "paging": {}}, account=account)

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
