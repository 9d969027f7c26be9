"""The Graph error envelope (`{"error": {"code", "error_subcode", "message", ...}}`) mapped
to our kinds, by code and subcode (the HTTP status only as a fallback). Instagram, Threads
and Facebook Pages all answer in it."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx

from apps.common.db_clock import estimated_db_now
from apps.providers.errors import (
    Action,
    ErrorKind,
    ProviderError,
    classify_status,
    parse_retry_after,
)

# Codes of the Graph error envelope (developers.facebook.com, graph-api error handling).
TRANSIENT_CODES = frozenset({1, 2, -1, -2})  # Instagram reports its server faults as -1/-2
# 4 app, 17 user, 32 Page, 613 custom; 80000-80014 Business Use Case throttling (80001
# Pages, 80002 Instagram, ...), which the Instagram Platform and Page tokens are subject to.
RATE_LIMIT_CODES = frozenset({4, 17, 32, 613, *range(80000, 80015)})
PUBLISH_LIMIT_CODE = 9
FEED_LIMIT_CODE = 341
AUTH_CODE = 190
PERMISSION_CODES = frozenset({10, *range(200, 300)})
INVALID_PARAMETER_CODE = 100
# With code 100: the object does not exist, cannot be loaded, or takes no such operation.
UNKNOWN_OBJECT_SUBCODE = 33
POLICY_BLOCK_CODE = 368
DUPLICATE_CODE = 506
LINK_ERROR_CODE = 1609005
MEDIA_NOT_READY_CODE = 9007

# Subcodes whose meaning overrides the code (code 4 + 2207051 is a spam block, not a rate
# limit). Transient Instagram subcodes (2207001, 2207003, 2207020, 2207032, 2207053) arrive
# with code -1/-2 and are handled by the code.
SUBCODE_KINDS: dict[int, tuple[ErrorKind, str]] = {
    2207006: (ErrorKind.PROVIDER_UNAVAILABLE, "The media could not be found; try again."),
    2207008: (ErrorKind.PROVIDER_UNAVAILABLE, "The media container expired; try again."),
    2207027: (ErrorKind.MEDIA_PROCESSING, "The media is not ready for publishing yet."),
    2207042: (ErrorKind.RATE_LIMITED, "The account reached its daily publishing limit."),
    2207050: (ErrorKind.PERMISSION_MISSING, "The Instagram account is restricted."),
    2207051: (ErrorKind.CONTENT_REJECTED, "The platform restricted this activity as spam."),
    4279013: (ErrorKind.PERMISSION_MISSING, "The Threads profile is restricted."),
}
# Any other 2207xxx subcode is a media or parameter problem (format, size, type, ...).
INSTAGRAM_SUBCODE_RANGE = range(2207000, 2208000)
PUBLISH_WINDOW = timedelta(hours=24)


def body_of(response: httpx.Response) -> dict:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def regain_access_at(response: httpx.Response, *, now: datetime | None = None) -> datetime | None:
    """When Meta says a throttled caller may call again.

    `X-Business-Use-Case-Usage` maps business ids to usage entries, each with
    `estimated_time_to_regain_access` in minutes; the longest wait wins. A Retry-After
    header, should one appear, is honoured too.
    """
    now = now or estimated_db_now()  # minutes from now, on the clock retries are kept by
    minutes = 0
    raw = response.headers.get("X-Business-Use-Case-Usage")
    if raw:
        try:
            usage = json.loads(raw)
        except ValueError:
            usage = {}
        for entries in usage.values() if isinstance(usage, dict) else []:
            for entry in entries if isinstance(entries, list) else []:
                try:
                    minutes = max(minutes, int(entry.get("estimated_time_to_regain_access", 0)))
                except (TypeError, ValueError, AttributeError):
                    continue
    header_at = parse_retry_after(response.headers.get("Retry-After"), now=now)
    buc_at = now + timedelta(minutes=minutes) if minutes else None
    candidates = [at for at in (header_at, buc_at) if at is not None]
    return max(candidates) if candidates else None


def classify(response: httpx.Response, *, is_create: bool) -> ProviderError:
    """Classify a Graph error envelope by code and subcode (HTTP status only as a fallback).

    `is_create` is true for the irreversible call (publish, a feed post): a transient code
    there leaves the outcome unknown, since the post may have been made.
    """
    error = body_of(response).get("error")
    if not isinstance(error, dict):
        return classify_status(response, is_create=is_create)
    code, subcode = error.get("code"), error.get("error_subcode")
    message = error.get("error_user_msg") or error.get("message") or ""
    code_text = f"{code}/{subcode}" if subcode else (str(code) if code is not None else None)
    status = response.status_code

    def make(kind: ErrorKind, text: str = "", **extra) -> ProviderError:
        return ProviderError(kind, text or message, code=code_text, http_status=status, **extra)

    if subcode in SUBCODE_KINDS:
        kind, text = SUBCODE_KINDS[subcode]
        detail = f"{text} ({message})" if message else text
        if kind == ErrorKind.RATE_LIMITED:
            return make(kind, detail, retry_at=datetime.now(UTC) + PUBLISH_WINDOW)
        if kind == ErrorKind.CONTENT_REJECTED:
            # A policy block: nothing to edit, a person may try again much later.
            return make(kind, detail, action=Action.RETRY)
        return make(kind, detail)
    # Rate limits often carry is_transient too: the code decides first.
    if code in RATE_LIMIT_CODES or code == FEED_LIMIT_CODE:
        return make(ErrorKind.RATE_LIMITED, retry_at=regain_access_at(response))
    if code == PUBLISH_LIMIT_CODE:
        return make(ErrorKind.RATE_LIMITED, retry_at=datetime.now(UTC) + PUBLISH_WINDOW)
    if code == MEDIA_NOT_READY_CODE:
        return make(ErrorKind.MEDIA_PROCESSING)
    if code in TRANSIENT_CODES:
        return _transient(make, message, is_create=is_create)
    if code == AUTH_CODE:
        return make(ErrorKind.AUTH_EXPIRED)
    if code in PERMISSION_CODES:
        return make(ErrorKind.PERMISSION_MISSING)
    if code == DUPLICATE_CODE:
        return make(ErrorKind.DUPLICATE_CONTENT)
    if code == POLICY_BLOCK_CODE:
        return make(ErrorKind.CONTENT_REJECTED, action=Action.RETRY)
    if code in (INVALID_PARAMETER_CODE, LINK_ERROR_CODE) or subcode in INSTAGRAM_SUBCODE_RANGE:
        return make(ErrorKind.CONTENT_REJECTED)
    if error.get("is_transient") is True:
        return _transient(make, message, is_create=is_create)
    return classify_status(response, is_create=is_create, code=code_text, message=message)


def _transient(
    make: Callable[..., ProviderError], message: str, *, is_create: bool
) -> ProviderError:
    """Meta's side failed. On the irreversible call the post may still have been made."""
    if is_create:
        return make(ErrorKind.OUTCOME_UNKNOWN, message or "The platform had a transient error.")
    return make(ErrorKind.PROVIDER_UNAVAILABLE)
