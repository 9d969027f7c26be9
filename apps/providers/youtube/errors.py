"""Google's error envelope (`{"error": {"code", "message", "errors": [{"reason", ...}]}}`)
mapped to our kinds, by the first error's `reason`: the HTTP status alone is ambiguous
(403 is both a spent quota and a missing permission)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import httpx

from apps.providers.errors import ErrorKind, ProviderError, classify_status, parse_retry_after

# Daily quotas reset at midnight Pacific time.
QUOTA_ZONE = ZoneInfo("America/Los_Angeles")

QUOTA_REASONS = frozenset({"quotaExceeded"})
THROTTLE_REASONS = frozenset({"rateLimitExceeded", "userRateLimitExceeded"})
AUTH_REASONS = frozenset({"authError", "invalidCredentials"})
PERMISSION_REASONS = frozenset(
    {"insufficientPermissions", "forbidden", "youtubeSignupRequired", "ineligibleAccount"}
)
CONTENT_REASONS = frozenset(
    {
        "invalidTitle",
        "invalidDescription",
        "invalidTags",
        "invalidCategoryId",
        "mediaBodyRequired",
        "invalidPublishAt",
        "invalidVideoMetadata",
        "invalidFilename",
    }
)
# commentThreads.insert refusals of the comment itself, or of comments on the video (turned
# off by the channel, and always off on videos made for kids).
COMMENT_REASONS = frozenset(
    {
        "commentsDisabled",
        "commentTextRequired",
        "commentTextTooLong",
        "invalidCommentThreadMetadata",
        "channelOrVideoIdMissing",
        "processingFailure",
    }
)


def next_pacific_midnight(now: datetime | None = None) -> datetime:
    local = (now or datetime.now(UTC)).astimezone(QUOTA_ZONE)
    midnight = datetime.combine(local.date() + timedelta(days=1), datetime.min.time(), QUOTA_ZONE)
    return midnight.astimezone(UTC)


def classify(response: httpx.Response, *, is_create: bool) -> ProviderError:
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    errors = error.get("errors") or [{}]
    reason = errors[0].get("reason") if isinstance(errors[0], dict) else None
    message = error.get("message") or ""
    status = response.status_code

    def make(kind: ErrorKind, **extra) -> ProviderError:
        return ProviderError(kind, message or str(reason), code=reason, http_status=status, **extra)

    if reason in QUOTA_REASONS:
        return make(ErrorKind.RATE_LIMITED, retry_at=next_pacific_midnight())
    if reason == "uploadLimitExceeded":
        # The channel's own rolling 24 h upload cap.
        return make(ErrorKind.RATE_LIMITED, retry_at=datetime.now(UTC) + timedelta(hours=24))
    if reason in THROTTLE_REASONS:
        return make(
            ErrorKind.RATE_LIMITED, retry_at=parse_retry_after(response.headers.get("Retry-After"))
        )
    if reason in AUTH_REASONS or status == 401:
        return make(ErrorKind.AUTH_EXPIRED)
    if reason in PERMISSION_REASONS:
        return make(ErrorKind.PERMISSION_MISSING)
    if reason in CONTENT_REASONS:
        return make(ErrorKind.CONTENT_REJECTED)
    if status >= 500:
        # Every call here is safe to repeat: the upload itself resumes through the session.
        return make(ErrorKind.PROVIDER_UNAVAILABLE)
    return classify_status(response, is_create=is_create, code=reason, message=message)


def classify_comment(response: httpx.Response, *, is_create: bool) -> ProviderError:
    """A comment call's error. Unlike an upload, an insert is not repeatable: a 5xx answer
    to it may hide a comment that was made, so it is an unknown outcome (the job looks the
    comment up before anything is sent again)."""
    error = classify(response, is_create=is_create)
    status = response.status_code
    if error.code == "commentsDisabled":
        return ProviderError(
            ErrorKind.CONTENT_REJECTED,
            "Comments are turned off on this video (they always are on videos made for "
            "kids): turn them on in YouTube Studio, then post the comment again.",
            code=error.code,
            http_status=status,
        )
    if error.code in COMMENT_REASONS:
        return ProviderError(
            ErrorKind.CONTENT_REJECTED, error.message, code=error.code, http_status=status
        )
    if error.kind == ErrorKind.PERMISSION_MISSING:
        return ProviderError(
            ErrorKind.PERMISSION_MISSING,
            "YouTube refused the comment: reconnect the channel and allow it to manage "
            "comments (channels connected before comments were offered have not).",
            code=error.code,
            http_status=status,
        )
    if is_create and status >= 500:
        # `classify` falls back to the reason (or "None") when Google sent no message.
        said = error.message if error.message != str(error.code) else ""
        return ProviderError(
            ErrorKind.OUTCOME_UNKNOWN,
            said or f"YouTube answered HTTP {status}; the comment may exist.",
            code=error.code,
            http_status=status,
        )
    return error
