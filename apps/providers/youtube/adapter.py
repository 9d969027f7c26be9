"""YouTube Data API v3: one video per post, sent through a resumable upload session.

The session URI is the idempotency handle. It is written to `ctx.checkpoint` before the
first byte moves, so any later attempt probes that session instead of opening a second one
(which would make a second video): 200/201 means the video exists, 308 says where to
resume, 404/410 means the session is gone. A gone session is replaced only when the final
byte was never sent; otherwise the upload may have completed and only the channel's uploads
can tell.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import httpx
from django.conf import settings
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers import httpcall, oauth
from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    MediaPayload,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import (
    ErrorKind,
    ProviderError,
    classify_status,
    classify_transport,
    parse_retry_after,
)

UPLOAD = "https://www.googleapis.com/upload/youtube/v3/videos"
API = "https://www.googleapis.com/youtube/v3"
AUTHORIZE = "https://accounts.google.com/o/oauth2/v2/auth"
TOKEN = "https://oauth2.googleapis.com/token"
SCOPES = [
    "https://www.googleapis.com/auth/youtube.upload",
    "https://www.googleapis.com/auth/youtube.readonly",  # reconciliation lists uploads
]
REFRESH_MARGIN = timedelta(minutes=5)
# Chunks must be multiples of 256 KiB (except the last).
CHUNK_SIZE = 32 * 256 * 1024
PRIVACY_STATUSES = ("public", "unlisted", "private")
DEFAULT_PRIVACY = "public"
# Daily quotas reset at midnight Pacific time.
QUOTA_ZONE = ZoneInfo("America/Los_Angeles")

QUOTA_REASONS = frozenset({"quotaExceeded"})
THROTTLE_REASONS = frozenset({"rateLimitExceeded", "userRateLimitExceeded"})
AUTH_REASONS = frozenset({"authError", "invalidCredentials"})
PERMISSION_REASONS = frozenset({"insufficientPermissions", "forbidden", "youtubeSignupRequired"})
CONTENT_REASONS = frozenset(
    {
        "invalidTitle",
        "invalidDescription",
        "invalidTags",
        "invalidCategoryId",
        "mediaBodyRequired",
        "invalidPublishAt",
        "invalidVideoMetadata",
        "invalidFilename",
    }
)


def next_pacific_midnight(now: datetime | None = None) -> datetime:
    local = (now or datetime.now(UTC)).astimezone(QUOTA_ZONE)
    midnight = datetime.combine(local.date() + timedelta(days=1), datetime.min.time(), QUOTA_ZONE)
    return midnight.astimezone(UTC)


def _error(response: httpx.Response, *, is_create: bool = False) -> ProviderError:
    """Classify by the first error's `reason` (the HTTP status alone is ambiguous: 403 is
    both a spent quota and a missing permission)."""
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    errors = error.get("errors") or [{}]
    reason = errors[0].get("reason") if isinstance(errors[0], dict) else None
    message = error.get("message") or ""
    status = response.status_code

    def make(kind: ErrorKind, **extra) -> ProviderError:
        return ProviderError(kind, message or str(reason), code=reason, http_status=status, **extra)

    if reason in QUOTA_REASONS:
        return make(ErrorKind.RATE_LIMITED, retry_at=next_pacific_midnight())
    if reason == "uploadLimitExceeded":
        # The channel's own rolling 24 h upload cap.
        return make(ErrorKind.RATE_LIMITED, retry_at=datetime.now(UTC) + timedelta(hours=24))
    if reason in THROTTLE_REASONS:
        return make(
            ErrorKind.RATE_LIMITED, retry_at=parse_retry_after(response.headers.get("Retry-After"))
        )
    if reason in AUTH_REASONS or status == 401:
        return make(ErrorKind.AUTH_EXPIRED)
    if reason in PERMISSION_REASONS:
        return make(ErrorKind.PERMISSION_MISSING)
    if reason in CONTENT_REASONS:
        return make(ErrorKind.CONTENT_REJECTED)
    if status >= 500:
        # Every call here is safe to repeat: the upload itself resumes through the session.
        return make(ErrorKind.PROVIDER_UNAVAILABLE)
    return classify_status(response, is_create=is_create, code=reason, message=message)


def _resume_offset(response: httpx.Response) -> int:
    """308's `Range: bytes=0-N` means N+1 bytes arrived; no Range means none did."""
    value = response.headers.get("Range", "")
    if "-" not in value:
        return 0
    return int(value.rsplit("-", 1)[1]) + 1


def _published(video: dict) -> PublishedSegment:
    return PublishedSegment(
        provider_post_id=video["id"],
        provider_url=f"https://www.youtube.com/watch?v={video['id']}",
        published_at=timezone.now(),
    )


class YouTubeAdapter(Adapter):
    platform = "youtube"
    # Re-sending resumes the same session: it cannot make a second video.
    retry_safe_after_unknown = True
    # Sessions live about a week; past that only the uploads listing can settle an attempt.
    idempotency_window = timedelta(days=6)

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        video = self._video(segment, reply_to)
        title, privacy = self._title_and_privacy(ctx)
        with self._client(ctx) as client:
            session, offset = ctx.checkpoint.get("upload_session_uri"), 0
            if session:
                state, value = self._probe(client, session, video.size_bytes)
                if state == "done":
                    return _published(value)
                if state == "resume":
                    offset = value
                elif ctx.checkpoint.get("upload_final_sent"):
                    raise ProviderError(
                        ErrorKind.OUTCOME_UNKNOWN,
                        "The upload session expired after the whole video was sent; the "
                        "video may exist. Check the channel's uploads.",
                        code="session_gone",
                    )
                else:
                    session = None  # expired before the final byte: no video can exist
            if not session:
                session = self._open_session(client, ctx, segment, video, title, privacy)
            return self._send(client, ctx, session, video, offset)

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """Strong while the session lives (probe it); afterwards, best effort through the
        channel's uploads playlist, matched by title and time."""
        with self._client(ctx) as client:
            session = ctx.checkpoint.get("upload_session_uri")
            if session:
                size = ctx.checkpoint.get("upload_size") or 0
                state, value = self._probe(client, session, size)
                if state == "done":
                    return _published(value)
                if state == "resume" or not ctx.checkpoint.get("upload_final_sent"):
                    return None
            return self._find_upload(client, ctx, not_before)

    # Steps -----------------------------------------------------------------------------

    @staticmethod
    def _client(ctx: PublishContext) -> httpx.Client:
        return httpcall.client(
            headers={"Authorization": f"Bearer {ctx.credentials.get('access_token', '')}"},
            timeout=settings.PROVIDER_TIMEOUT_S,
        )

    @staticmethod
    def _video(segment: SegmentPayload, reply_to: ReplyTarget | None) -> MediaPayload:
        videos = [m for m in segment.media if m.kind == "video"]
        if reply_to is not None or len(videos) != 1 or len(segment.media) != 1:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "A YouTube post is exactly one video.",
                code="one_video_required",
            )
        return videos[0]

    @staticmethod
    def _title_and_privacy(ctx: PublishContext) -> tuple[str, str]:
        title = (ctx.settings.get("title") or "").strip()
        # Optional in the catalog, defaulting to public (as YouTube itself does).
        privacy = ctx.settings.get("privacy_status") or DEFAULT_PRIVACY
        if not title:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED, "A YouTube video needs a title.", code="title_required"
            )
        if privacy not in PRIVACY_STATUSES:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                f"Choose the video's privacy: {', '.join(PRIVACY_STATUSES)}.",
                code="privacy_status_required",
            )
        return title, privacy

    def _open_session(
        self,
        client: httpx.Client,
        ctx: PublishContext,
        segment: SegmentPayload,
        video: MediaPayload,
        title: str,
        privacy: str,
    ) -> str:
        """Create the upload session (nothing is visible yet) and record it before any
        byte of the video moves."""
        snippet = {"title": title, "description": segment.text}
        for key in ("tags", "categoryId"):
            if ctx.settings.get(key):
                snippet[key] = ctx.settings[key]
        status = {
            "privacyStatus": privacy,
            "selfDeclaredMadeForKids": bool(ctx.settings.get("made_for_kids", False)),
        }
        if ctx.settings.get("publish_at"):
            status["publishAt"] = ctx.settings["publish_at"]
        params = {"uploadType": "resumable", "part": "snippet,status"}
        if "notify_subscribers" in ctx.settings:
            params["notifySubscribers"] = str(bool(ctx.settings["notify_subscribers"])).lower()
        try:
            response = client.post(
                UPLOAD,
                params=params,
                content=json.dumps({"snippet": snippet, "status": status}),
                headers={
                    "Content-Type": "application/json; charset=UTF-8",
                    "X-Upload-Content-Length": str(video.size_bytes),
                    "X-Upload-Content-Type": video.mime_type,
                },
            )
        except httpx.HTTPError as exc:
            raise classify_transport(exc, is_create=False) from exc
        if response.status_code != 200 or not response.headers.get("Location"):
            raise _error(response)
        session = response.headers["Location"]
        ctx.checkpoint.update(
            upload_session_uri=session, upload_size=video.size_bytes, upload_final_sent=False
        )
        # Written to the database now: a worker killed mid-upload must leave the session
        # for the next attempt, which resumes it instead of making a second video.
        ctx.persist_checkpoint()
        return session

    @staticmethod
    def _probe(client: httpx.Client, session: str, size: int) -> tuple[str, object]:
        """("done", video) | ("resume", offset) | ("gone", None)."""
        try:
            response = client.put(
                session, content=b"", headers={"Content-Range": f"bytes */{size}"}
            )
        except httpx.HTTPError as exc:
            raise classify_transport(exc, is_create=False) from exc
        if response.status_code in (200, 201):
            return "done", response.json()
        if response.status_code == 308:
            return "resume", _resume_offset(response)
        if response.status_code in (404, 410):
            return "gone", None
        raise _error(response)

    @staticmethod
    def _send(
        client: httpx.Client,
        ctx: PublishContext,
        session: str,
        video: MediaPayload,
        offset: int,
    ) -> PublishedSegment:
        size = video.size_bytes
        with video.open() as fh:
            while True:
                fh.seek(offset)
                chunk = fh.read(CHUNK_SIZE)
                last = offset + len(chunk) - 1
                is_final = last >= size - 1
                if is_final and not ctx.checkpoint.get("upload_final_sent"):
                    # From here on the video may exist: a lost session is no longer a
                    # reason to start over (kept at once, like the session itself).
                    ctx.checkpoint["upload_final_sent"] = True
                    ctx.persist_checkpoint()
                try:
                    response = client.put(
                        session,
                        content=chunk,
                        headers={"Content-Range": f"bytes {offset}-{last}/{size}"},
                    )
                except httpx.HTTPError as exc:
                    raise ProviderError(
                        ErrorKind.OUTCOME_UNKNOWN if is_final else ErrorKind.PROVIDER_UNAVAILABLE,
                        "The upload was interrupted; the next attempt resumes the same session.",
                        code=type(exc).__name__,
                    ) from exc
                if response.status_code in (200, 201):
                    return _published(response.json())
                if response.status_code != 308:
                    raise _error(response, is_create=is_final)
                offset = _resume_offset(response)

    @staticmethod
    def _find_upload(
        client: httpx.Client, ctx: PublishContext, not_before: datetime
    ) -> PublishedSegment | None:
        try:
            channels = client.get(
                f"{API}/channels", params={"part": "contentDetails", "mine": "true"}
            )
            if channels.status_code != 200:
                raise _error(channels)
            items = channels.json().get("items") or []
            if not items:
                return None
            playlist = items[0]["contentDetails"]["relatedPlaylists"]["uploads"]
            listing = client.get(
                f"{API}/playlistItems",
                params={"part": "snippet", "playlistId": playlist, "maxResults": 25},
            )
        except httpx.HTTPError as exc:
            raise classify_transport(exc, is_create=False) from exc
        if listing.status_code != 200:
            raise _error(listing)
        since = not_before - timedelta(minutes=2)
        title = (ctx.settings.get("title") or "").strip()
        for item in listing.json().get("items", []):
            snippet = item.get("snippet", {})
            at = datetime.fromisoformat(snippet.get("publishedAt", "1970-01-01T00:00:00Z"))
            if snippet.get("title", "").strip() == title and at >= since:
                video_id = snippet["resourceId"]["videoId"]
                return PublishedSegment(
                    provider_post_id=video_id,
                    provider_url=f"https://www.youtube.com/watch?v={video_id}",
                    published_at=at,
                )
        return None

    # Tokens and connect ----------------------------------------------------------------

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        expiry = account.token_expires_at or oauth.parse_expires_at(credentials.get("expires_at"))
        if not oauth.is_near_expiry(expiry, REFRESH_MARGIN):
            return None
        body = oauth.token_request(
            TOKEN,
            {
                "grant_type": "refresh_token",
                "refresh_token": credentials.get("refresh_token", ""),
                "client_id": settings.GOOGLE_CLIENT_ID,
                "client_secret": settings.GOOGLE_CLIENT_SECRET,
            },
        )
        expires = oauth.expires_at(body.get("expires_in"))
        # Google usually keeps the refresh token; keep ours unless a new one is sent.
        return {
            **credentials,
            "access_token": body["access_token"],
            "refresh_token": body.get("refresh_token") or credentials.get("refresh_token", ""),
            "expires_at": expires.isoformat() if expires else None,
        }

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        # access_type=offline with prompt=consent is what yields a refresh token.
        query = {
            "client_id": settings.GOOGLE_CLIENT_ID,
            "redirect_uri": redirect_uri,
            "response_type": "code",
            "scope": " ".join(SCOPES),
            "access_type": "offline",
            "prompt": "consent",
            "include_granted_scopes": "true",
            "state": state,
            "code_challenge": code_challenge,
            "code_challenge_method": "S256",
        }
        return f"{AUTHORIZE}?{urlencode(query)}"

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        body = oauth.token_request(
            TOKEN,
            {
                "grant_type": "authorization_code",
                "code": code,
                "code_verifier": code_verifier,
                "client_id": settings.GOOGLE_CLIENT_ID,
                "client_secret": settings.GOOGLE_CLIENT_SECRET,
                "redirect_uri": redirect_uri,
            },
        )
        expires = oauth.expires_at(body.get("expires_in"))
        try:
            with httpcall.client(
                headers={"Authorization": f"Bearer {body['access_token']}"},
                timeout=settings.PROVIDER_TIMEOUT_S,
            ) as client:
                response = client.get(f"{API}/channels", params={"part": "snippet", "mine": "true"})
        except httpx.HTTPError as exc:
            raise classify_transport(exc, is_create=False) from exc
        if response.status_code != 200:
            raise _error(response)
        items = response.json().get("items") or []
        if not items:
            raise ProviderError(
                ErrorKind.PERMISSION_MISSING,
                "This Google account has no YouTube channel to upload to.",
                code="no_channel",
            )
        channel = items[0]
        snippet = channel.get("snippet", {})
        return ConnectedIdentity(
            remote_id=channel["id"],
            handle=snippet.get("customUrl") or snippet.get("title", ""),
            display_name=snippet.get("title", ""),
            credentials={
                "access_token": body["access_token"],
                "refresh_token": body.get("refresh_token", ""),
                "expires_at": expires.isoformat() if expires else None,
            },
            token_expires_at=expires,
        )


register_adapter(YouTubeAdapter())
