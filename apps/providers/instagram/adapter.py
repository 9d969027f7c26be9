"""Instagram (professional accounts, Instagram Login): container publishing of images,
Reels, stories and carousels, the publishing cap, long-lived tokens.

Instagram fetches media by URL (the pipeline's signed `public_url`). Captions are the
segment's text; Instagram has no threads, so only single segments are published. A first
comment goes under the published media; Instagram takes no idempotency handle for it, so a
lost answer is settled by listing the media's comments.
"""

from __future__ import annotations

from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers.base import (
    ConnectedIdentity,
    Implements,
    MediaPayload,
    PollSchedule,
    PublishContext,
    PublishedSegment,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.instagram import connect
from apps.providers.instagram.connect import INSTAGRAM_GRAPH
from apps.providers.matching import normalize_text
from apps.providers.meta.container import ContainerAdapter
from apps.providers.meta.graph import graph_call, graph_client, parse_graph_time, public_media_url

# Docs: check the container once a minute for at most 5 minutes. Reels routinely take
# longer to process, so the budget allows 15 minutes.
POLL_SCHEDULE = PollSchedule(initial_delay_s=10, interval_s=60, max_wait_s=900)
# A first comment is looked for among the media's comments, a few pages deep.
COMMENT_PAGE = 50
COMMENT_PAGES = 3


class InstagramAdapter(ContainerAdapter):
    platform = "instagram"
    implements = Implements(
        media_kinds=frozenset({"image", "video"}),
        max_images=10,  # a carousel of up to max_carousel_items, images and videos mixed
        max_videos=10,
        mixed_media=True,
        settings=frozenset({"media_type"}),
        alt_text=True,  # images only; Instagram takes none for videos
    )
    graph_base = INSTAGRAM_GRAPH
    create_edge = "media"
    publish_edge = "media_publish"
    status_fields = "status_code,status"
    status_key = "status_code"
    status_detail_key = "status"  # e.g. "Error: 2207026"
    text_field = "caption"
    max_carousel_items = 10
    # The docs disagree on a cap of 50 or 100 posts a day: it is read live.
    quota_edge = "content_publishing_limit"
    poll_schedule = POLL_SCHEDULE
    # Comments are found by listing the media's comments, which may lag behind a new one.
    comment_lookup_is_strong = False
    # The IG Media reference documents reading and updating a media object, no deleting
    # (only a comment can be deleted, and a comment goes with its media anyway).
    delete_unsupported = (
        "Instagram's API cannot delete a post (the Graph API deletes comments, not media); "
        "delete it in the Instagram app"
    )

    # First comment ---------------------------------------------------------------------

    def publish_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment:
        """Comment under the media as the account; Instagram takes no idempotency handle,
        and the API gives a comment no permalink."""
        with graph_client(ctx.credentials.get("access_token")) as client:
            body = graph_call(
                client,
                "POST",
                f"{self.graph_base}/{post.provider_post_id}/comments",
                data={"message": text},
                is_create=True,
            )
        return PublishedSegment(provider_post_id=str(body["id"]), published_at=timezone.now())

    def find_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment | None:
        """Our comment among the media's comments: made by the account's username, with the
        same text."""
        wanted = normalize_text(text)
        handle = ctx.account.handle.casefold()  # usernames are case-insensitive
        params: dict = {"fields": "id,text,username,timestamp", "limit": COMMENT_PAGE}
        with graph_client(ctx.credentials.get("access_token")) as client:
            for _ in range(COMMENT_PAGES):
                body = graph_call(
                    client,
                    "GET",
                    f"{self.graph_base}/{post.provider_post_id}/comments",
                    params=params,
                    is_create=False,
                )
                for comment in body.get("data", []):
                    if (
                        str(comment.get("username") or "").casefold() == handle
                        and normalize_text(comment.get("text")) == wanted
                    ):
                        return PublishedSegment(
                            provider_post_id=str(comment["id"]),
                            published_at=parse_graph_time(comment.get("timestamp")),
                        )
                paging = body.get("paging") or {}
                after = (paging.get("cursors") or {}).get("after")
                if not paging.get("next") or not after:
                    return None
                params = {**params, "after": after}
        return None

    # Containers ------------------------------------------------------------------------

    def _single_params(
        self, ctx: PublishContext, segment: SegmentPayload, reply_to_id: str | None
    ) -> dict:
        if not segment.media:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "An Instagram post needs an image or a video.",
                code="media_required",
            )
        media = segment.media[0]
        if ctx.settings.get("media_type") == "STORIES":
            # Stories take no caption.
            key = "video_url" if media.kind == "video" else "image_url"
            return {"media_type": "STORIES", key: public_media_url(media)}
        if media.kind == "video":
            # Feed videos are published as Reels.
            return {
                "media_type": "REELS",
                "video_url": public_media_url(media),
                "caption": segment.text,
                "share_to_feed": "true",
            }
        params = {"image_url": public_media_url(media), "caption": segment.text}
        if media.alt_text:
            params["alt_text"] = media.alt_text
        return params

    def _carousel_item_params(self, media: MediaPayload) -> dict:
        if media.kind == "video":
            return {
                "media_type": "VIDEO",
                "video_url": public_media_url(media),
                "is_carousel_item": "true",
            }
        params = {"image_url": public_media_url(media), "is_carousel_item": "true"}
        if media.alt_text:
            params["alt_text"] = media.alt_text
        return params

    def _carousel_params(
        self, ctx: PublishContext, text: str, reply_to_id: str | None, children: list[str]
    ) -> dict:
        return {"media_type": "CAROUSEL", "children": ",".join(children), "caption": text}

    def _unfindable(self, ctx: PublishContext) -> ProviderError | None:
        # Stories never appear in the user's media listing and carry no caption to match:
        # once a story's publish answer is lost, only a person can tell which it is.
        if ctx.settings.get("media_type") != "STORIES":
            return None
        return ProviderError(
            ErrorKind.OUTCOME_UNKNOWN,
            "The story's publish answer was lost, and Instagram offers no way to find a story "
            "again: check the account's stories and record the outcome.",
            code="story_not_findable",
            retryable=False,
            action=Action.VERIFY,
        )

    # Tokens and connect ----------------------------------------------------------------

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        """A new 60-day token when the current one is within a week of expiry (it must be
        at least a day old and unexpired to be refreshed)."""
        return connect.LOGIN.refresh(account, credentials)

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        return connect.LOGIN.authorization_url(state=state, redirect_uri=redirect_uri)

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        return connect.complete_connect(code=code, redirect_uri=redirect_uri)


register_adapter(InstagramAdapter())
