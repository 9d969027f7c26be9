"""Pinterest API v5: Pins on a chosen board, with one image, 2-5 images, or a video.

Images go by URL when the pipeline prepared a public one, else inline as base64. A video is
registered, uploaded to the storage URL Pinterest hands out, and processed; the Pin is made
only once processing succeeded, so a video Pin is pending until then. Pinterest has no
idempotency handle: a lost answer is reconciled by listing the board's Pins.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import httpx
from django.conf import settings
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers import httpcall, oauth
from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    MediaPayload,
    PollSchedule,
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
from apps.providers.matching import normalize_text

API = "https://api.pinterest.com/v5"
AUTHORIZE = "https://www.pinterest.com/oauth/"
TOKEN = f"{API}/oauth/token"
SCOPES = ["boards:read", "pins:read", "pins:write", "user_accounts:read"]
REFRESH_MARGIN = timedelta(days=1)
BASE64_TYPES = ("image/jpeg", "image/png")
MAX_IMAGES = 5
# Video processing: poll every 10 s after 5 s, for up to 15 minutes.
POLL_SCHEDULE = PollSchedule(initial_delay_s=5, interval_s=10, max_wait_s=900)
MEDIA_PENDING = ("registered", "processing")


def _error(response: httpx.Response, *, is_create: bool) -> ProviderError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    body = body if isinstance(body, dict) else {}
    code = str(body["code"]) if body.get("code") is not None else None
    message = body.get("message") or ""
    status = response.status_code
    if status == 429:
        return ProviderError(
            ErrorKind.RATE_LIMITED,
            message or "Pinterest is rate limiting this account.",
            code=code,
            http_status=429,
            retry_at=_reset_at(response),
        )
    if status == 404:
        # "Board not found" and friends: the destination needs changing, not the token.
        return ProviderError(ErrorKind.CONTENT_REJECTED, message, code=code, http_status=404)
    return classify_status(response, is_create=is_create, code=code, message=message)


def _reset_at(response: httpx.Response) -> datetime | None:
    """Retry-After, else `x-ratelimit-reset` (seconds until reset, or an epoch)."""
    retry_at = parse_retry_after(response.headers.get("Retry-After"))
    value = response.headers.get("x-ratelimit-reset", "")
    if retry_at is None and value.isdigit():
        seconds = int(value)
        if seconds > 1_000_000_000:
            return datetime.fromtimestamp(seconds, tz=UTC)
        return datetime.now(UTC) + timedelta(seconds=seconds)
    return retry_at


def _call(client: httpx.Client, method: str, path: str, *, is_create: bool, **kwargs) -> dict:
    try:
        response = client.request(method, f"{API}{path}", **kwargs)
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=is_create) from exc
    if response.status_code >= 400:
        raise _error(response, is_create=is_create)
    try:
        return response.json()
    except ValueError:
        return {}


def _client(credentials: dict) -> httpx.Client:
    return httpcall.client(
        headers={"Authorization": f"Bearer {credentials.get('access_token', '')}"},
        timeout=settings.PROVIDER_TIMEOUT_S,
    )


def _pin_time(value: str | None) -> datetime | None:
    """Pin timestamps are UTC without an offset (2026-03-01T10:00:00)."""
    if not value:
        return None
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _published(pin: dict) -> PublishedSegment:
    return PublishedSegment(
        provider_post_id=str(pin["id"]),
        provider_url=f"https://www.pinterest.com/pin/{pin['id']}/",
        published_at=_pin_time(pin.get("created_at")) or timezone.now(),
    )


class PinterestAdapter(Adapter):
    platform = "pinterest"
    poll_schedule = POLL_SCHEDULE

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        pin = self._pin_fields(ctx, segment, reply_to)
        videos = [m for m in segment.media if m.kind == "video"]
        images = [m for m in segment.media if m.kind != "video"]
        with _client(ctx.credentials) as client:
            if videos:
                if images or len(videos) > 1:
                    raise ProviderError(
                        ErrorKind.CONTENT_REJECTED,
                        "A Pin holds one video, or images, not both.",
                        code="media_mix",
                    )
                return self._video(client, ctx, pin, videos[0])
            if not images or len(images) > MAX_IMAGES:
                raise ProviderError(
                    ErrorKind.CONTENT_REJECTED,
                    f"A Pin needs an image (up to {MAX_IMAGES}) or a video.",
                    code="media_count",
                )
            pin["media_source"] = self._image_source(images)
            if len(images) == 1 and images[0].alt_text:
                pin["alt_text"] = images[0].alt_text
            return _published(_call(client, "POST", "/pins", json=pin, is_create=True))

    def poll_segment(self, ctx: PublishContext, pending: PublishedSegment) -> PublishedSegment:
        """Wait for the video to process, then make the Pin (the irreversible call)."""
        media_id = pending.provider_post_id
        with _client(ctx.credentials) as client:
            media = _call(client, "GET", f"/media/{media_id}", is_create=False)
            status = media.get("status")
            if status in MEDIA_PENDING:
                return pending
            if status != "succeeded":
                raise ProviderError(
                    ErrorKind.CONTENT_REJECTED,
                    "Pinterest could not process the video.",
                    code=f"media_{status}",
                )
            pin = dict(ctx.checkpoint.get("video_pin") or {})
            if not pin:
                raise ProviderError(
                    ErrorKind.UNKNOWN,
                    "The Pin's saved details were lost; retry the post.",
                    code="checkpoint_missing",
                )
            return _published(_call(client, "POST", "/pins", json=pin, is_create=True))

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """Best effort: the board's recent Pins with the same title, link and description,
        made after the attempt began."""
        board_id = ctx.settings.get("board_id")
        if not board_id:
            return None
        with _client(ctx.credentials) as client:
            body = _call(
                client, "GET", f"/boards/{board_id}/pins", params={"page_size": 25}, is_create=False
            )
        since = not_before - timedelta(minutes=2)
        title, link = ctx.settings.get("title") or "", ctx.settings.get("link") or ""
        wanted = normalize_text(segment.text)
        for pin in body.get("items", []):
            created = _pin_time(pin.get("created_at"))
            if (
                (pin.get("title") or "") == title
                and (pin.get("link") or "") == link
                and normalize_text(pin.get("description")) == wanted
                and created is not None
                and created >= since
            ):
                return _published(pin)
        return None

    def list_boards(self, ctx: PublishContext) -> list[dict]:
        """The account's boards (id, name, privacy) to choose the destination from."""
        boards, bookmark = [], None
        with _client(ctx.credentials) as client:
            while True:
                params = {"page_size": 100, **({"bookmark": bookmark} if bookmark else {})}
                body = _call(client, "GET", "/boards", params=params, is_create=False)
                boards += [
                    {"id": b["id"], "name": b.get("name", ""), "privacy": b.get("privacy", "")}
                    for b in body.get("items", [])
                ]
                bookmark = body.get("bookmark")
                if not bookmark:
                    return boards

    # Steps -----------------------------------------------------------------------------

    @staticmethod
    def _pin_fields(
        ctx: PublishContext, segment: SegmentPayload, reply_to: ReplyTarget | None
    ) -> dict:
        board_id = ctx.settings.get("board_id")
        if reply_to is not None:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED, "Pins have no threads.", code="threads_unsupported"
            )
        if not board_id:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "Choose the board this Pin goes to.",
                code="board_required",
            )
        pin = {"board_id": board_id, "description": segment.text}
        for key in ("board_section_id", "title", "link"):
            if ctx.settings.get(key):
                pin[key] = ctx.settings[key]
        return pin

    @staticmethod
    def _image_source(images: list[MediaPayload]) -> dict:
        if all(image.public_url for image in images):
            if len(images) == 1:
                return {"source_type": "image_url", "url": images[0].public_url}
            return {
                "source_type": "multiple_image_urls",
                "items": [{"url": image.public_url} for image in images],
            }
        items = []
        for image in images:
            if image.mime_type not in BASE64_TYPES:
                raise ProviderError(
                    ErrorKind.CONTENT_REJECTED,
                    "Pinterest takes JPEG or PNG images here.",
                    code="image_type",
                )
            with image.open() as fh:
                data = base64.b64encode(fh.read()).decode("ascii")
            items.append({"content_type": image.mime_type, "data": data})
        if len(items) == 1:
            return {"source_type": "image_base64", **items[0]}
        return {"source_type": "multiple_image_base64", "items": items}

    def _video(
        self, client: httpx.Client, ctx: PublishContext, pin: dict, video: MediaPayload
    ) -> PublishedSegment:
        """Register and upload the video; the Pin waits in the checkpoint until processing
        succeeded. A video this rendition already uploaded is not uploaded again."""
        media_id = ctx.checkpoint.get("video_media_id")
        if media_id:
            media = _call(client, "GET", f"/media/{media_id}", is_create=False)
            if media.get("status") in (*MEDIA_PENDING, "succeeded"):
                return PublishedSegment(provider_post_id=media_id, pending=True)
        registered = _call(client, "POST", "/media", json={"media_type": "video"}, is_create=False)
        # The storage upload is a presigned form: every upload_parameter as a field, then
        # the file, and no Pinterest token.
        with (
            video.open() as fh,
            httpcall.client(timeout=settings.PROVIDER_TIMEOUT_S) as storage,
        ):
            try:
                response = storage.post(
                    registered["upload_url"],
                    data=registered.get("upload_parameters") or {},
                    files={"file": ("video", fh, video.mime_type)},
                )
            except httpx.HTTPError as exc:
                raise classify_transport(exc, is_create=False) from exc
        if response.status_code >= 300:
            raise ProviderError(
                ErrorKind.PROVIDER_UNAVAILABLE,
                "The video upload to Pinterest's storage failed.",
                code="upload_failed",
                http_status=response.status_code,
            )
        cover = (
            {"cover_image_url": ctx.settings["cover_image_url"]}
            if ctx.settings.get("cover_image_url")
            else {"cover_image_key_frame_time": int(ctx.settings.get("cover_key_frame_time", 0))}
        )
        media_id = str(registered["media_id"])
        pin["media_source"] = {"source_type": "video_id", "media_id": media_id, **cover}
        # Written before the next request: a run that stops now leaves the uploaded video
        # for the next attempt instead of uploading it again.
        ctx.checkpoint.update(video_media_id=media_id, video_pin=pin)
        ctx.persist_checkpoint()
        return PublishedSegment(provider_post_id=media_id, pending=True)

    # Tokens and connect ----------------------------------------------------------------

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        """Continuous refresh: each refresh returns a new refresh token, stored at once."""
        expiry = account.token_expires_at or oauth.parse_expires_at(credentials.get("expires_at"))
        if not oauth.is_near_expiry(expiry, REFRESH_MARGIN):
            return None
        fresh = {
            **credentials,
            **self._token(
                {
                    "grant_type": "refresh_token",
                    "refresh_token": credentials.get("refresh_token", ""),
                    # Apps created before 2025-09-25 get continuous tokens only when asked.
                    "continuous_refresh": "true",
                }
            ),
        }
        if account.pk:
            oauth.credentials_store_refreshed(account, fresh)
        return fresh

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        query = {
            "client_id": settings.PINTEREST_APP_ID,
            "redirect_uri": redirect_uri,
            "response_type": "code",
            "scope": ",".join(SCOPES),
            "state": state,
        }
        return f"{AUTHORIZE}?{urlencode(query)}"

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        tokens = self._token(
            {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        )
        with _client(tokens) as client:
            user = _call(client, "GET", "/user_account", is_create=False)
        return ConnectedIdentity(
            remote_id=str(user.get("id") or user["username"]),
            handle=user.get("username", ""),
            display_name=user.get("business_name") or user.get("username", ""),
            credentials=tokens,
            token_expires_at=oauth.parse_expires_at(tokens["expires_at"]),
        )

    @staticmethod
    def _token(data: dict) -> dict:
        body = oauth.token_request(
            TOKEN, data, auth=(settings.PINTEREST_APP_ID, settings.PINTEREST_APP_SECRET)
        )
        expires = oauth.expires_at(body.get("expires_in"))
        refresh_expires = oauth.expires_at(body.get("refresh_token_expires_in"))
        tokens = {
            "access_token": body["access_token"],
            "expires_at": expires.isoformat() if expires else None,
        }
        if body.get("refresh_token"):
            tokens["refresh_token"] = body["refresh_token"]
            tokens["refresh_expires_at"] = refresh_expires.isoformat() if refresh_expires else None
        return tokens


register_adapter(PinterestAdapter())
