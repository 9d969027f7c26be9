"""YouTube Data API v3 as Google documents it: a resumable upload session opened by a POST
(its URI in `Location`), chunk PUTs answered 308 with the `Range` received so far, a status
probe (`Content-Range: bytes */N`) answering 308 with that range or 200 with the video once
complete, 404 (or 410, `gone_status`) once a session expired: `session_ttl_s` after it was
opened on the fake's `clock` (about a week), by `expire_sessions()`, or under a chunk
(`session_expires`: the chunk is not kept); videos.list for processing status, the
channel's uploads playlist, and Google's token endpoint.

Chunks must be multiples of 256 KiB except the last. The video exists once the last byte
arrived; processing only affects playback.

Google documents that videos uploaded through `videos.insert` by an API project created
after 28 July 2020 that has not passed its compliance audit are restricted to private
viewing. The fake locks them private whatever `privacyStatus` was asked for:
`project_audited=False` for every channel (the project is ours, shared by all accounts), or
`lock_private(channel)` for one (a soak account switch). When Google applies the lock is
not documented (field reports describe the video turning private at or shortly after the
upload); the fake models the worst case for a client that trusts its own request: the
video resource answered at the end of the upload already says `private`.

`enforce_limits` (per channel): the reads our lookups and polls make are charged against
the documented default quota of 10,000 units a day (videos.list, channels.list and
playlistItems.list 1 unit, search.list 100), which resets at midnight Pacific time; past it
Google answers 403 `quotaExceeded` (domain `youtube.quota`) with no header saying when to
come back. Google counts per API project, shared by every channel; the fake counts per
channel, so one account can be switched on its own.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
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
from loadtest.platform_fakes.limits import ENFORCE, Allowance, LimitedReads, next_midnight
from loadtest.platform_fakes.youtube_comments import CommentsMixin

API_HOST = "www.googleapis.com"
TOKEN_HOST = "oauth2.googleapis.com"
UPLOAD_PATH = "/upload/youtube/v3/videos"
CHUNK_MULTIPLE = 256 * 1024
PRIVACY = ("public", "unlisted", "private")
SESSION_TTL_S = 7 * 86400
_RANGE = re.compile(r"bytes (?:(\d+)-(\d+)|\*)/(\d+)\Z")
DAILY_UNITS = Allowance(limit=10_000, resets_at=next_midnight("America/Los_Angeles"))
QUOTA_EXCEEDED = (
    "The request cannot be completed because you have exceeded your "
    '<a href="/youtube/v3/getting-started#quota">quota</a>.'
)


def _error(status: int, reason: str, message: str, domain: str = "youtube.video") -> FakeResponse:
    return json_response(
        {
            "error": {
                "code": status,
                "message": message,
                "errors": [{"message": message, "domain": domain, "reason": reason}],
            }
        },
        status,
    )


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).isoformat().replace("+00:00", "Z")


class YouTubeFake(CommentsMixin, LimitedReads, PlatformFake):
    platform = "youtube"
    hosts = (API_HOST, TOKEN_HOST)
    # `lock_private` per channel, as `lock_private(channel)` does (the soak's switch).
    # How the channel's uploads playlist shows its owner a video that is not public, as
    # field reports describe it (Google documents neither): `private_placeholder`, a private
    # video is listed as "Private video" / "This video is private." (its id kept);
    # `unlisted_hidden`, an unlisted or private video is left out of the playlist.
    # videos.list and search.list (forMine) show the owner every video as it is.
    account_behaviours = ("lock_private", "private_placeholder", "unlisted_hidden", ENFORCE)
    ALLOWANCES = {"units": DAILY_UNITS}

    def __init__(
        self,
        faults=None,
        *,
        session_ttl_s: float = SESSION_TTL_S,
        gone_status: int = 404,
        project_audited: bool = True,
    ) -> None:
        super().__init__(faults)
        self.sessions: dict[str, dict] = {}  # upload_id -> session state
        self.session_ttl_s = session_ttl_s
        self.gone_status = gone_status  # Google documents both 404 and 410
        self.project_audited = project_audited  # False: every upload is locked private
        self.locked_channels: set[str] = set()  # channels whose uploads are locked private
        self.clock: Callable[[], float] = time.time

    # --- accounts ----------------------------------------------------------------------

    def new_account(self, handle: str) -> dict:
        channel = "UC" + self.new_id() + self.new_id()[:6]
        access, refresh = f"ya29.{self.new_id()}", f"1//{self.new_id()}"
        with self.lock:
            self.accounts[channel] = {
                "handle": handle,
                "access_tokens": {access},  # a refresh adds one; earlier ones stay valid
                "refresh_token": refresh,
            }
        return {
            "remote_id": channel,
            "handle": f"@{handle}",
            "credentials": {
                "access_token": access,
                "refresh_token": refresh,
                "expires_at": (datetime.now(UTC) + timedelta(hours=1)).isoformat(),
            },
            "settings": {},
        }

    def sample_content(self, rng: random.Random, marker: str) -> dict:
        settings = {"title": f"{marker} Sourdough, start to finish"}
        if rng.random() < 0.5:
            settings["privacy_status"] = rng.choice(PRIVACY)
        return {
            "segments": [{"text": f"{marker} How this loaf was made.", "media": ["video"]}],
            "settings": settings,
        }

    def lock_private(self, channel: str, locked: bool = True) -> None:
        """Lock one channel's uploads private (as an unaudited project's are)."""
        with self.lock:
            (self.locked_channels.add if locked else self.locked_channels.discard)(channel)

    def _locks_private(self, channel: str) -> bool:
        with self.lock:
            locked = not self.project_audited or channel in self.locked_channels
        return locked or self.switched(channel, "lock_private")

    def expire_sessions(self) -> None:
        """Sessions live about a week; this ends every open one now (gone from then on)."""
        with self.lock:
            for session in self.sessions.values():
                session["expired"] = True

    def _channel(self, request: FakeRequest) -> str | None:
        with self.lock:
            for channel, account in self.accounts.items():
                if request.bearer in account["access_tokens"]:
                    return channel
        return None

    def _unauthorised(self) -> FakeResponse:
        return _error(401, "authError", "Invalid Credentials", domain="global")

    # --- the resumable upload ----------------------------------------------------------

    @route("POST", UPLOAD_PATH)
    def open_session(self, request: FakeRequest) -> FakeResponse:
        channel = self._channel(request)
        if channel is None:
            return self._unauthorised()
        if request.arg("uploadType") != "resumable":
            return _error(400, "invalidParameter", "Only resumable uploads are served here.")
        if self.faults.strikes("rate_limit"):
            return _error(429, "rateLimitExceeded", "Too many requests.", domain="usageLimits")
        if self.faults.strikes("server_error_before"):
            return _error(503, "backendError", "Backend Error", domain="global")
        try:
            size = int(request.headers["x-upload-content-length"])
        except (KeyError, ValueError):
            return _error(400, "uploadContentLengthRequired", "X-Upload-Content-Length.")
        resource = request.json()
        snippet, status = resource.get("snippet") or {}, resource.get("status") or {}
        title = snippet.get("title") or ""
        if not title.strip() or len(title) > 100 or "<" in title or ">" in title:
            return _error(400, "invalidTitle", "The request metadata specifies an invalid title.")
        description = snippet.get("description") or ""
        if len(description.encode()) > 5000 or "<" in description or ">" in description:
            return _error(400, "invalidDescription", "The video description is invalid.")
        if status.get("privacyStatus", "public") not in PRIVACY:
            return _error(400, "invalidVideoMetadata", "Invalid privacyStatus.")
        upload_id = self.new_id() + self.new_id()
        with self.lock:
            self.sessions[upload_id] = {
                "channel": channel,
                "size": size,
                "received": 0,
                "snippet": snippet,
                "privacy": status.get("privacyStatus", "public"),
                "video_id": None,
                "expired": False,
                "opened_at": self.clock(),
            }
        location = (
            f"https://{API_HOST}{UPLOAD_PATH}?uploadType=resumable&upload_id={upload_id}"
            f"&part={request.arg('part', 'snippet,status')}"
        )
        return FakeResponse(status=200, headers={"Location": location})

    @route("PUT", UPLOAD_PATH)
    def put_bytes(self, request: FakeRequest) -> FakeResponse:
        with self.lock:
            session = self.sessions.get(request.arg("upload_id", ""))
            if session is not None and self.clock() - session["opened_at"] > self.session_ttl_s:
                session["expired"] = True
        if session is None or session["expired"]:
            return self._gone()
        if self._channel(request) != session["channel"]:
            return self._unauthorised()
        match = _RANGE.match(request.headers.get("content-range", ""))
        if match is None or int(match.group(3)) != session["size"]:
            return _error(400, "badContent", "Content-Range does not match the session.")
        if match.group(1) is None:  # a status probe
            return self._where(session)
        if session["video_id"] is None and self.faults.strikes("session_expires"):
            with self.lock:
                session["expired"] = True
            return self._gone()
        first, last = int(match.group(1)), int(match.group(2))
        is_final = last == session["size"] - 1
        if first != session["received"] or last - first + 1 != len(request.body):
            return _error(400, "badContent", "The chunk does not continue the upload.")
        if not is_final and len(request.body) % CHUNK_MULTIPLE:
            return _error(400, "badContent", "Chunks must be multiples of 256 KiB.")
        if self.faults.strikes("drop_mid_upload"):
            with self.lock:  # part of the chunk landed before the connection went
                session["received"] += len(request.body) // 2
            return FakeResponse(drop=True)
        with self.lock:
            session["received"] = last + 1
        if not is_final:
            return self._where(session)
        self._make_video(session)
        if self.faults.strikes("server_error_after"):
            return _error(503, "backendError", "Backend Error", domain="global")
        response = self._where(session)
        if self.faults.strikes("timeout_after_accept"):
            response.delay_s = self.faults.hang_s
        return response

    def _throttled(self) -> FakeResponse:
        """Google's answer to reads coming too fast: 403 `rateLimitExceeded`, with no header
        saying when to come back (the daily quota's `quotaExceeded` resets at midnight
        Pacific)."""
        return _error(403, "rateLimitExceeded", "Rate limit exceeded.", domain="usageLimits")

    def _quota(self, channel: str, units: int = 1) -> FakeResponse | None:
        """`units` of the day's quota, or Google's refusal once it is spent."""
        if self.spend(channel, "units", cost=units).refused:
            return _error(403, "quotaExceeded", QUOTA_EXCEEDED, domain="youtube.quota")
        return None

    def _gone(self) -> FakeResponse:
        if self.gone_status == 410:
            return _error(410, "gone", "The upload session has expired.", domain="global")
        return _error(404, "notFound", "The upload session does not exist.", domain="global")

    def _where(self, session: dict) -> FakeResponse:
        """308 with what arrived so far, or the video once every byte did."""
        if session["video_id"] is not None:
            return json_response(self._resource(self.posts[session["video_id"]]), 201)
        headers = {"Range": f"bytes=0-{session['received'] - 1}"} if session["received"] else {}
        return FakeResponse(status=308, headers=headers)

    def _make_video(self, session: dict) -> None:
        with self.lock:
            if session["video_id"] is not None:
                return
            video_id = self.new_id()[:11]
            session["video_id"] = video_id
        processing_s = self.faults.processing_s * (
            4 if self.faults.strikes("slow_processing") else 1
        )
        self.store(
            StoredPost(
                id=video_id,
                account=session["channel"],
                text=session["snippet"].get("description", ""),
                media=["video"],
                extra={
                    "title": session["snippet"].get("title", ""),
                    # What the video is, not what was asked: an unaudited project's are private.
                    "privacy": "private"
                    if self._locks_private(session["channel"])
                    else session["privacy"],
                    "privacy_requested": session["privacy"],
                    "processed_at": time.time() + processing_s,
                    "fails": self.faults.strikes("processing_fails"),
                },
            )
        )

    def _resource(self, post: StoredPost, parts: tuple[str, ...] = ("snippet", "status")) -> dict:
        resource: dict[str, object] = {
            "kind": "youtube#video",
            "etag": f"e{post.id}",
            "id": post.id,
        }
        processed = time.time() >= post.extra["processed_at"]
        failed = processed and post.extra["fails"]
        if "snippet" in parts:
            resource["snippet"] = {
                "publishedAt": _iso(post.created_at),
                "channelId": post.account,
                "title": post.extra["title"],
                "description": post.text,
            }
        if "status" in parts:
            resource["status"] = {
                "uploadStatus": "failed" if failed else "processed" if processed else "uploaded",
                "privacyStatus": post.extra["privacy"],
                **({"failureReason": "codec"} if failed else {}),
            }
        if "statistics" in parts:
            grown = engagement.grown(post, self.clock())
            resource["statistics"] = {  # counts are strings in the Data API
                "viewCount": str(grown["views"]),
                "likeCount": str(grown["likes"]),
                "favoriteCount": "0",
                "commentCount": str(grown["replies"]),
            }
        if "processingDetails" in parts:
            resource["processingDetails"] = {
                "processingStatus": "failed"
                if failed
                else "succeeded"
                if processed
                else "processing"
            }
        return resource

    # --- reading -----------------------------------------------------------------------

    @route("GET", r"/youtube/v3/videos")
    def videos_list(self, request: FakeRequest) -> FakeResponse:
        channel = self._channel(request)
        if channel is None:
            return self._unauthorised()
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        if refusal := self._quota(channel):
            return refusal
        parts = tuple((request.arg("part") or "").split(","))
        wanted = (request.arg("id") or "").split(",")
        with self.lock:
            posts = [self.posts[i] for i in wanted if i in self.posts]
        items = [self._resource(p, parts) for p in posts if p.account == channel]
        return json_response({"kind": "youtube#videoListResponse", "items": items})

    @route("DELETE", r"/youtube/v3/videos")
    def videos_delete(self, request: FakeRequest) -> FakeResponse:
        """videos.delete: 204 without a body for the channel's own video; one that is not
        there, or another channel's, is 404 videoNotFound (as Google answers either)."""
        channel = self._channel(request)
        if channel is None:
            return self._unauthorised()
        video_id = request.arg("id") or ""
        with self.lock:
            post = self.posts.get(video_id)
            if post is None or post.account != channel:
                return _error(404, "videoNotFound", "The video that you are trying to delete "
                              "cannot be found.")  # fmt: skip
            self.remove(video_id)
        return FakeResponse(204, None)

    @route("GET", r"/youtube/v3/channels")
    def channels_list(self, request: FakeRequest) -> FakeResponse:
        channel = self._channel(request)
        if channel is None:
            return self._unauthorised()
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        if refusal := self._quota(channel):
            return refusal
        handle = self.accounts[channel]["handle"]
        item = {
            "kind": "youtube#channel",
            "id": channel,
            "snippet": {"title": handle.title(), "customUrl": f"@{handle}"},
            "contentDetails": {"relatedPlaylists": {"uploads": "UU" + channel[2:]}},
        }
        if "statistics" in (request.arg("part") or ""):
            with self.lock:
                made = sum(1 for p in self.posts.values() if p.account == channel)
            subscribers = str(engagement.followers(channel, made))
            item["statistics"] = {"subscriberCount": subscribers, "hiddenSubscriberCount": False}
        return json_response({"kind": "youtube#channelListResponse", "items": [item]})

    @route("GET", r"/youtube/v3/playlistItems")
    def playlist_items(self, request: FakeRequest) -> FakeResponse:
        """The uploads playlist, newest first; a new video shows after the listing lag."""
        channel = self._channel(request)
        if channel is None:
            return self._unauthorised()
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        if refusal := self._quota(channel):
            return refusal
        if request.arg("playlistId") != "UU" + channel[2:]:
            return _error(404, "playlistNotFound", "Playlist not found.")
        limit = min(int(request.arg("maxResults", "5")), 50)
        hidden = self.switched(channel, "unlisted_hidden")
        posts = [
            p for p in self._uploads(channel) if not (hidden and p.extra["privacy"] != "public")
        ]
        items = [
            {
                "kind": "youtube#playlistItem",
                "id": f"pl{p.id}",
                "snippet": {
                    "publishedAt": _iso(p.created_at),
                    "channelId": channel,
                    **self._listed_as(channel, p),
                    "playlistId": request.arg("playlistId"),
                    "resourceId": {"kind": "youtube#video", "videoId": p.id},
                },
            }
            for p in posts[:limit]
        ]
        return json_response({"kind": "youtube#playlistItemListResponse", "items": items})

    @route("GET", r"/youtube/v3/search")
    def search(self, request: FakeRequest) -> FakeResponse:
        """search.list with forMine=true&type=video (100 quota units): the channel's own
        videos, newest first, private and unlisted ones as they are."""
        channel = self._channel(request)
        if channel is None:
            return self._unauthorised()
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        if refusal := self._quota(channel, 100):
            return refusal
        if request.arg("forMine") != "true" or request.arg("type") != "video":
            return _error(400, "invalidSearchFilter", "Only forMine video searches are served.")
        limit = min(int(request.arg("maxResults", "5")), 50)
        items = [
            {
                "kind": "youtube#searchResult",
                "id": {"kind": "youtube#video", "videoId": p.id},
                "snippet": {
                    "publishedAt": _iso(p.created_at),
                    "channelId": channel,
                    "title": p.extra["title"],
                    "description": p.text,
                },
            }
            for p in self._uploads(channel)[:limit]
        ]
        return json_response({"kind": "youtube#searchListResponse", "items": items})

    def _uploads(self, channel: str) -> list[StoredPost]:
        """The channel's videos newest first, once past the listing lag."""
        now = time.time()
        with self.lock:
            posts = [p for p in self.posts.values() if p.account == channel and p.visible_at <= now]
        return sorted(posts, key=lambda p: -p.created_at)

    def _listed_as(self, channel: str, post: StoredPost) -> dict:
        if post.extra["privacy"] == "private" and self.switched(channel, "private_placeholder"):
            return {"title": "Private video", "description": "This video is private."}
        return {"title": post.extra["title"], "description": post.text}

    # --- tokens ------------------------------------------------------------------------

    @route("POST", r"/token")
    def token(self, request: FakeRequest) -> FakeResponse:
        form = request.form()
        with self.lock:
            channel = next(
                (
                    c
                    for c, a in self.accounts.items()
                    if a["refresh_token"] == form.get("refresh_token")
                ),
                None,
            )
            if form.get("grant_type") != "refresh_token" or channel is None:
                return json_response(
                    {
                        "error": "invalid_grant",
                        "error_description": "Token has been expired or revoked.",
                    },
                    400,
                )
            access = f"ya29.{self.new_id()}"
            self.accounts[channel]["access_tokens"].add(access)
        # Google keeps the refresh token: none comes back.
        return json_response(
            {
                "access_token": access,
                "expires_in": 3599,
                "scope": "https://www.googleapis.com/auth/youtube.upload",
                "token_type": "Bearer",
            }
        )


FAKE = YouTubeFake
