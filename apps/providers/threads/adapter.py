"""Threads (Meta): container publishing, reply chains, carousels, long-lived tokens.

Meta fetches media by URL, so every image or video needs the signed `public_url` the
pipeline hands over. A thread is a reply chain: each segment's container names the previous
segment's published media id in `reply_to_id`.
"""

from __future__ import annotations

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
from apps.providers.meta.container import ContainerAdapter
from apps.providers.meta.graph import graph_client, graph_delete, public_media_url
from apps.providers.threads import connect
from apps.providers.threads.connect import THREADS_GRAPH

# Docs: check a container once a minute for at most 5 minutes (media containers need about
# 30 s). Text containers are FINISHED at once, so the first look comes after 10 s; video
# often takes longer than 5 minutes, so the budget allows 15.
POLL_SCHEDULE = PollSchedule(initial_delay_s=10, interval_s=60, max_wait_s=900)


class ThreadsAdapter(ContainerAdapter):
    platform = "threads"
    implements = Implements(
        media_kinds=frozenset({"image", "video"}),
        max_images=20,  # a carousel of up to max_carousel_items, images and videos mixed
        max_videos=20,
        mixed_media=True,
        settings=frozenset({"link_attachment", "reply_control"}),
        threads=True,  # reply_to_id on the container
        alt_text=True,
    )
    graph_base = THREADS_GRAPH
    create_edge = "threads"
    publish_edge = "threads_publish"
    status_fields = "status,error_message"
    status_key = "status"
    status_detail_key = "error_message"
    text_field = "text"
    replies_edge = "replies"  # the user's replies are not in their threads listing
    max_carousel_items = 20
    quota_edge = "threads_publishing_limit"
    # Replies have a cap of their own.
    quota_fields = "quota_usage,config,reply_quota_usage,reply_config"
    poll_schedule = POLL_SCHEDULE

    # Containers ------------------------------------------------------------------------

    def _single_params(
        self, ctx: PublishContext, segment: SegmentPayload, reply_to_id: str | None
    ) -> dict:
        if not segment.media:
            params = {"media_type": "TEXT", "text": segment.text}
            if ctx.settings.get("link_attachment"):
                params["link_attachment"] = ctx.settings["link_attachment"]
        else:
            params = {**self._media_params(segment.media[0]), "text": segment.text}
        if reply_to_id:
            params["reply_to_id"] = reply_to_id
        if ctx.settings.get("reply_control"):
            params["reply_control"] = ctx.settings["reply_control"]
        return params

    def _carousel_item_params(self, media: MediaPayload) -> dict:
        return {**self._media_params(media), "is_carousel_item": "true"}

    def _carousel_params(
        self, ctx: PublishContext, text: str, reply_to_id: str | None, children: list[str]
    ) -> dict:
        params = {"media_type": "CAROUSEL", "children": ",".join(children), "text": text}
        if reply_to_id:
            params["reply_to_id"] = reply_to_id
        return params

    @staticmethod
    def _media_params(media: MediaPayload) -> dict:
        if media.kind == "video":
            params = {"media_type": "VIDEO", "video_url": public_media_url(media)}
        else:
            params = {"media_type": "IMAGE", "image_url": public_media_url(media)}
        if media.alt_text:
            params["alt_text"] = media.alt_text
        return params

    # Deletion (the live validation's clean-up) ---------------------------------------

    def delete_post(self, ctx: PublishContext, post: PublishedSegment) -> None:
        """DELETE /{threads-media-id}: a post or a reply the user made (needs the
        threads_delete permission; Threads allows 100 deletes a day). A post already gone
        counts as deleted."""
        with graph_client(ctx.credentials.get("access_token")) as client:
            graph_delete(client, f"{self.graph_base}/{post.provider_post_id}")

    # Quota -----------------------------------------------------------------------------

    def _quota(self, usage: dict) -> dict:
        reply_config = usage.get("reply_config") or {}
        return {
            **super()._quota(usage),
            "replies_used": usage.get("reply_quota_usage", 0),
            "replies_total": reply_config.get("quota_total"),
        }

    # Tokens and connect ----------------------------------------------------------------

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        """Swap the long-lived token for a new 60-day one when it is within a week of
        expiry. An expired token cannot be refreshed: reconnect."""
        return connect.LOGIN.refresh(account, credentials)

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        # Threads takes no PKCE challenge; the state still binds the callback.
        return connect.LOGIN.authorization_url(state=state, redirect_uri=redirect_uri)

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        return connect.complete_connect(code=code, redirect_uri=redirect_uri)


register_adapter(ThreadsAdapter())
