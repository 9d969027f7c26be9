"""TikTok's Content Posting API (open.tiktokapis.com v2) as its documentation describes it:
creator_info, a direct-post video init answered with a publish_id and an upload URL,
sequential chunk PUTs (206, then 201 once the last byte arrived), a status that moves from
PROCESSING_UPLOAD through PROCESSING_DOWNLOAD to PUBLISH_COMPLETE or FAILED, the public
post id only after moderation, the creator's video list, and rotating refresh tokens.

Every answer carries the `{"data", "error": {"code", "message", "log_id"}}` envelope. Init
allows 6 calls and status/fetch 30 calls a minute per user token (429 rate_limit_exceeded).
An account switched to `enforce_limits` is also held to the documented 600 calls a minute
of video/list and video/query (the lookup's reads): past them, the same 429
`rate_limit_exceeded`, with no header saying when the minute ends (TikTok gives none).
"""

from __future__ import annotations

import random
import re
import threading
import time
from collections import deque
from datetime import UTC, datetime, timedelta

from loadtest.platform_fakes import engagement
from loadtest.platform_fakes.base import (
    FakeRequest,
    FakeResponse,
    PlatformFake,
    StoredPost,
    json_response,
    route,
)
from loadtest.platform_fakes.limits import ENFORCE, Allowance, LimitedReads

API_HOST = "open.tiktokapis.com"
UPLOAD_HOST = "open-upload.tiktokapis.com"
PRIVACY_LEVELS = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"]
MB = 1024 * 1024
CAPTION_MAX = 2200  # UTF-16 code units
LISTED_DESCRIPTION_MAX = 150  # the video object's video_description
INIT_PER_MINUTE = 6
STATUS_PER_MINUTE = 30
VIDEO_READS = Allowance(limit=600, window_s=60)
FAIL_REASONS = ("file_format_check_failed", "duration_check_failed", "frame_rate_check_failed")
_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)\Z")


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class TikTokFake(LimitedReads, PlatformFake):
    platform = "tiktok"
    hosts = (API_HOST, UPLOAD_HOST)
    account_behaviours = (ENFORCE,)
    ALLOWANCES = {"video_list": VIDEO_READS, "video_query": VIDEO_READS}

    def __init__(self, faults=None) -> None:
        super().__init__(faults)
        self.clock = time.time
        self.uploads: dict[str, dict] = {}  # publish_id -> the init and what arrived
        self._upload_ids: dict[str, str] = {}  # upload_id of an upload URL -> publish_id
        self.refresh_tokens: dict[str, str] = {}  # live refresh token -> open_id
        self._windows: dict[tuple[str, str], deque] = {}
        self._counter = 0
        self._ids = threading.Lock()

    # --- accounts ----------------------------------------------------------------------

    def new_account(self, handle: str) -> dict:
        open_id = f"-000{self.new_id()}"
        credentials = self._issue(open_id)
        with self.lock:
            self.accounts[open_id] = {
                "handle": handle,
                "access_token": credentials["access_token"],
                "privacy_level_options": list(PRIVACY_LEVELS),
            }
        return {
            "remote_id": open_id,
            "handle": handle,
            "credentials": credentials,
            "settings": {"privacy_level_options": list(PRIVACY_LEVELS)},
        }

    def sample_content(self, rng: random.Random, marker: str) -> dict:
        return {
            "segments": [{"text": f"{marker} fresh from the oven #bread", "media": ["video"]}],
            "settings": {"privacy_level": rng.choice(["PUBLIC_TO_EVERYONE", "SELF_ONLY"])},
        }

    def _issue(self, open_id: str) -> dict:
        """A new token pair (the previous refresh token dies: TikTok rotates them)."""
        access, refresh = f"act.{self.new_id()}", f"rft.{self.new_id()}"
        with self.lock:
            for token, owner in list(self.refresh_tokens.items()):
                if owner == open_id:
                    del self.refresh_tokens[token]
            self.refresh_tokens[refresh] = open_id
            if open_id in self.accounts:
                self.accounts[open_id]["access_token"] = access
        now = datetime.now(UTC)
        return {
            "open_id": open_id,
            "access_token": access,
            "refresh_token": refresh,
            "scope": "user.info.basic,video.publish,video.list",
            "expires_at": (now + timedelta(days=1)).isoformat(),
            "refresh_expires_at": (now + timedelta(days=365)).isoformat(),
        }

    def _account(self, request: FakeRequest) -> tuple[str, dict] | None:
        token = request.bearer
        with self.lock:
            for open_id, account in self.accounts.items():
                if token and account["access_token"] == token:
                    return open_id, account
        return None

    # --- envelope and limits -----------------------------------------------------------

    def _ok(self, data: dict, status: int = 200) -> FakeResponse:
        return json_response({"data": data, "error": self._err("ok", "")}, status)

    def _fail(self, status: int, code: str, message: str) -> FakeResponse:
        return json_response({"data": {}, "error": self._err(code, message)}, status)

    def _err(self, code: str, message: str) -> dict:
        return {"code": code, "message": message, "log_id": self.new_id()}

    def _rate_limited(self) -> FakeResponse:
        return self._fail(
            429, "rate_limit_exceeded", "API rate limit exceeded, please try again later."
        )

    def _over_limit(self, token: str, endpoint: str, per_minute: int) -> bool:
        """A sliding one-minute window per user token and endpoint."""
        now = time.time()
        with self.lock:
            window = self._windows.setdefault((token, endpoint), deque())
            while window and window[0] <= now - 60:
                window.popleft()
            if len(window) >= per_minute:
                return True
            window.append(now)
        return False

    def _authorised(self, request: FakeRequest) -> tuple[str, dict] | FakeResponse:
        found = self._account(request)
        if found is None:
            return self._fail(
                401, "access_token_invalid", "The access token is invalid or not found."
            )
        return found

    # --- publishing --------------------------------------------------------------------

    @route("POST", r"/v2/post/publish/creator_info/query/")
    def creator_info(self, request: FakeRequest) -> FakeResponse:
        found = self._authorised(request)
        if isinstance(found, FakeResponse):
            return found
        _, account = found
        return self._ok(
            {
                "creator_avatar_url": "https://p16.tiktokcdn.com/avatar.jpeg",
                "creator_username": account["handle"],
                "creator_nickname": account["handle"].title(),
                "privacy_level_options": account["privacy_level_options"],
                "comment_disabled": False,
                "duet_disabled": False,
                "stitch_disabled": True,
                "max_video_post_duration_sec": 600,
            }
        )

    @route("POST", r"/v2/post/publish/video/init/")
    def video_init(self, request: FakeRequest) -> FakeResponse:
        found = self._authorised(request)
        if isinstance(found, FakeResponse):
            return found
        open_id, account = found
        if self._over_limit(request.bearer, "init", INIT_PER_MINUTE) or self.faults.strikes(
            "rate_limit"
        ):
            return self._rate_limited()
        if self.faults.strikes("server_error_before"):
            return self._fail(500, "internal_error", "Something went wrong. Please try again.")
        body = request.json()
        post_info, source = body.get("post_info") or {}, body.get("source_info") or {}
        refusal = self._check_post_info(post_info, account) or self._check_source(source)
        if refusal:
            return refusal
        publish_id = self._next_publish_id()
        upload = {
            "publish_id": publish_id,
            "open_id": open_id,
            "caption": post_info.get("title", ""),
            "privacy_level": post_info["privacy_level"],
            "source": source["source"],
            "size": int(source.get("video_size") or 0),
            "received": 0,
            "completed_at": None,
        }
        data = {"publish_id": publish_id}
        if source["source"] == "FILE_UPLOAD":
            upload_id = self.new_id()
            data["upload_url"] = (
                f"https://{UPLOAD_HOST}/video/?upload_id={upload_id}&upload_token={self.new_id()}"
            )
            upload["upload_url"] = data["upload_url"]
            self._upload_ids[upload_id] = publish_id
        with self.lock:
            self.uploads[publish_id] = upload
        if source["source"] == "PULL_FROM_URL":
            self._complete(upload)  # TikTok fetches the file itself
        if self.faults.strikes("server_error_after"):
            return self._fail(500, "internal_error", "Something went wrong. Please try again.")
        if self.faults.strikes("timeout_after_accept"):
            response = self._ok(data)
            response.delay_s = self.faults.hang_s
            return response
        return self._ok(data)

    def _check_post_info(self, post_info: dict, account: dict) -> FakeResponse | None:
        privacy = post_info.get("privacy_level")
        if privacy not in account["privacy_level_options"]:
            return self._fail(
                400,
                "privacy_level_option_mismatch",
                "privacy_level is not one of the creator's privacy_level_options.",
            )
        if _utf16_len(post_info.get("title", "")) > CAPTION_MAX:
            return self._fail(400, "invalid_params", "The title is longer than 2200 runes.")
        return None

    def _check_source(self, source: dict) -> FakeResponse | None:
        """The media transfer guide's chunk rules."""
        kind = source.get("source")
        if kind == "PULL_FROM_URL":
            if not str(source.get("video_url", "")).startswith("https://"):
                return self._fail(400, "invalid_params", "video_url must be an https URL.")
            return None
        if kind != "FILE_UPLOAD":
            return self._fail(400, "invalid_params", "source must be FILE_UPLOAD or PULL_FROM_URL.")
        try:
            size, chunk, count = (
                int(source["video_size"]),
                int(source["chunk_size"]),
                int(source["total_chunk_count"]),
            )
        except (KeyError, TypeError, ValueError):
            return self._fail(400, "invalid_params", "video_size, chunk_size, total_chunk_count.")
        valid = (
            size > 0
            and 0 < chunk <= size
            and count == size // chunk
            and 1 <= count <= 1000
            and (chunk == size if size < 5 * MB else 5 * MB <= chunk <= 64 * MB)
            and (size <= 64 * MB or count > 1)
            and size - chunk * (count - 1) <= 128 * MB
        )
        if not valid:
            return self._fail(400, "invalid_params", "The chunk sizes break the upload rules.")
        return None

    def _next_publish_id(self) -> str:
        with self._ids:
            self._counter += 1
            return f"v_pub_file~v2-1.{7_300_000_000_000_000_000 + self._counter}"

    @route("PUT", r"/video/")
    def upload_chunk(self, request: FakeRequest) -> FakeResponse:
        with self.lock:
            upload = self.uploads.get(self._upload_ids.get(request.arg("upload_id", ""), ""))
        if upload is None or upload["upload_url"] != f"https://{UPLOAD_HOST}{request.path}?" + (
            f"upload_id={request.arg('upload_id')}&upload_token={request.arg('upload_token')}"
        ):
            return self._fail(404, "invalid_params", "No upload for this URL.")
        match = _RANGE.match(request.headers.get("content-range", ""))
        if match is None:
            return self._fail(400, "invalid_params", "Content-Range is required.")
        first, last, total = (int(g) for g in match.groups())
        if total != upload["size"] or last - first + 1 != len(request.body):
            return self._fail(400, "invalid_params", "Content-Range does not match the body.")
        if first != upload["received"]:
            return self._fail(400, "invalid_params", "Chunks must be uploaded in order.")
        if self.faults.strikes("drop_mid_upload"):
            return FakeResponse(drop=True)  # nothing of this chunk is kept
        with self.lock:
            upload["received"] = last + 1
        if upload["received"] < upload["size"]:
            return FakeResponse(status=206)
        self._complete(upload)
        return FakeResponse(status=201)

    def _complete(self, upload: dict) -> None:
        """Every byte arrived (or was pulled): the post now exists and is processing."""
        with self.lock:
            if upload["completed_at"] is not None:
                return
            upload["completed_at"] = time.time()
            upload["processing_s"] = self.faults.processing_s * (
                4 if self.faults.strikes("slow_processing") else 1
            )
            upload["fails"] = self.faults.strikes("processing_fails")
            upload["post_id"] = str(7_400_000_000_000_000_000 + len(self.posts) + 1)
        self.store(
            StoredPost(
                id=upload["publish_id"],
                account=upload["open_id"],
                text=upload["caption"],
                media=["video"],
                state="processing",
                extra={"post_id": upload["post_id"], "privacy_level": upload["privacy_level"]},
            )
        )

    @route("POST", r"/v2/post/publish/status/fetch/")
    def status_fetch(self, request: FakeRequest) -> FakeResponse:
        found = self._authorised(request)
        if isinstance(found, FakeResponse):
            return found
        open_id, _ = found
        if self._over_limit(request.bearer, "status", STATUS_PER_MINUTE) or self.faults.strikes(
            "poll_rate_limit"
        ):
            return self._rate_limited()
        publish_id = request.json().get("publish_id", "")
        with self.lock:
            upload = self.uploads.get(publish_id)
        if upload is None or upload["open_id"] != open_id:
            return self._fail(400, "invalid_params", "publish_id does not exist.")
        return self._ok(self._status(upload))

    def _status(self, upload: dict) -> dict:
        data = {"status": "PROCESSING_UPLOAD", "uploaded_bytes": upload["received"]}
        if upload["source"] == "PULL_FROM_URL":
            data = {"status": "PROCESSING_DOWNLOAD", "downloaded_bytes": upload["size"]}
        if upload["completed_at"] is None:
            return data
        elapsed = time.time() - upload["completed_at"]
        if elapsed < upload["processing_s"] / 2:
            return data
        if elapsed < upload["processing_s"]:
            return {**data, "status": "PROCESSING_DOWNLOAD"}
        post = self.posts[upload["publish_id"]]
        if upload["fails"]:
            post.state = "failed"
            return {"status": "FAILED", "fail_reason": FAIL_REASONS[len(upload["caption"]) % 3]}
        post.state = "published"
        data = {**data, "status": "PUBLISH_COMPLETE", "publicaly_available_post_id": []}
        # Public posts are moderated before TikTok names them; private ones never are.
        moderated = elapsed >= upload["processing_s"] * 2
        if upload["privacy_level"] != "SELF_ONLY" and moderated:
            data["publicaly_available_post_id"] = [int(upload["post_id"])]
        return data

    @route("POST", r"/v2/video/list/")
    def video_list(self, request: FakeRequest) -> FakeResponse:
        """The creator's public videos, newest first, once moderated and listed."""
        found = self._authorised(request)
        if isinstance(found, FakeResponse):
            return found
        open_id, _ = found
        if self.faults.strikes("poll_rate_limit") or self.spend(open_id, "video_list").refused:
            return self._rate_limited()
        fields = (request.arg("fields") or "id").split(",")
        max_count = min(int(request.json().get("max_count") or 10), 20)
        now = time.time()
        with self.lock:
            uploads = [u for u in self.uploads.values() if u["open_id"] == open_id]
        videos = []
        for upload in sorted(uploads, key=lambda u: -(u["completed_at"] or 0)):
            post = self.posts.get(upload["publish_id"])
            if post is None:
                continue
            status = self._status(upload)
            if not status.get("publicaly_available_post_id") or post.visible_at > now:
                continue
            video = {
                "id": upload["post_id"],
                "create_time": int(post.created_at),
                "share_url": f"https://www.tiktok.com/@{self.accounts[open_id]['handle']}"
                f"/video/{upload['post_id']}",
                # The caption set at init is the video's description; direct posts have
                # no separate title.
                "video_description": upload["caption"][:LISTED_DESCRIPTION_MAX],
                "title": "",
                "duration": 12,
            }
            videos.append({k: v for k, v in video.items() if k in fields})
        return self._ok({"videos": videos[:max_count], "cursor": 0, "has_more": False})

    @route("POST", r"/v2/video/query/")
    def video_query(self, request: FakeRequest) -> FakeResponse:
        """The creator's videos named in `filters.video_ids`, with the counts asked for in
        `fields` (they grow with the video's age; scope video.list)."""
        found = self._authorised(request)
        if isinstance(found, FakeResponse):
            return found
        open_id, _ = found
        if self.spend(open_id, "video_query").refused:
            return self._rate_limited()
        fields = (request.arg("fields") or "id").split(",")
        wanted = {str(v) for v in (request.json().get("filters") or {}).get("video_ids") or []}
        clock = self.clock
        videos = []
        with self.lock:
            for upload in self.uploads.values():
                post = self.posts.get(upload["publish_id"])
                if upload["open_id"] != open_id or str(upload["post_id"]) not in wanted or not post:
                    continue
                grown = engagement.grown(post, clock())
                video = {
                    "id": str(upload["post_id"]),
                    "like_count": grown["likes"],
                    "comment_count": grown["replies"],
                    "share_count": grown["reposts"],
                    "view_count": grown["views"],
                }
                videos.append({k: v for k, v in video.items() if k in fields})
        return self._ok({"videos": videos, "cursor": 0, "has_more": False})

    @route("GET", r"/v2/user/info/")
    def user_info(self, request: FakeRequest) -> FakeResponse:
        found = self._authorised(request)
        if isinstance(found, FakeResponse):
            return found
        open_id, _ = found
        with self.lock:
            made = sum(1 for u in self.uploads.values() if u["open_id"] == open_id)
        user = {"open_id": open_id, "follower_count": engagement.followers(open_id, made)}
        return self._ok({"user": user})

    # --- tokens ------------------------------------------------------------------------

    @route("POST", r"/v2/oauth/token/")
    def token(self, request: FakeRequest) -> FakeResponse:
        form = request.form()
        if form.get("grant_type") != "refresh_token":
            return json_response(
                {"error": "unsupported_grant_type", "error_description": "", "log_id": ""}, 400
            )
        with self.lock:
            open_id = self.refresh_tokens.get(form.get("refresh_token", ""))
        if open_id is None:
            return json_response(
                {
                    "error": "invalid_grant",
                    "error_description": "Refresh token is invalid or expired.",
                    "log_id": self.new_id(),
                },
                400,
            )
        issued = self._issue(open_id)
        return json_response(
            {
                "open_id": open_id,
                "scope": issued["scope"],
                "access_token": issued["access_token"],
                "expires_in": 86400,
                "refresh_token": issued["refresh_token"],
                "refresh_expires_in": 31536000,
                "token_type": "Bearer",
            }
        )


FAKE = TikTokFake
