"""Threads (Meta): container publishing, reply chains, carousels, long-lived tokens.

Meta fetches media by URL, so every image or video needs the signed `public_url` the
pipeline hands over. A thread is a reply chain: each segment's container names the previous
segment's published media id in `reply_to_id`.
"""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers.base import (
    ConnectedIdentity,
    MediaPayload,
    PollSchedule,
    PublishContext,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.meta_graph import (
    ContainerAdapter,
    exchange_token,
    graph_call,
    graph_client,
    public_media_url,
    token_call,
)
from apps.providers.oauth import parse_expires_at

THREADS_GRAPH = "https://graph.threads.net/v1.0"
THREADS_AUTHORIZE = "https://threads.net/oauth/authorize"
THREADS_TOKEN = "https://graph.threads.net/oauth/access_token"
THREADS_EXCHANGE = "https://graph.threads.net/access_token"
THREADS_REFRESH = "https://graph.threads.net/refresh_access_token"
SCOPES = ["threads_basic", "threads_content_publish", "threads_manage_replies"]
# Long-lived tokens last 60 days and may be refreshed once a day old; refresh a week ahead.
REFRESH_MARGIN = timedelta(days=7)

# Docs: check a container once a minute for at most 5 minutes (media containers need about
# 30 s). Text containers are FINISHED at once, so the first look comes after 10 s; video
# often takes longer than 5 minutes, so the budget allows 15.
POLL_SCHEDULE = PollSchedule(initial_delay_s=10, interval_s=60, max_wait_s=900)


def _client_id() -> str:
    return settings.THREADS_APP_ID or settings.META_APP_ID


def _client_secret() -> str:
    return settings.THREADS_APP_SECRET or settings.META_APP_SECRET


class ThreadsAdapter(ContainerAdapter):
    platform = "threads"
    graph_base = THREADS_GRAPH
    create_edge = "threads"
    publish_edge = "threads_publish"
    status_fields = "status,error_message"
    status_key = "status"
    status_detail_key = "error_message"
    text_field = "text"
    replies_edge = "replies"  # the user's replies are not in their threads listing
    max_carousel_items = 20
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

    # Quota -----------------------------------------------------------------------------

    def quota_usage(self, ctx: PublishContext) -> dict:
        """Posts and replies published in the last 24 h against the profile's caps."""
        with graph_client(ctx.credentials.get("access_token")) as client:
            body = graph_call(
                client,
                "GET",
                self._url(ctx, "threads_publishing_limit"),
                params={"fields": "quota_usage,config,reply_quota_usage,reply_config"},
                is_create=False,
            )
        usage = (body.get("data") or [{}])[0]
        config, reply_config = usage.get("config") or {}, usage.get("reply_config") or {}
        return {
            "used": usage.get("quota_usage", 0),
            "total": config.get("quota_total"),
            "window_s": config.get("quota_duration"),
            "replies_used": usage.get("reply_quota_usage", 0),
            "replies_total": reply_config.get("quota_total"),
        }

    # Tokens ----------------------------------------------------------------------------

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        """Swap the long-lived token for a new 60-day one when it is within a week of
        expiry. An expired token cannot be refreshed: reconnect."""
        expiry = account.token_expires_at or parse_expires_at(credentials.get("expires_at"))
        if expiry is None or expiry - timezone.now() > REFRESH_MARGIN:
            return None
        if expiry <= timezone.now():
            raise ProviderError(
                ErrorKind.AUTH_EXPIRED,
                "The Threads token expired; reconnect the account.",
                code="token_expired",
            )
        fresh = exchange_token(
            THREADS_REFRESH,
            {"grant_type": "th_refresh_token", "access_token": credentials["access_token"]},
        )
        return {**credentials, **fresh}

    # Connect ---------------------------------------------------------------------------

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        # Threads takes no PKCE challenge; the state still binds the callback.
        query = {
            "client_id": _client_id(),
            "redirect_uri": redirect_uri,
            "scope": ",".join(SCOPES),
            "response_type": "code",
            "state": state,
        }
        return f"{THREADS_AUTHORIZE}?{urlencode(query)}"

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        """Code → short-lived token (1 h) → long-lived token (60 days) → the profile."""
        short = token_call(
            "POST",
            THREADS_TOKEN,
            data={
                "client_id": _client_id(),
                "client_secret": _client_secret(),
                "code": code,
                "grant_type": "authorization_code",
                "redirect_uri": redirect_uri,
            },
        )
        long_lived = exchange_token(
            THREADS_EXCHANGE,
            {
                "grant_type": "th_exchange_token",
                "client_secret": _client_secret(),
                "access_token": short["access_token"],
            },
        )
        with graph_client(long_lived["access_token"]) as client:
            profile = graph_call(
                client,
                "GET",
                f"{THREADS_GRAPH}/me",
                params={"fields": "id,username,name"},
                is_create=False,
            )
        return ConnectedIdentity(
            remote_id=str(profile["id"]),
            handle=profile.get("username", ""),
            display_name=profile.get("name", ""),
            credentials=long_lived,
            token_expires_at=parse_expires_at(long_lived["expires_at"]),
        )


register_adapter(ThreadsAdapter())
