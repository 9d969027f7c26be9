"""The Graph client: one call with its answer classified, the token kept out of URLs and
logs, media handed over by URL, Graph timestamps."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime

import httpx
from django.conf import settings

from apps.providers import httpcall
from apps.providers.base import MediaPayload
from apps.providers.errors import Action, ErrorKind, ProviderError, classify_transport
from apps.providers.meta.errors import (
    INVALID_PARAMETER_CODE,
    UNKNOWN_OBJECT_SUBCODE,
    body_of,
    classify,
)

GRAPH_VERSION = "v23.0"
FACEBOOK_GRAPH = f"https://graph.facebook.com/{GRAPH_VERSION}"

# Meta's token endpoints take the token and app secret in the query string, and httpx logs
# every request URL at INFO: those values are masked before any handler sees them.
_SECRET_PARAMS = re.compile(
    r"((?:access_token|client_secret|fb_exchange_token|code)=)[^&\s\"]+", re.IGNORECASE
)


class RedactSecretsFilter(logging.Filter):
    """Masks token-like query parameters in the arguments of httpx's request log line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                _SECRET_PARAMS.sub(r"\1[redacted]", str(arg))
                if isinstance(arg, httpx.URL | str)
                else arg
                for arg in record.args
            )
        return True


logging.getLogger("httpx").addFilter(RedactSecretsFilter())


def graph_call(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    is_create: bool,
    params: dict | None = None,
    data: dict | None = None,
    files: dict | None = None,
    headers: dict | None = None,
    content: bytes | None = None,
) -> dict:
    """One Graph call: the decoded body, or a classified ProviderError. `content` is a raw
    body (the Resumable Upload API's bytes), instead of a form."""
    try:
        response = client.request(
            method,
            url,
            params=params,
            data=data,
            files=files,
            headers=headers,
            content=content,
        )
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=is_create) from exc
    if response.status_code >= 400 or "error" in body_of(response):
        raise classify(response, is_create=is_create)
    return body_of(response)


def graph_delete(client: httpx.Client, url: str) -> None:
    """DELETE a Graph object the account made. An object that is no longer there (code 100,
    subcode 33: "does not exist, cannot be loaded ...") counts as deleted, as a second
    delete of one post finds it gone."""
    try:
        graph_call(client, "DELETE", url, is_create=False)
    except ProviderError as err:
        if err.code != f"{INVALID_PARAMETER_CODE}/{UNKNOWN_OBJECT_SUBCODE}":
            raise


def graph_client(access_token: str | None = None) -> httpx.Client:
    """Tokens travel in the Authorization header, never in a URL that could be logged."""
    headers = {"Authorization": f"Bearer {access_token}"} if access_token else {}
    return httpcall.client(headers=headers, timeout=settings.PROVIDER_TIMEOUT_S)


def public_media_url(media: MediaPayload) -> str:
    """Meta fetches media itself; without a signed public URL there is nothing to send."""
    if not media.public_url:
        raise ProviderError(
            ErrorKind.UNKNOWN,
            "This platform fetches media by URL, and no public URL was prepared for it.",
            code="media_url_missing",
            retryable=False,
            action=Action.CONTACT_SUPPORT,
        )
    return media.public_url


def parse_graph_time(value: str | None) -> datetime | None:
    """Graph timestamps look like 2026-03-01T10:00:00+0000."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
