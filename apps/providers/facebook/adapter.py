"""Facebook Pages: text and link posts, photos (one, or several attached to a feed post),
and videos (by URL, or uploaded through the Resumable Upload API or upload_phase; pending
until processed), published with the Page's access token.

Connecting goes through the person who manages the Page (apps.providers.facebook.connect).
Facebook offers no idempotency handle; a lost answer is reconciled by listing the Page's
published posts, and a lost first comment by listing the post's comments.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import httpx
from django.utils import timezone

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
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.facebook import connect, media
from apps.providers.facebook.media import page_url
from apps.providers.matching import normalize_text
from apps.providers.meta.errors import INVALID_PARAMETER_CODE, UNKNOWN_OBJECT_SUBCODE
from apps.providers.meta.graph import (
    FACEBOOK_GRAPH,
    graph_call,
    graph_client,
    graph_delete,
    parse_graph_time,
)

# Video processing: first check after 5 s, then every 10 s growing to a minute, 30 min budget.
POLL_SCHEDULE = PollSchedule(
    initial_delay_s=5, interval_s=10, factor=1.5, max_interval_s=60, max_wait_s=1800
)
# A first comment is looked for among the post's newest comments, a few pages deep.
COMMENT_PAGE = 50
COMMENT_PAGES = 3
# Graph's answer for an object that does not exist (or that the token cannot load).
UNKNOWN_OBJECT = f"{INVALID_PARAMETER_CODE}/{UNKNOWN_OBJECT_SUBCODE}"


class FacebookPagesAdapter(Adapter):
    platform = "facebook"
    implements = Implements(
        media_kinds=frozenset({"image", "video"}),
        max_images=None,  # photos attached to one feed post; Facebook documents no cap
        max_videos=1,
        settings=frozenset({"link", "title"}),
    )
    poll_schedule = POLL_SCHEDULE
    # Comments are found by listing the post's comments, which may lag behind a new one.
    comment_lookup_is_strong = False

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        if reply_to is not None:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "Facebook Pages have no threads; publish one segment.",
                code="threads_unsupported",
            )
        videos = [m for m in segment.media if m.kind == "video"]
        images = [m for m in segment.media if m.kind != "video"]
        if videos and (images or len(videos) > 1):
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "A Facebook post holds one video, or photos, not both.",
                code="media_mix",
            )
        with graph_client(ctx.credentials.get("access_token")) as client:
            if videos:
                return media.upload_video(client, ctx, segment, videos[0])
            if len(images) == 1:
                body = media.photo(client, ctx, images[0], message=segment.text, published=True)
                post_id = str(body.get("post_id") or body["id"])
            else:
                data = {"message": segment.text}
                if ctx.settings.get("link"):
                    data["link"] = ctx.settings["link"]
                if images:
                    # Unpublished photos are invisible until the feed post attaches them.
                    fbids = [
                        media.photo(client, ctx, image, published=False)["id"] for image in images
                    ]
                    data["attached_media"] = json.dumps([{"media_fbid": i} for i in fbids])
                body = graph_call(client, "POST", page_url(ctx, "feed"), data=data, is_create=True)
                post_id = str(body["id"])
            return PublishedSegment(
                provider_post_id=post_id,
                provider_url=self._permalink(client, post_id),
                published_at=timezone.now(),
            )

    def poll_segment(self, ctx: PublishContext, pending: PublishedSegment) -> PublishedSegment:
        """A video stays pending until Facebook has processed and published it: an upload
        that is complete is not yet a post."""
        with graph_client(ctx.credentials.get("access_token")) as client:
            body = media.video_state(client, pending.provider_post_id)
        if media.is_published(body):
            return PublishedSegment(
                provider_post_id=pending.provider_post_id,
                provider_url=media.absolute_url(body.get("permalink_url", "")),
                published_at=timezone.now(),
            )
        return pending

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """A video this rendition made is asked about by its id: published, still
        processing (pending: polling finishes it), or never finished uploading (absent). A
        videos call that went unanswered (with a file handle or a `file_url`) is looked for
        among the Page's videos. Anything else is best effort: the Page's recent published
        posts with the same text, made after the attempt began (a little clock skew
        allowed)."""
        since = not_before - timedelta(minutes=2)
        with graph_client(ctx.credentials.get("access_token")) as client:
            entry = media.video_entry(ctx, segment.position)
            if entry is not None and entry.get("video_id"):
                return media.video_lookup(client, entry["video_id"])
            if entry is not None and entry.get("publish_sent"):
                return media.find_unanswered(client, ctx, segment, entry)
            if entry is not None:
                return None  # uploaded at most: only the videos call makes a video
            body = graph_call(
                client,
                "GET",
                page_url(ctx, "published_posts"),
                params={
                    "fields": "id,message,created_time,permalink_url",
                    "since": int(since.timestamp()),
                    "limit": 25,
                },
                is_create=False,
            )
        wanted = normalize_text(segment.text)
        for post in body.get("data", []):
            created = parse_graph_time(post.get("created_time"))
            if normalize_text(post.get("message")) == wanted and created and created >= since:
                return PublishedSegment(
                    provider_post_id=str(post["id"]),
                    provider_url=post.get("permalink_url", ""),
                    published_at=created,
                )
        return None

    def publish_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment:
        """Comment under the post as the Page; the Graph API takes no idempotency handle."""
        with graph_client(ctx.credentials.get("access_token")) as client:
            body = _comments_call(client, "POST", post, data={"message": text}, is_create=True)
            comment_id = str(body["id"])
            return PublishedSegment(
                provider_post_id=comment_id,
                provider_url=self._permalink(client, comment_id),
                published_at=timezone.now(),
            )

    def find_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment | None:
        """Our comment among the post's newest: made by the Page, with the same text."""
        wanted = normalize_text(text)
        params = {
            "filter": "stream",
            "order": "reverse_chronological",
            "fields": "id,message,from,created_time,permalink_url",
            "limit": COMMENT_PAGE,
        }
        with graph_client(ctx.credentials.get("access_token")) as client:
            for _ in range(COMMENT_PAGES):
                body = _comments_call(client, "GET", post, params=params, is_create=False)
                for comment in body.get("data", []):
                    if (
                        str((comment.get("from") or {}).get("id")) == ctx.account.remote_id
                        and normalize_text(comment.get("message")) == wanted
                    ):
                        return PublishedSegment(
                            provider_post_id=str(comment["id"]),
                            provider_url=comment.get("permalink_url")
                            or f"https://www.facebook.com/{comment['id']}",
                            published_at=parse_graph_time(comment.get("created_time")),
                        )
                paging = body.get("paging") or {}
                after = (paging.get("cursors") or {}).get("after")
                if not paging.get("next") or not after:
                    return None
                params = {**params, "after": after}
        return None

    def open_upload_session(self, ctx: PublishContext, video: MediaPayload) -> str:
        """Whether the token publishing uses may open a Resumable Upload API session (the
        live validation's video check): the session id, or the Graph refusal raised."""
        with graph_client(ctx.credentials.get("access_token")) as client:
            return media.upload_session(client, ctx, video)

    # Deletion (the live validation's clean-up) ---------------------------------------

    def delete_post(self, ctx: PublishContext, post: PublishedSegment) -> None:
        """DELETE /{page-post-id} (or /{video-id}) with the Page token; its comments go
        with it. A post already gone counts as deleted."""
        with graph_client(ctx.credentials.get("access_token")) as client:
            graph_delete(client, f"{FACEBOOK_GRAPH}/{post.provider_post_id}")

    # Steps -----------------------------------------------------------------------------

    @staticmethod
    def _permalink(client: httpx.Client, post_id: str) -> str:
        # The post exists already: a failed read only costs the exact URL.
        try:
            body = graph_call(
                client,
                "GET",
                f"{FACEBOOK_GRAPH}/{post_id}",
                params={"fields": "permalink_url"},
                is_create=False,
            )
        except ProviderError:
            return f"https://www.facebook.com/{post_id}"
        return (
            media.absolute_url(body.get("permalink_url", ""))
            or f"https://www.facebook.com/{post_id}"
        )

    # Connect ---------------------------------------------------------------------------

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        return connect.authorization_url(state=state, redirect_uri=redirect_uri)

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        return connect.complete_connect(code=code, redirect_uri=redirect_uri)

    def account_choices(self, identity: ConnectedIdentity) -> list[dict]:
        return connect.account_choices(identity)

    def select_account(self, identity: ConnectedIdentity, *, choice_id: str) -> ConnectedIdentity:
        return connect.page_select(identity, page_id=choice_id)


register_adapter(FacebookPagesAdapter())


def _comments_call(client: httpx.Client, method: str, post: PublishedSegment, **call) -> dict:
    """A call on the post's comments edge (a feed post's or a video's). A post that is no
    longer there (deleted on the Page, or out of the Page token's sight) is said so: its
    comment cannot go under it, and trying again will not change that."""
    try:
        return graph_call(
            client, method, f"{FACEBOOK_GRAPH}/{post.provider_post_id}/comments", **call
        )
    except ProviderError as err:
        if err.code != UNKNOWN_OBJECT:
            raise
        raise ProviderError(
            ErrorKind.CONTENT_REJECTED,
            "The post is no longer on the Page (deleted, or out of the Page token's sight), "
            "so its first comment cannot go under it; check the post.",
            code="post_gone",
            http_status=err.http_status,
            action=Action.VERIFY,
            retryable=False,
        ) from err
