"""Mastodon's error table (body `{"error": "...", "error_description"?}`; the status code is
authoritative) mapped to our kinds."""

from __future__ import annotations

import httpx

from apps.providers import httpcall
from apps.providers.errors import (
    REQUEST_IN_PROGRESS,
    Action,
    ErrorKind,
    ProviderError,
    parse_reset_iso,
)

# Attaching media that is still processing is a 422 whose text says so; it clears by itself.
_MEDIA_NOT_READY = ("not finished processing", "try again in a moment")
# An account the instance disabled or whose e-mail is unconfirmed: only the instance can fix it.
_ACCOUNT_BLOCKED = ("login is currently disabled", "confirmed e-mail")
# Mastodon runs a keyed create under a lock on its Idempotency-Key; a request arriving while
# another holds it fails to take the lock (Mastodon::RaceConditionError) and is answered 503
# with this text before anything is created. The same text answers a few other failures
# (storage, a tripped circuit breaker); after any of them a resend under the key is safe,
# as none falls between saving the status and recording its key.
_TEMPORARY_PROBLEM = "temporary problem serving your request"


def classify(response: httpx.Response, *, is_create: bool, keyed: bool = False) -> ProviderError:
    """`keyed`: the request carried an Idempotency-Key the instance honours."""
    status = response.status_code
    body = httpcall.json_body(response)
    message = str(body.get("error") or f"The instance answered HTTP {status}.")
    lowered = message.lower()

    def error(kind: ErrorKind, **extra) -> ProviderError:
        return ProviderError(
            kind, message, code=extra.pop("code", None), http_status=status, **extra
        )

    if status == 429:
        # X-RateLimit-Reset is an ISO 8601 instant, not epoch seconds.
        return error(
            ErrorKind.RATE_LIMITED,
            code="rate_limited",
            retry_at=parse_reset_iso(response.headers.get("X-RateLimit-Reset")),
        )
    if status == 401:
        return error(ErrorKind.AUTH_EXPIRED, code="invalid_token")
    if status == 403:
        if any(marker in lowered for marker in _ACCOUNT_BLOCKED):
            return error(
                ErrorKind.PERMISSION_MISSING, code="account_disabled", action=Action.CONTACT_SUPPORT
            )
        return error(ErrorKind.PERMISSION_MISSING, code="forbidden")
    if status == 422 and any(marker in lowered for marker in _MEDIA_NOT_READY):
        return error(ErrorKind.MEDIA_PROCESSING, code="media_not_ready")
    if status in (400, 413, 422):
        return error(ErrorKind.CONTENT_REJECTED, code="validation_failed")
    if status == 503 and keyed and _TEMPORARY_PROBLEM in lowered:
        # Nothing was created by this request; an earlier one under the same key may still
        # be running. In progress, not lost: looked at again later, never a second post.
        return error(ErrorKind.PROVIDER_UNAVAILABLE, code=REQUEST_IN_PROGRESS)
    if status >= 500:
        # The status may have been stored before the server failed. A resend with the same
        # Idempotency-Key inside the key's hour is safe; the pipeline decides that, so this
        # stays an unknown outcome rather than a blind retry.
        kind = ErrorKind.OUTCOME_UNKNOWN if is_create else ErrorKind.PROVIDER_UNAVAILABLE
        return error(kind, code="server_error")
    return error(ErrorKind.UNKNOWN, code=f"http_{status}")
