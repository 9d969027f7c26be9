"""Connecting a Threads profile."""

from __future__ import annotations

from apps.providers.base import ConnectedIdentity
from apps.providers.meta.graph import graph_call, graph_client
from apps.providers.meta.login import LongLivedLogin
from apps.providers.oauth import parse_expires_at

THREADS_GRAPH = "https://graph.threads.net/v1.0"
LOGIN = LongLivedLogin(
    name="Threads",
    authorize_url="https://threads.net/oauth/authorize",
    token_url="https://graph.threads.net/oauth/access_token",
    exchange_url="https://graph.threads.net/access_token",
    refresh_url="https://graph.threads.net/refresh_access_token",
    exchange_grant="th_exchange_token",
    refresh_grant="th_refresh_token",
    scopes=(
        "threads_basic",
        "threads_content_publish",
        "threads_manage_replies",
        "threads_delete",  # the live validation deletes its test posts
    ),
    app_id_setting="THREADS_APP_ID",
    app_secret_setting="THREADS_APP_SECRET",
)


def complete_connect(*, code: str, redirect_uri: str) -> ConnectedIdentity:
    """Code → short-lived token (1 h) → long-lived token (60 days) → the profile."""
    _, long_lived = LOGIN.exchange_code(code=code, redirect_uri=redirect_uri)
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
