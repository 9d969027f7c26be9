"""LinkedIn's error table (`{"status", "serviceErrorCode", "code", "message"}`) mapped to our
kinds."""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta

import httpx

from apps.providers import httpcall
from apps.providers.errors import ErrorKind, ProviderError

# "... Content is a duplicate of urn:li:share:7012345678901234567"
_EXISTING_URN = re.compile(r"urn:li:(?:share|ugcPost):\d+")


def _next_utc_midnight(now: datetime | None = None) -> datetime:
    now = now or datetime.now(UTC)
    return datetime.combine(now.date() + timedelta(days=1), time.min, tzinfo=UTC)


def _is_duplicate(body: dict) -> bool:
    details = (body.get("errorDetails") or {}).get("inputErrors") or []
    if any(item.get("code") == "DUPLICATE_POST" for item in details):
        return True
    return "duplicate" in str(body.get("message", "")).lower()


def classify(response: httpx.Response, *, is_create: bool) -> ProviderError:
    status = response.status_code
    body = httpcall.json_body(response)
    message = str(body.get("message") or f"LinkedIn answered HTTP {status}.")
    code = body.get("code") or (
        str(body["serviceErrorCode"]) if body.get("serviceErrorCode") is not None else None
    )

    def error(kind: ErrorKind, code: str | None = code, **extra) -> ProviderError:
        return ProviderError(
            kind, message, code=code or f"http_{status}", http_status=status, **extra
        )

    if status == 429:
        # No rate-limit headers and no Retry-After: LinkedIn's limits are daily and reset at
        # 00:00 UTC, so retrying sooner only spends attempts.
        return error(ErrorKind.RATE_LIMITED, retry_at=_next_utc_midnight())
    if status == 401:  # 65600 invalid, 65601 REVOKED_ACCESS_TOKEN, EXPIRED_ACCESS_TOKEN
        return error(ErrorKind.AUTH_EXPIRED)
    if status == 403:  # ACCESS_DENIED: missing scope or no role on the organization
        return error(ErrorKind.PERMISSION_MISSING)
    if status == 422 and _is_duplicate(body):
        # The message names the post that already holds this content; it settles an
        # ambiguous earlier attempt as published (it may name a post deleted in the last
        # day or two).
        existing = _EXISTING_URN.search(message)
        return error(
            ErrorKind.DUPLICATE_CONTENT,
            code="DUPLICATE_POST",
            existing_post_id=existing.group(0) if existing else None,
        )
    if status in (400, 413, 422):  # ILLEGAL_ARGUMENT, "ERROR :: /commentary :: ..."
        return error(ErrorKind.CONTENT_REJECTED)
    if status >= 500:
        kind = ErrorKind.OUTCOME_UNKNOWN if is_create else ErrorKind.PROVIDER_UNAVAILABLE
        return error(kind)
    return error(ErrorKind.UNKNOWN)
