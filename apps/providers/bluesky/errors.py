"""Bluesky's XRPC error table (`{"error": "<Name>", "message": "..."}`) mapped to our kinds."""

from __future__ import annotations

import httpx

from apps.providers import httpcall
from apps.providers.errors import ErrorKind, ProviderError, parse_reset_epoch

# 400 ExpiredToken: the access JWT is stale and refreshSession fixes it. The same name with
# "revoked" in the message, on a refresh, means the session is gone.
EXPIRED_TOKEN = "ExpiredToken"
_AUTH_ERRORS = {"InvalidToken", "AuthMissing", "AuthenticationRequired", "AccountTakedown"}


# A create under an rkey that holds a record: today a 500 InternalServerError; an explicit
# XRPC error is proposed upstream (name not yet published), so any "exists" name counts.
_RECORD_EXISTS = ("AlreadyExists", "RecordExists", "DuplicateRecord")


def is_record_exists(response: httpx.Response) -> bool:
    """The named "record exists" refusal of a create (any 4xx with such a name, or 409)."""
    name = error_name(response) or ""
    if response.status_code == 409:
        return True
    return 400 <= response.status_code < 500 and any(part in name for part in _RECORD_EXISTS)


def error_name(response: httpx.Response) -> str | None:
    return httpcall.json_body(response).get("error")


def is_expired_token(response: httpx.Response) -> bool:
    return response.status_code == 400 and error_name(response) == EXPIRED_TOKEN


def classify(response: httpx.Response, *, is_create: bool) -> ProviderError:
    status = response.status_code
    body = httpcall.json_body(response)
    name = body.get("error")
    message = str(body.get("message") or name or f"Bluesky answered HTTP {status}.")

    def error(kind: ErrorKind, **extra) -> ProviderError:
        return ProviderError(
            kind, message, code=name or f"http_{status}", http_status=status, **extra
        )

    if status == 429:
        # RateLimit-Reset is epoch seconds (no Retry-After).
        return error(
            ErrorKind.RATE_LIMITED,
            retry_at=parse_reset_epoch(response.headers.get("RateLimit-Reset")),
        )
    if status == 401 or name in _AUTH_ERRORS or name == EXPIRED_TOKEN:
        return error(ErrorKind.AUTH_EXPIRED)
    if status == 403:
        return error(ErrorKind.PERMISSION_MISSING)
    if status in (400, 413):  # InvalidRequest, BlobTooLarge, PayloadTooLarge...
        return error(ErrorKind.CONTENT_REJECTED)
    if status >= 500:
        # On a create the write may have happened; the adapter asks getRecord first.
        kind = ErrorKind.OUTCOME_UNKNOWN if is_create else ErrorKind.PROVIDER_UNAVAILABLE
        return error(kind)
    return error(ErrorKind.UNKNOWN)
