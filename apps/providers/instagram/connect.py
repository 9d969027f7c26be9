"""Connecting an Instagram professional account through Instagram Login."""

from __future__ import annotations

from apps.providers.base import ConnectedIdentity
from apps.providers.meta.graph import GRAPH_VERSION, graph_call, graph_client
from apps.providers.meta.login import LongLivedLogin
from apps.providers.oauth import parse_expires_at

INSTAGRAM_GRAPH = f"https://graph.instagram.com/{GRAPH_VERSION}"
LOGIN = LongLivedLogin(
    name="Instagram",
    authorize_url="https://www.instagram.com/oauth/authorize",
    token_url="https://api.instagram.com/oauth/access_token",
    exchange_url="https://graph.instagram.com/access_token",
    refresh_url="https://graph.instagram.com/refresh_access_token",
    exchange_grant="ig_exchange_token",
    refresh_grant="ig_refresh_token",
    scopes=(
        "instagram_business_basic",
        "instagram_business_content_publish",
        "instagram_business_manage_comments",  # the first comment
    ),
    app_id_setting="INSTAGRAM_APP_ID",
    app_secret_setting="INSTAGRAM_APP_SECRET",
)


def complete_connect(*, code: str, redirect_uri: str) -> ConnectedIdentity:
    """Code → short-lived token → long-lived token (60 days) → the professional account.

    The publishing id is the account's `user_id` (the `id` of /me is app-scoped).
    """
    short, long_lived = LOGIN.exchange_code(code=code, redirect_uri=redirect_uri)
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
