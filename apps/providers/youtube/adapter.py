"""YouTube Data API v3: one video per post, sent through a resumable upload session.

The session URI is the idempotency handle. It is written to `ctx.checkpoint` before the
first byte moves, so any later attempt probes that session instead of opening a second one
(which would make a second video): 200/201 means the video exists, 308 says where to
resume, 404/410 means the session is gone. A gone session (found by the probe, or answering
a chunk mid-upload) is replaced only when the final byte was never sent; otherwise the
upload may have completed and only the channel's uploads can tell.

A first comment goes under the published video (apps.providers.youtube.comments); YouTube
takes no idempotency handle for it, so a lost answer is settled by listing the video's
comment threads.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
from django.conf import settings

from apps.accounts.models import SocialAccount
from apps.providers import httpcall, oauth
from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    Implements,
    MediaPayload,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import ErrorKind, ProviderError, classify_transport
from apps.providers.youtube import comments, connect, media
from apps.providers.youtube.errors import classify

API = "https://www.googleapis.com/youtube/v3"
PRIVACY_STATUSES = ("public", "unlisted", "private")
DEFAULT_PRIVACY = "public"


class YouTubeAdapter(Adapter):
    platform = "youtube"
    implements = Implements(
        media_kinds=frozenset({"video"}),
        max_videos=1,
        settings=frozenset(
            {
                "title",
                "privacy_status",
                "tags",
                "categoryId",
                "made_for_kids",
                "publish_at",
                "notify_subscribers",
            }
        ),
    )
    # Re-sending resumes the same session: it cannot make a second video.
    retry_safe_after_unknown = True
    # Sessions live about a week; past that only the uploads listing can settle an attempt.
    idempotency_window = timedelta(days=6)
    # Comments are found by listing the video's comment threads, which may lag behind a new one.
    comment_lookup_is_strong = False

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        video = self._video(segment, reply_to)
        title, privacy = self._title_and_privacy(ctx)
        with self._client(ctx) as client:
            session, offset = ctx.checkpoint.get("upload_session_uri"), 0
            if session:
                found = media.probe(client, session, video.size_bytes)
                if found.video is not None:
                    return media.published(ctx, found.video)
                if found.offset is not None:
                    offset = found.offset
                    if ctx.checkpoint.get("upload_final_sent"):
                        # The live session says the final byte never reached it: no video
                        # came of it, and losing the session now is a clean restart.
                        ctx.checkpoint["upload_final_sent"] = False
                        ctx.persist_checkpoint()
                elif ctx.checkpoint.get("upload_final_sent"):
                    # A resend cannot settle this any more: reconciliation looks it up.
                    ctx.checkpoint["upload_session_gone"] = True
                    ctx.persist_checkpoint()
                    raise ProviderError(
                        ErrorKind.OUTCOME_UNKNOWN,
                        "The upload session expired after the whole video was sent; the "
                        "video may exist. Check the channel's uploads.",
                        code="session_gone",
                    )
                else:
                    session = None  # expired before the final byte: no video can exist
            if not session:
                session = media.open_session(client, ctx, segment, video, title, privacy)
            try:
                return media.send(client, ctx, session, video, offset)
            except media.SessionGone:
                pass
            # The session expired under the upload (sessions live about a week): a new
            # one, from the first byte, once in this attempt.
            session = media.open_session(client, ctx, segment, video, title, privacy)
            try:
                return media.send(client, ctx, session, video, 0)
            except media.SessionGone:
                raise ProviderError(
                    ErrorKind.PROVIDER_UNAVAILABLE,
                    "YouTube ended two upload sessions in a row before the video was sent; "
                    "the next attempt starts a new one.",
                    code="session_gone_again",
                ) from None

    def resend_settles(self, ctx: PublishContext) -> bool:
        return not ctx.checkpoint.get("upload_session_gone")

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """Strong while the session lives (probe it); afterwards, best effort through the
        channel's uploads playlist, matched by title and time."""
        with self._client(ctx) as client:
            session = ctx.checkpoint.get("upload_session_uri")
            if session:
                size = ctx.checkpoint.get("upload_size") or 0
                found = media.probe(client, session, size)
                if found.video is not None:
                    return media.published(ctx, found.video)
                if found.offset is not None or not ctx.checkpoint.get("upload_final_sent"):
                    return None
            return self._find_upload(client, ctx, not_before)

    # First comment ---------------------------------------------------------------------

    def publish_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment:
        """A top-level comment under the video, as the channel (50 quota units); YouTube
        takes no idempotency handle."""
        with self._client(ctx) as client:
            return comments.insert(client, ctx, post.provider_post_id, text)

    def find_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment | None:
        """Our comment among the video's newest threads: by the channel, with the same text."""
        with self._client(ctx) as client:
            return comments.find(client, ctx, post.provider_post_id, text)

    # Deletion (the live validation's clean-up) ---------------------------------------

    def delete_post(self, ctx: PublishContext, post: PublishedSegment) -> None:
        """videos.delete (204; 50 quota units, the youtube.force-ssl scope); a video
        already gone (404 videoNotFound) counts as deleted. Its comments go with it."""
        with self._client(ctx) as client:
            try:
                response = client.delete(f"{API}/videos", params={"id": post.provider_post_id})
            except httpx.HTTPError as exc:
                raise classify_transport(exc, is_create=False) from exc
        if response.status_code not in (200, 204, 404):
            raise classify(response, is_create=False)

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

    @staticmethod
    def _find_upload(
        client: httpx.Client, ctx: PublishContext, not_before: datetime
    ) -> PublishedSegment | None:
        """Our video among the channel's uploads since the attempt. Each candidate is read
        back by its id (videos.list shows the owner a private video's real title and
        privacy, where the uploads playlist may list it as "Private video"); a video the
        playlist leaves out (unlisted or private, by field reports) is looked for in the
        owner's own search (search.list forMine, 100 quota units) when none there is ours."""
        since = not_before - timedelta(minutes=2)
        title = (ctx.settings.get("title") or "").strip()
        found = _video_titled(client, ctx, _playlist_uploads(client, since), title)
        if found is None:
            found = _video_titled(client, ctx, _searched_uploads(client, since), title)
        return found

    # Tokens and connect ----------------------------------------------------------------

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        return connect.refresh(account, credentials)

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        return connect.authorization_url(
            state=state, code_challenge=code_challenge, redirect_uri=redirect_uri
        )

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        """Code → tokens; the channel to upload to."""
        body = connect.exchange_code(
            code=code, code_verifier=code_verifier, redirect_uri=redirect_uri
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
            raise classify(response, is_create=False)
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


def _get(client: httpx.Client, path: str, params: dict) -> dict:
    try:
        response = client.get(f"{API}/{path}", params=params)
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=False) from exc
    if response.status_code != 200:
        raise classify(response, is_create=False)
    return response.json()


def _since(snippet: dict, since: datetime) -> bool:
    return datetime.fromisoformat(snippet.get("publishedAt", "1970-01-01T00:00:00Z")) >= since


def _playlist_uploads(client: httpx.Client, since: datetime) -> list[str]:
    """Ids of the uploads playlist's newest videos added since `since`."""
    items = _get(client, "channels", {"part": "contentDetails", "mine": "true"}).get("items")
    if not items:
        return []
    playlist = items[0]["contentDetails"]["relatedPlaylists"]["uploads"]
    listing = _get(
        client, "playlistItems", {"part": "snippet", "playlistId": playlist, "maxResults": 25}
    )
    return [
        item["snippet"]["resourceId"]["videoId"]
        for item in listing.get("items", [])
        if _since(item.get("snippet", {}), since)
    ]


def _searched_uploads(client: httpx.Client, since: datetime) -> list[str]:
    """Ids of the owner's newest videos (private and unlisted too) made since `since`."""
    params = {"part": "snippet", "forMine": "true", "type": "video", "order": "date"}
    listing = _get(client, "search", {**params, "maxResults": 25})
    return [
        item["id"]["videoId"]
        for item in listing.get("items", [])
        if _since(item.get("snippet", {}), since)
    ]


def _video_titled(
    client: httpx.Client, ctx: PublishContext, video_ids: list[str], title: str
) -> PublishedSegment | None:
    """The first of `video_ids` whose own title is `title`, its real privacy recorded."""
    if not video_ids:
        return None
    body = _get(client, "videos", {"part": "snippet,status", "id": ",".join(video_ids)})
    for video in body.get("items", []):
        if (video.get("snippet") or {}).get("title", "").strip() == title:
            return media.published(ctx, video)
    return None


register_adapter(YouTubeAdapter())
