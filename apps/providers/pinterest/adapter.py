"""Pinterest API v5: Pins on a chosen board, with one image, 2-5 images, or a video.

Images go by URL when the pipeline prepared a public one, else inline as base64. A video is
registered, uploaded to the storage URL Pinterest hands out, and processed; the Pin is made
only once processing succeeded, so a video Pin is pending until then. Pinterest has no
idempotency handle: a lost answer is reconciled by listing the board's Pins.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers import oauth
from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    Implements,
    PollSchedule,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.matching import normalize_text
from apps.providers.pinterest import api, connect, media

MAX_IMAGES = 5
# A lookup reads up to LOOKUP_PAGES pages of the board's Pins (Pinterest pages hold 1-250).
LOOKUP_PAGE_SIZE = 100
LOOKUP_PAGES = 4
# Video processing: poll every 10 s after 5 s, for up to 15 minutes.
POLL_SCHEDULE = PollSchedule(initial_delay_s=5, interval_s=10, max_wait_s=900)


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
    implements = Implements(
        media_kinds=frozenset({"image", "video"}),
        max_images=MAX_IMAGES,
        max_videos=1,
        settings=frozenset(
            {
                "board_id",
                "title",
                "link",
                "board_section_id",
                "cover_image_url",
                "cover_key_frame_time",
            }
        ),
        alt_text=True,  # a single-image pin's alt_text
    )
    poll_schedule = POLL_SCHEDULE
    poll_makes_post = True  # the Pin is made once the video is processed

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        pin = self._pin_fields(ctx, segment, reply_to)
        videos = [m for m in segment.media if m.kind == "video"]
        images = [m for m in segment.media if m.kind != "video"]
        with api.client(ctx.credentials) as client:
            if videos:
                if images or len(videos) > 1:
                    raise ProviderError(
                        ErrorKind.CONTENT_REJECTED,
                        "A Pin holds one video, or images, not both.",
                        code="media_mix",
                    )
                return media.upload_video(client, ctx, pin, videos[0])
            if not images or len(images) > MAX_IMAGES:
                raise ProviderError(
                    ErrorKind.CONTENT_REJECTED,
                    f"A Pin needs an image (up to {MAX_IMAGES}) or a video.",
                    code="media_count",
                )
            pin["media_source"] = media.image_source(images)
            if len(images) == 1 and images[0].alt_text:
                pin["alt_text"] = images[0].alt_text
            return _published(api.call(client, "POST", "/pins", json=pin, is_create=True))

    def poll_segment(self, ctx: PublishContext, pending: PublishedSegment) -> PublishedSegment:
        """Wait for the video to process, then make the Pin (the irreversible call)."""
        media_id = pending.provider_post_id
        with api.client(ctx.credentials) as client:
            status = api.call(client, "GET", f"/media/{media_id}", is_create=False).get("status")
            if status in media.MEDIA_PENDING:
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
            return _published(api.call(client, "POST", "/pins", json=pin, is_create=True))

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """Best effort: the board's Pins with the same title, link and description, made
        after the attempt began. A busy board may have taken many Pins since, so several
        pages are read (the board's order need not be newest first). A video Pin whose
        video is still processing is pending: its Pin is made only once the video is
        ready (by the poll), so none exists yet."""
        board_id = ctx.settings.get("board_id")
        if not board_id:
            return None
        since = not_before - timedelta(minutes=2)
        title, link = ctx.settings.get("title") or "", ctx.settings.get("link") or ""
        wanted = normalize_text(segment.text)
        params: dict = {"page_size": LOOKUP_PAGE_SIZE}
        media_id = ctx.checkpoint.get("video_media_id")
        with api.client(ctx.credentials) as client:
            if media_id and ctx.checkpoint.get("video_pin"):
                video = api.call(client, "GET", f"/media/{media_id}", is_create=False)
                if video.get("status") in media.MEDIA_PENDING:
                    return PublishedSegment(provider_post_id=media_id, pending=True)
            for _ in range(LOOKUP_PAGES):
                body = api.call(
                    client, "GET", f"/boards/{board_id}/pins", params=params, is_create=False
                )
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
                if not body.get("bookmark"):
                    return None
                params = {**params, "bookmark": body["bookmark"]}
        return None

    def delete_post(self, ctx: PublishContext, post: PublishedSegment) -> None:
        """DELETE /pins/{id} (the live validation's clean-up); a Pin already gone (404)
        counts as deleted."""
        with api.client(ctx.credentials) as client:
            try:
                api.call(client, "DELETE", f"/pins/{post.provider_post_id}", is_create=False)
            except ProviderError as err:
                if err.http_status != 404:
                    raise

    def list_boards(self, ctx: PublishContext) -> list[dict]:
        """The account's boards (id, name, privacy) to choose the destination from."""
        boards, bookmark = [], None
        with api.client(ctx.credentials) as client:
            while True:
                params = {"page_size": 100, **({"bookmark": bookmark} if bookmark else {})}
                body = api.call(client, "GET", "/boards", params=params, is_create=False)
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

    # Tokens and connect ----------------------------------------------------------------

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        """A new pair (continuous refresh), for the pipeline to store at once."""
        return connect.refresh(account, credentials)

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        return connect.authorization_url(state=state, redirect_uri=redirect_uri)

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        tokens = connect.exchange_code(code=code, redirect_uri=redirect_uri)
        with api.client(tokens) as client:
            user = api.call(client, "GET", "/user_account", is_create=False)
        return ConnectedIdentity(
            remote_id=str(user.get("id") or user["username"]),
            handle=user.get("username", ""),
            display_name=user.get("business_name") or user.get("username", ""),
            credentials=tokens,
            token_expires_at=oauth.parse_expires_at(tokens["expires_at"]),
        )


register_adapter(PinterestAdapter())
