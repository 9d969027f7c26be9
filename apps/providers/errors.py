"""Error classification shared by every adapter.

An adapter never lets a raw HTTP or transport error escape: it raises one ProviderError
carrying the kind, whether it may be retried automatically, the provider's code and HTTP
status, the earliest retry time the provider asked for, and the action a person should take.
The pipeline stores `as_dict()` on the rendition and shows it as is.
"""

from __future__ import annotations

import email.utils
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

import httpx

from apps.common.db_clock import estimated_db_now


class ErrorKind(StrEnum):
    RATE_LIMITED = "rate_limited"
    PROVIDER_UNAVAILABLE = "provider_unavailable"  # 5xx before the write is known to happen
    NETWORK_BEFORE_SEND = "network_before_send"  # the request never left
    OUTCOME_UNKNOWN = "outcome_unknown"  # sent, but no answer: the post may exist
    AUTH_EXPIRED = "auth_expired"
    PERMISSION_MISSING = "permission_missing"
    CONTENT_REJECTED = "content_rejected"
    DUPLICATE_CONTENT = "duplicate_content"
    MEDIA_PROCESSING = "media_processing"
    PLAN_RESTRICTED = "plan_restricted"
    UNKNOWN = "unknown"


class Action(StrEnum):
    RECONNECT = "reconnect"
    EDIT = "edit"
    WAIT = "wait"
    VERIFY = "verify"  # look on the platform whether the post exists
    RETRY = "retry"
    CONTACT_SUPPORT = "contact_support"


# Kinds retried automatically. OUTCOME_UNKNOWN is deliberately absent: it is reconciled,
# never blindly resent.
RETRYABLE_KINDS = frozenset(
    {
        ErrorKind.RATE_LIMITED,
        ErrorKind.PROVIDER_UNAVAILABLE,
        ErrorKind.NETWORK_BEFORE_SEND,
        ErrorKind.MEDIA_PROCESSING,
    }
)

# The code of a create refused, nothing made, because an earlier request under the same
# idempotency key is still running (Mastodon's key lock): that request may still make it.
REQUEST_IN_PROGRESS = "request_in_progress"

DEFAULT_ACTION = {
    ErrorKind.RATE_LIMITED: Action.WAIT,
    ErrorKind.PROVIDER_UNAVAILABLE: Action.WAIT,
    ErrorKind.NETWORK_BEFORE_SEND: Action.WAIT,
    ErrorKind.OUTCOME_UNKNOWN: Action.VERIFY,
    ErrorKind.AUTH_EXPIRED: Action.RECONNECT,
    ErrorKind.PERMISSION_MISSING: Action.RECONNECT,
    ErrorKind.CONTENT_REJECTED: Action.EDIT,
    ErrorKind.DUPLICATE_CONTENT: Action.EDIT,
    ErrorKind.MEDIA_PROCESSING: Action.WAIT,
    ErrorKind.PLAN_RESTRICTED: Action.CONTACT_SUPPORT,
    ErrorKind.UNKNOWN: Action.RETRY,
}


@dataclass
class ProviderError(Exception):
    """One classified failure of a provider call."""

    kind: ErrorKind
    message: str
    code: str | None = None
    http_status: int | None = None
    retry_at: datetime | None = None
    action: Action | None = None
    retryable: bool | None = None
    # The existing post a duplicate rejection names (LinkedIn), so an ambiguous attempt can
    # be settled as published.
    existing_post_id: str | None = None
    # The platform's answer proves the segment has no post and none will come of any request
    # made for it (a Meta container read EXPIRED or ERROR: every earlier container of the
    # segment was read unpublished before it was replaced): it settles an unknown outcome.
    nothing_posted: bool = False

    def __post_init__(self) -> None:
        self.kind = ErrorKind(self.kind)
        if self.retryable is None:
            self.retryable = self.kind in RETRYABLE_KINDS
        if self.action is None:
            self.action = DEFAULT_ACTION[self.kind]
        super().__init__(self.message)

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"

    def as_dict(self) -> dict:
        return {
            "kind": str(self.kind),
            "code": self.code,
            "http_status": self.http_status,
            "message": self.message,
            "retryable": self.retryable,
            "action": str(self.action),
            "retry_at": self.retry_at.isoformat() if self.retry_at else None,
            "existing_post_id": self.existing_post_id,
        }


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> datetime | None:
    """Retry-After as delta-seconds or an HTTP-date; None when absent or unreadable.
    Delta-seconds count from `now`, by default the database clock as last measured (the
    instant is compared with that clock later: a host clock minutes off would otherwise
    move the retry by as much)."""
    if not value:
        return None
    now = now or estimated_db_now()
    value = value.strip()
    if value.isdigit():
        return now + timedelta(seconds=int(value))
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse_reset_seconds(value: str | None, *, now: datetime | None = None) -> datetime | None:
    """A rate-limit reset header holding seconds from now (Reddit, Pinterest), counted like
    Retry-After from the database clock as last measured; None when absent or unreadable."""
    try:
        seconds = float(value) if value else None
    except ValueError:
        return None
    if seconds is None or not 0 <= seconds < 10**9:
        return None
    return (now or estimated_db_now()) + timedelta(seconds=seconds)


def parse_reset_epoch(value: str | None) -> datetime | None:
    """A rate-limit reset header holding epoch seconds (X, Bluesky)."""
    try:
        return datetime.fromtimestamp(int(value), tz=UTC) if value else None
    except (TypeError, ValueError, OverflowError):
        return None


def parse_reset_iso(value: str | None) -> datetime | None:
    """A rate-limit reset header holding an ISO 8601 timestamp (Mastodon)."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def classify_transport(exc: httpx.HTTPError, *, is_create: bool) -> ProviderError:
    """A transport failure: before the request left (safe to retry) or after (unknown).

    A connect failure or pool timeout means nothing was sent. Anything later (a read timeout,
    a reset connection, a broken response) on a create call leaves the outcome unknown.
    """
    before_send = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)
    if before_send or not is_create:
        return ProviderError(
            ErrorKind.NETWORK_BEFORE_SEND,
            f"Could not reach the platform ({type(exc).__name__}).",
            code=type(exc).__name__,
        )
    return ProviderError(
        ErrorKind.OUTCOME_UNKNOWN,
        "The request was sent but no answer came back in time; the post may exist.",
        code=type(exc).__name__,
    )


def classify_status(
    response: httpx.Response, *, is_create: bool, code: str | None = None, message: str = ""
) -> ProviderError:
    """Generic mapping of an HTTP status; adapters refine it with their platform's codes."""
    status = response.status_code
    message = message or f"The platform answered HTTP {status}."
    if status == 429:
        retry_at = parse_retry_after(response.headers.get("Retry-After"))
        return ProviderError(
            ErrorKind.RATE_LIMITED, message, code=code, http_status=status, retry_at=retry_at
        )
    if status == 401:
        return ProviderError(ErrorKind.AUTH_EXPIRED, message, code=code, http_status=status)
    if status == 403:
        return ProviderError(ErrorKind.PERMISSION_MISSING, message, code=code, http_status=status)
    if status in (400, 409, 413, 422):
        return ProviderError(ErrorKind.CONTENT_REJECTED, message, code=code, http_status=status)
    if status >= 500:
        # A 5xx on a create may hide a write that happened (DESIGN §6: only 5xx before the
        # write is known to have happened is retryable); platforms that say otherwise
        # override this in their adapter.
        kind = ErrorKind.OUTCOME_UNKNOWN if is_create else ErrorKind.PROVIDER_UNAVAILABLE
        return ProviderError(
            kind,
            message,
            code=code,
            http_status=status,
            retry_at=parse_retry_after(response.headers.get("Retry-After")),
        )
    return ProviderError(ErrorKind.UNKNOWN, message, code=code, http_status=status)
