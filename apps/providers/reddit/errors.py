"""Reddit's answers mapped to our kinds. Refusals of a submit come back as HTTP 200 with
`{"json": {"errors": [[code, message, field], ...]}}`, RATELIMIT among them saying how long
to wait in words ("try again in 9 minutes"); other failures are plain HTTP statuses, a 429
with `X-Ratelimit-Reset` (seconds)."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx

from apps.common.db_clock import estimated_db_now
from apps.providers import httpcall
from apps.providers.errors import (
    ErrorKind,
    ProviderError,
    classify_status,
    parse_reset_seconds,
    parse_retry_after,
)

# json.errors codes; any other code is a refusal of the content as well.
DUPLICATE_CODES = frozenset({"ALREADY_SUB"})
CONTENT_CODES = frozenset(
    {
        "SUBREDDIT_NOEXIST",
        "SUBREDDIT_NOTALLOWED",
        "NO_SELFS",
        "NO_LINKS",
        "TOO_LONG",
        "NO_TEXT",
        "BAD_URL",
        "SUBMIT_VALIDATION_FLAIR_REQUIRED",
    }
)
_WAIT = re.compile(r"(\d+)\s*(millisecond|second|minute|hour)s?", re.IGNORECASE)
_UNITS = {"millisecond": 0.001, "second": 1, "minute": 60, "hour": 3600}


def ratelimit_wait(message: str) -> timedelta | None:
    """The wait in "you are doing that too much. try again in 9 minutes."."""
    match = _WAIT.search(message or "")
    if match is None:
        return None
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2).lower()])


def classify(response: httpx.Response, *, is_create: bool) -> ProviderError:
    body = httpcall.json_body(response)
    refusals = (body.get("json") or {}).get("errors")
    if response.status_code == 200 and refusals:
        return _refusal(refusals)
    message = body.get("message", "")
    if response.status_code == 429:
        retry_at = parse_reset_seconds(
            response.headers.get("X-Ratelimit-Reset")
        ) or parse_retry_after(response.headers.get("Retry-After"))
        return ProviderError(
            ErrorKind.RATE_LIMITED,
            message or "Reddit is rate limiting this client.",
            http_status=429,
            retry_at=retry_at,
        )
    return classify_status(response, is_create=is_create, message=message)


def _refusal(errors: list) -> ProviderError:
    """The first of json.errors decides."""
    code, message = (list(errors[0]) + ["", ""])[:2]
    message = message or code
    if code == "RATELIMIT":
        wait = ratelimit_wait(message)
        return ProviderError(
            ErrorKind.RATE_LIMITED,
            message,
            code=code,
            http_status=200,
            retry_at=estimated_db_now() + wait if wait else None,
        )
    if code in DUPLICATE_CODES:
        return ProviderError(ErrorKind.DUPLICATE_CONTENT, message, code=code, http_status=200)
    return ProviderError(ErrorKind.CONTENT_REJECTED, message, code=code, http_status=200)
