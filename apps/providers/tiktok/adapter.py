"""TikTok Content Posting API: direct posts of a video (uploaded in chunks, or pulled from
a verified URL) or of photos (pulled from URLs), then status polling until TikTok has
processed and published it.

TikTok has no idempotency handle: the `publish_id` exists only once init has answered.
A post comes of an init only once TikTok has the whole video, so the answer of an init
for an upload of ours (FILE_UPLOAD) can be lost safely: no bytes went to that publish_id,
and a new init cannot make a second post. An init that has TikTok pull the media itself
(a URL, photos) may make a post on its own: its lost answer is never repeated. The
publish_id is written to the checkpoint the moment it arrives; polling and reconciliation
read its status, and one publish_id makes at most one post, so its last chunk may be sent
again while TikTok reports bytes missing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from django.conf import settings
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers import httpcall, oauth
from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    Implements,
    MediaPayload,
    PollSchedule,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import Action, ErrorKind, ProviderError, classify_transport
from apps.providers.matching import normalize_text
from apps.providers.tiktok import connect, media
from apps.providers.tiktok.errors import ERROR_CODES, classify

API = "https://open.tiktokapis.com/v2"

# Processing takes seconds to minutes, moderation usually under a minute but sometimes
# hours: poll after 5 s, then every 10 s growing by half each time to one poll every 10
# minutes, for up to 24 h. (status/fetch allows 30 calls a minute per token.)
POLL_SCHEDULE = PollSchedule(
    initial_delay_s=5, interval_s=10, factor=1.5, max_interval_s=600, max_wait_s=86400
)
# PUBLISH_COMPLETE comes before moderation hands out the public post id; wait this long for
# the id (and the URL it gives) before settling for the publish_id.
MODERATION_GRACE = timedelta(hours=2)
# The video list's `video_description` holds at most this many characters of the caption.
LISTED_DESCRIPTION_MAX = 150

PROCESSING = ("PROCESSING_UPLOAD", "PROCESSING_DOWNLOAD")
DONE = ("PUBLISH_COMPLETE", "SEND_TO_USER_INBOX")
FAILED = "FAILED"

# FAILED status reasons; anything else is treated as a rejection of the media.
RETRYABLE_FAIL_REASONS = frozenset({"internal"})
# How often the last chunk is sent again while TikTok reports bytes missing after its
# answer was lost.
LAST_CHUNK_TRIES = 2
# An upload still missing bytes this long after init never completes (our upload ended
# long before; TikTok's upload URL lives an hour): nothing was published.
UPLOAD_STALLED_AFTER = timedelta(minutes=10)


def _call(client: httpx.Client, url: str, payload: dict, *, is_create: bool) -> dict:
    """POST JSON to the API; the `data` of an envelope whose error code is "ok"."""
    try:
        response = client.post(url, json=payload)
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=is_create) from exc
    try:
        body = response.json()
    except ValueError:
        body = {}
    ok = response.status_code == 200 and (body.get("error") or {}).get("code") == "ok"
    if not ok:
        raise classify(response, is_create=is_create)
    return body.get("data") or {}


def _client(access_token: str) -> httpx.Client:
    return httpcall.client(
        headers={
            "Authorization": f"Bearer {access_token}",
            "Content-Type": "application/json; charset=UTF-8",
        },
        timeout=settings.PROVIDER_TIMEOUT_S,
    )


def _bytes_missing(status: dict, size: int) -> bool:
    """TikTok still waits for bytes of our upload."""
    received = status.get("uploaded_bytes")
    return (
        status.get("status") == "PROCESSING_UPLOAD"
        and received is not None
        and (int(received) < size)
    )


def _stalled(checkpoint: dict) -> bool:
    init_at = checkpoint.get("init_at")
    if not init_at:
        return False
    return timezone.now() - datetime.fromisoformat(init_at) > UPLOAD_STALLED_AFTER


class TikTokAdapter(Adapter):
    platform = "tiktok"
    implements = Implements(
        media_kinds=frozenset({"image", "video"}),
        max_images=35,  # a photo post; the set goes as given, TikTok's cap applies
        max_videos=1,
        settings=frozenset(
            {
                "privacy_level",
                "disable_comment",
                "disable_duet",
                "disable_stitch",
                "brand_content_toggle",
                "brand_organic_toggle",
                "video_source",
                "title",
            }
        ),
    )
    poll_schedule = POLL_SCHEDULE
    retry_safe_after_unknown = False
    # The Content Posting API posts and reports status; nothing in TikTok's API deletes.
    delete_unsupported = (
        "TikTok's Content Posting API has no delete; delete the video in the TikTok app"
    )

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        """creator_info (privacy options) → init → upload → pending with the publish_id."""
        videos = [m for m in segment.media if m.kind == "video"]
        photos = [m for m in segment.media if m.kind != "video"]
        if reply_to is not None or not segment.media or (videos and photos) or len(videos) > 1:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "A TikTok post is one video or a set of photos, with no threads.",
                code="unsupported_content",
            )
        with _client(ctx.credentials.get("access_token", "")) as client:
            creator = _call(client, f"{API}/post/publish/creator_info/query/", {}, is_create=False)
            post_info = self._post_info(ctx, creator)
            if videos:
                return self._video(client, ctx, segment, videos[0], post_info)
            return self._photos(client, ctx, segment, photos, post_info)

    def poll_segment(self, ctx: PublishContext, pending: PublishedSegment) -> PublishedSegment:
        with _client(ctx.credentials.get("access_token", "")) as client:
            return self._status(client, ctx, pending.provider_post_id)

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """With a publish_id: its status (a pending result means TikTok is still working on
        it; keep polling). Without one (init's answer was lost): the creator's recent videos,
        matched by caption and time. That match is weak: a video shows up only after
        moderation, so "not found" soon after the attempt proves little."""
        publish_id = ctx.checkpoint.get("publish_id")
        with _client(ctx.credentials.get("access_token", "")) as client:
            if publish_id:
                data = self._fetch_status(client, publish_id)
                if data.get("status") == FAILED:
                    return None  # TikTok gave up on it: no post exists
                return self._interpret(ctx, publish_id, data)
            data = _call(
                client,
                f"{API}/video/list/?fields=id,video_description,create_time,share_url",
                {"max_count": 20},
                is_create=False,
            )
        since = not_before - timedelta(minutes=2)
        # The caption sent as post_info.title comes back as the video's description, cut
        # to LISTED_DESCRIPTION_MAX characters (the listed title is something else).
        wanted = normalize_text(segment.text[:LISTED_DESCRIPTION_MAX])
        for video in data.get("videos", []):
            created = datetime.fromtimestamp(int(video.get("create_time", 0)), tz=UTC)
            listed = normalize_text((video.get("video_description") or "")[:LISTED_DESCRIPTION_MAX])
            if listed and listed == wanted and created >= since:
                return PublishedSegment(
                    provider_post_id=str(video["id"]),
                    provider_url=video.get("share_url", ""),
                    published_at=created,
                )
        return None

    # Steps -----------------------------------------------------------------------------

    @staticmethod
    def _post_info(ctx: PublishContext, creator: dict) -> dict:
        """post_info from the rendition's settings, checked against what the creator allows
        (TikTok requires an explicit privacy level chosen from the creator's options)."""
        privacy = ctx.settings.get("privacy_level")
        options = creator.get("privacy_level_options", [])
        if not privacy:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                f"Choose who can see this TikTok post ({', '.join(options)}).",
                code="privacy_level_required",
            )
        if privacy not in options:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                f"This creator can post only as {', '.join(options)}, not {privacy}.",
                code="privacy_level_option_mismatch",
            )
        # An interaction the creator turned off in the app must stay off.
        return {
            "privacy_level": privacy,
            "disable_comment": bool(
                ctx.settings.get("disable_comment") or creator.get("comment_disabled")
            ),
            "disable_duet": bool(ctx.settings.get("disable_duet") or creator.get("duet_disabled")),
            "disable_stitch": bool(
                ctx.settings.get("disable_stitch") or creator.get("stitch_disabled")
            ),
            "brand_content_toggle": bool(ctx.settings.get("brand_content_toggle")),
            "brand_organic_toggle": bool(ctx.settings.get("brand_organic_toggle")),
        }

    def _video(
        self,
        client: httpx.Client,
        ctx: PublishContext,
        segment: SegmentPayload,
        video: MediaPayload,
        post_info: dict,
    ) -> PublishedSegment:
        pull = ctx.settings.get("video_source") == "PULL_FROM_URL" and video.public_url
        source_info: dict[str, object]
        if pull:
            source_info = {"source": "PULL_FROM_URL", "video_url": video.public_url}
        else:
            chunk_size, count = media.chunks(video.size_bytes)
            source_info = {
                "source": "FILE_UPLOAD",
                "video_size": video.size_bytes,
                "chunk_size": chunk_size,
                "total_chunk_count": count,
            }
        data = self._init(
            client,
            ctx,
            f"{API}/post/publish/video/init/",
            {"post_info": {**post_info, "title": segment.text}, "source_info": source_info},
            pulls=bool(pull),
        )
        if not pull:
            self._upload(client, data, video)
        return PublishedSegment(provider_post_id=data["publish_id"], pending=True)

    def _upload(self, client: httpx.Client, data: dict, video: MediaPayload) -> None:
        """Every chunk, then, when the last one's answer was lost and TikTok reports bytes
        missing, the last chunk again. If TikTok cannot be asked, polling settles it."""
        chunk_size, count = media.chunks(video.size_bytes)
        if media.upload(data["upload_url"], video, chunk_size, count):
            return
        for _ in range(LAST_CHUNK_TRIES):
            try:
                status = self._fetch_status(client, data["publish_id"])
            except ProviderError:
                return
            if not _bytes_missing(status, video.size_bytes):
                return
            if media.upload(data["upload_url"], video, chunk_size, count, first_chunk=count - 1):
                return

    def _photos(
        self,
        client: httpx.Client,
        ctx: PublishContext,
        segment: SegmentPayload,
        photos: list[MediaPayload],
        post_info: dict,
    ) -> PublishedSegment:
        # Photos can only be pulled by TikTok from URLs on a verified domain.
        urls = [p.public_url for p in photos]
        if not all(urls):
            raise ProviderError(
                ErrorKind.UNKNOWN,
                "TikTok fetches photos by URL, and no public URL was prepared for them.",
                code="media_url_missing",
                retryable=False,
                action=Action.CONTACT_SUPPORT,
            )
        post_info = {
            k: v for k, v in post_info.items() if k not in ("disable_duet", "disable_stitch")
        }
        post_info.update(title=ctx.settings.get("title", ""), description=segment.text)
        data = self._init(
            client,
            ctx,
            f"{API}/post/publish/content/init/",
            {
                "post_info": post_info,
                "source_info": {
                    "source": "PULL_FROM_URL",
                    "photo_images": urls,
                    "photo_cover_index": 0,
                },
                "post_mode": "DIRECT_POST",
                "media_type": "PHOTO",
            },
            pulls=True,
        )
        return PublishedSegment(provider_post_id=data["publish_id"], pending=True)

    @staticmethod
    def _init(
        client: httpx.Client, ctx: PublishContext, url: str, payload: dict, *, pulls: bool
    ) -> dict:
        # When TikTok pulls the media, init alone may make the post: a lost answer is an
        # unknown outcome, never re-sent. Our own upload makes nothing until every byte.
        data = _call(client, url, payload, is_create=pulls)
        ctx.checkpoint["publish_id"] = data["publish_id"]
        ctx.checkpoint["privacy_level"] = payload["post_info"]["privacy_level"]
        ctx.checkpoint["init_at"] = timezone.now().isoformat()
        size = payload["source_info"].get("video_size")
        if size:
            ctx.checkpoint["video_size"] = int(size)
        # Stored before the upload starts: a worker killed mid-upload leaves the handle
        # that reconciliation reads the post's status with.
        ctx.persist_checkpoint()
        return data

    def _status(
        self, client: httpx.Client, ctx: PublishContext, publish_id: str
    ) -> PublishedSegment:
        return self._interpret(ctx, publish_id, self._fetch_status(client, publish_id))

    @staticmethod
    def _fetch_status(client: httpx.Client, publish_id: str) -> dict:
        return _call(
            client,
            f"{API}/post/publish/status/fetch/",
            {"publish_id": publish_id},
            is_create=False,
        )

    @staticmethod
    def _interpret(ctx: PublishContext, publish_id: str, data: dict) -> PublishedSegment:
        """PROCESSING_* stays pending; done is published; FAILED raises by its reason."""
        status = data.get("status", "")
        if status == FAILED:
            reason = data.get("fail_reason") or "unknown"
            if reason in RETRYABLE_FAIL_REASONS:
                # TikTok failed internally: no post exists, a new attempt is safe. Not
                # retryable here: reading this publish_id again only reads FAILED again.
                raise ProviderError(
                    ErrorKind.PROVIDER_UNAVAILABLE,
                    "TikTok failed to publish the post on its side; nothing was published.",
                    code=reason,
                    retryable=False,
                    action=Action.RETRY,
                )
            if reason in ERROR_CODES:
                kind, action = ERROR_CODES[reason]
                raise ProviderError(
                    kind, f"TikTok refused the post: {reason}.", code=reason, action=action
                )
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                f"TikTok refused the media: {reason}.",
                code=reason,
            )
        if status not in DONE:
            size = ctx.checkpoint.get("video_size")
            if size and _bytes_missing(data, size) and _stalled(ctx.checkpoint):
                raise ProviderError(
                    ErrorKind.PROVIDER_UNAVAILABLE,
                    "TikTok never received the whole video; nothing was published. Retry "
                    "to send it again.",
                    code="upload_incomplete",
                    retryable=False,
                    action=Action.RETRY,
                )
            return PublishedSegment(provider_post_id=publish_id, pending=True)
        post_ids = data.get("publicaly_available_post_id") or []  # [sic], TikTok's spelling
        if post_ids:
            post_id = str(post_ids[0])
            return PublishedSegment(
                provider_post_id=post_id,
                provider_url=f"https://www.tiktok.com/@{ctx.account.handle}/video/{post_id}",
                published_at=timezone.now(),
            )
        # Private posts never get a public id; public ones get it after moderation.
        if status == "PUBLISH_COMPLETE" and ctx.checkpoint.get("privacy_level") != "SELF_ONLY":
            first_seen = ctx.checkpoint.setdefault("complete_at", timezone.now().isoformat())
            if timezone.now() - datetime.fromisoformat(first_seen) < MODERATION_GRACE:
                return PublishedSegment(provider_post_id=publish_id, pending=True)
        return PublishedSegment(provider_post_id=publish_id, published_at=timezone.now())

    # Tokens and connect ----------------------------------------------------------------

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        """The rotated pair, for the pipeline to store at once (the old refresh token is
        dead once used)."""
        return connect.refresh(account, credentials)

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        return connect.authorization_url(state=state, redirect_uri=redirect_uri)

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        """Code → tokens; the creator's username (for post URLs) from creator_info."""
        tokens = connect.exchange_code(code=code, redirect_uri=redirect_uri)
        with _client(tokens["access_token"]) as client:
            creator = _call(client, f"{API}/post/publish/creator_info/query/", {}, is_create=False)
        return ConnectedIdentity(
            remote_id=tokens["open_id"],
            handle=creator.get("creator_username", ""),
            display_name=creator.get("creator_nickname", ""),
            credentials=tokens,
            token_expires_at=oauth.parse_expires_at(tokens["expires_at"]),
            settings={"privacy_level_options": creator.get("privacy_level_options", [])},
        )


register_adapter(TikTokAdapter())
