"""Pinterest's error body (`{"code", "message"}`) mapped to our kinds by HTTP status: a 429
waits for the rate limit's reset, a 404 names a destination to change."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx

from apps.providers import httpcall
from apps.providers.errors import (
    ErrorKind,
    ProviderError,
    classify_status,
    parse_reset_seconds,
    parse_retry_after,
)


def _reset_at(response: httpx.Response) -> datetime | None:
    """Retry-After, else `x-ratelimit-reset` (seconds until reset, or an epoch); seconds
    count from the database clock, as every retry time is compared with it."""
    retry_at = parse_retry_after(response.headers.get("Retry-After"))
    value = response.headers.get("x-ratelimit-reset", "")
    if retry_at is None and value.isdigit():
        seconds = int(value)
        if seconds > 1_000_000_000:
            return datetime.fromtimestamp(seconds, tz=UTC)
        return parse_reset_seconds(value)
    return retry_at


def classify(response: httpx.Response, *, is_create: bool) -> ProviderError:
    body = httpcall.json_body(response)
    code = str(body["code"]) if body.get("code") is not None else None
    message = body.get("message") or ""
    status = response.status_code
    if status == 429:
        return ProviderError(
            ErrorKind.RATE_LIMITED,
            message or "Pinterest is rate limiting this account.",
            code=code,
            http_status=429,
            retry_at=_reset_at(response),
        )
    if status == 404:
        # "Board not found" and friends: the destination needs changing, not the token.
        return ProviderError(ErrorKind.CONTENT_REJECTED, message, code=code, http_status=404)
    return classify_status(response, is_create=is_create, code=code, message=message)
