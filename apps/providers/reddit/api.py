"""Calls to Reddit's OAuth API with the account's bearer token (and the User-Agent Reddit
requires of every client)."""

from __future__ import annotations

import httpx
from django.conf import settings

from apps.providers import httpcall
from apps.providers.errors import classify_transport
from apps.providers.reddit.errors import classify

API = "https://oauth.reddit.com"


def client(credentials: dict) -> httpx.Client:
    return httpcall.client(
        headers={
            "Authorization": f"Bearer {credentials.get('access_token', '')}",
            "User-Agent": settings.REDDIT_USER_AGENT,
        },
        timeout=settings.PROVIDER_TIMEOUT_S,
    )


def call(http: httpx.Client, method: str, url: str, *, is_create: bool, **kwargs) -> dict:
    """The answer's JSON; a refusal (an HTTP error, or a 200 carrying json.errors) raises."""
    try:
        response = http.request(method, url, **kwargs)
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=is_create) from exc
    body = httpcall.json_body(response)
    if response.status_code != 200 or (body.get("json") or {}).get("errors"):
        raise classify(response, is_create=is_create)
    return body
