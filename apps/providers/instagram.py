"""Instagram (professional accounts, Instagram Login): container publishing of images,
Reels, stories and carousels, the publishing cap, long-lived tokens.

Instagram fetches media by URL (the pipeline's signed `public_url`). Captions are the
segment's text; Instagram has no threads, so only single segments are published.
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
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.meta_graph import (
    GRAPH_VERSION,
    ContainerAdapter,
    exchange_token,
    graph_call,
    graph_client,
    public_media_url,
    token_call,
)
from apps.providers.oauth import parse_expires_at

INSTAGRAM_GRAPH = f"https://graph.instagram.com/{GRAPH_VERSION}"
INSTAGRAM_AUTHORIZE = "https://www.instagram.com/oauth/authorize"
INSTAGRAM_TOKEN = "https://api.instagram.com/oauth/access_token"
INSTAGRAM_EXCHANGE = "https://graph.instagram.com/access_token"
INSTAGRAM_REFRESH = "https://graph.instagram.com/refresh_access_token"
SCOPES = ["instagram_business_basic", "instagram_business_content_publish"]
REFRESH_MARGIN = timedelta(days=7)

# Docs: check the container once a minute for at most 5 minutes. Reels routinely take
# longer to process, so the budget allows 15 minutes.
POLL_SCHEDULE = PollSchedule(initial_delay_s=10, interval_s=60, max_wait_s=900)


def _client_id() -> str:
    return settings.INSTAGRAM_APP_ID or settings.META_APP_ID


def _client_secret() -> str:
    return settings.INSTAGRAM_APP_SECRET or settings.META_APP_SECRET


class InstagramAdapter(ContainerAdapter):
    platform = "instagram"
    graph_base = INSTAGRAM_GRAPH
    create_edge = "media"
    publish_edge = "media_publish"
    status_fields = "status_code,status"
    status_key = "status_code"
    status_detail_key = "status"  # e.g. "Error: 2207026"
    text_field = "caption"
    max_carousel_items = 10
    poll_schedule = POLL_SCHEDULE

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

    # Quota -----------------------------------------------------------------------------

    def quota_usage(self, ctx: PublishContext) -> dict:
        """Posts published through the API in the last 24 h against the account's cap
        (`quota_total` is read live: the docs disagree on 50 versus 100)."""
        with graph_client(ctx.credentials.get("access_token")) as client:
            body = graph_call(
                client,
                "GET",
                self._url(ctx, "content_publishing_limit"),
                params={"fields": "quota_usage,config"},
                is_create=False,
            )
        usage = (body.get("data") or [{}])[0]
        config = usage.get("config") or {}
        return {
            "used": usage.get("quota_usage", 0),
            "total": config.get("quota_total"),
            "window_s": config.get("quota_duration"),
        }

    # Tokens ----------------------------------------------------------------------------

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        """A new 60-day token when the current one is within a week of expiry (it must be
        at least a day old and unexpired to be refreshed)."""
        expiry = account.token_expires_at or parse_expires_at(credentials.get("expires_at"))
        if expiry is None or expiry - timezone.now() > REFRESH_MARGIN:
            return None
        if expiry <= timezone.now():
            raise ProviderError(
                ErrorKind.AUTH_EXPIRED,
                "The Instagram token expired; reconnect the account.",
                code="token_expired",
            )
        fresh = exchange_token(
            INSTAGRAM_REFRESH,
            {"grant_type": "ig_refresh_token", "access_token": credentials["access_token"]},
        )
        return {**credentials, **fresh}

    # Connect ---------------------------------------------------------------------------

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        query = {
            "client_id": _client_id(),
            "redirect_uri": redirect_uri,
            "response_type": "code",
            "scope": ",".join(SCOPES),
            "state": state,
        }
        return f"{INSTAGRAM_AUTHORIZE}?{urlencode(query)}"

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        """Code → short-lived token → long-lived token (60 days) → the professional account.

        The publishing id is the account's `user_id` (the `id` of /me is app-scoped).
        """
        short = token_call(
            "POST",
            INSTAGRAM_TOKEN,
            data={
                "client_id": _client_id(),
                "client_secret": _client_secret(),
                "grant_type": "authorization_code",
                "redirect_uri": redirect_uri,
                "code": code,
            },
        )
        short = (short.get("data") or [short])[0]  # newer answers wrap the token in "data"
        long_lived = exchange_token(
            INSTAGRAM_EXCHANGE,
            {
                "grant_type": "ig_exchange_token",
                "client_secret": _client_secret(),
                "access_token": short["access_token"],
            },
        )
        with graph_client(long_lived["access_token"]) as client:
            profile = graph_call(
                client,
                "GET",
                f"{INSTAGRAM_GRAPH}/me",
                params={"fields": "user_id,username,name"},
                is_create=False,
            )
        return ConnectedIdentity(
            remote_id=str(profile.get("user_id") or short.get("user_id")),
            handle=profile.get("username", ""),
            display_name=profile.get("name", ""),
            credentials=long_lived,
            token_expires_at=parse_expires_at(long_lived["expires_at"]),
        )


register_adapter(InstagramAdapter())
