"""Calls to Pinterest API v5 with the account's bearer token."""

from __future__ import annotations

import httpx
from django.conf import settings

from apps.providers import httpcall
from apps.providers.errors import classify_transport
from apps.providers.pinterest.errors import classify

API = "https://api.pinterest.com/v5"


def client(credentials: dict) -> httpx.Client:
    return httpcall.client(
        headers={"Authorization": f"Bearer {credentials.get('access_token', '')}"},
        timeout=settings.PROVIDER_TIMEOUT_S,
    )


def call(http: httpx.Client, method: str, path: str, *, is_create: bool, **kwargs) -> dict:
    try:
        response = http.request(method, f"{API}{path}", **kwargs)
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=is_create) from exc
    if response.status_code >= 400:
        raise classify(response, is_create=is_create)
    try:
        return response.json()
    except ValueError:
        return {}
