"""TikTok's error envelope (`{"data", "error": {"code", "message", "log_id"}}`, "ok" on
success) mapped to our kinds, by `error.code` (the HTTP status only as a fallback)."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx

from apps.common.db_clock import estimated_db_now
from apps.providers import httpcall
from apps.providers.errors import Action, ErrorKind, ProviderError, classify_status

# error.code → (kind, action or None for the kind's default). A FAILED status names its
# reason with the same codes.
ERROR_CODES: dict[str, tuple[ErrorKind, Action | None]] = {
    "access_token_invalid": (ErrorKind.AUTH_EXPIRED, None),
    "scope_not_authorized": (ErrorKind.PERMISSION_MISSING, None),
    "scope_permission_missed": (ErrorKind.PERMISSION_MISSING, None),
    "invalid_params": (ErrorKind.CONTENT_REJECTED, None),
    "invalid_file_upload": (ErrorKind.CONTENT_REJECTED, None),
    "privacy_level_option_mismatch": (ErrorKind.CONTENT_REJECTED, None),
    "url_ownership_unverified": (ErrorKind.CONTENT_REJECTED, Action.CONTACT_SUPPORT),
    "unaudited_client_can_only_post_to_private_accounts": (ErrorKind.PLAN_RESTRICTED, None),
    "spam_risk_too_many_posts": (ErrorKind.RATE_LIMITED, None),
    "spam_risk_user_banned_from_posting": (
        ErrorKind.PERMISSION_MISSING,
        Action.CONTACT_SUPPORT,
    ),
    "spam_risk_text": (ErrorKind.CONTENT_REJECTED, None),
    "reached_active_user_cap": (ErrorKind.RATE_LIMITED, None),
    "rate_limit_exceeded": (ErrorKind.RATE_LIMITED, None),
}


def _retry_at(code: str) -> datetime | None:
    now = estimated_db_now()  # the clock retries are kept by
    if code == "rate_limit_exceeded":
        return now + timedelta(minutes=1)  # per-minute windows
    if code == "spam_risk_too_many_posts":
        return now + timedelta(hours=24)  # an unpublished daily creator cap
    if code == "reached_active_user_cap":
        return (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return None


def classify(response: httpx.Response, *, is_create: bool) -> ProviderError:
    error = httpcall.json_body(response).get("error")
    error = error if isinstance(error, dict) else {}
    code, message = error.get("code") or None, error.get("message") or ""
    if code in ERROR_CODES:
        kind, action = ERROR_CODES[code]
        return ProviderError(
            kind,
            message or code,
            code=code,
            http_status=response.status_code,
            retry_at=_retry_at(code),
            action=action,
        )
    return classify_status(response, is_create=is_create, code=code, message=message)
