"""X's error table (problem+json `{title, detail, type, status}`; legacy `{"errors": [...]}`)
mapped to our kinds."""

from __future__ import annotations

from datetime import datetime

import httpx

from apps.providers import httpcall
from apps.providers.errors import Action, ErrorKind, ProviderError, parse_reset_epoch

PROBLEMS = "https://api.x.com/2/problems/"


def _problem(body: dict) -> str:
    """'rate-limit-exceeded' for a problem type URI, '' for about:blank or none."""
    kind = str(body.get("type") or "")
    return kind.removeprefix(PROBLEMS) if kind.startswith(PROBLEMS) else ""


def _message(body: dict, status: int) -> str:
    if body.get("detail"):
        return str(body["detail"])
    legacy = body.get("errors") or []
    if legacy and isinstance(legacy[0], dict) and legacy[0].get("message"):
        return str(legacy[0]["message"])
    return str(body.get("title") or f"X answered HTTP {status}.")


def _reset(response: httpx.Response) -> datetime | None:
    """x-rate-limit-reset (epoch seconds); a spent 24-hour allowance resets later and wins."""
    resets = [parse_reset_epoch(response.headers.get("x-rate-limit-reset"))]
    for scope in ("user", "app"):
        if response.headers.get(f"x-{scope}-limit-24hour-remaining") == "0":
            resets.append(parse_reset_epoch(response.headers.get(f"x-{scope}-limit-24hour-reset")))
    known = [r for r in resets if r is not None]
    return max(known) if known else None


def classify(response: httpx.Response, *, is_create: bool) -> ProviderError:
    status = response.status_code
    body = httpcall.json_body(response)
    problem = _problem(body)
    message = _message(body, status)
    lowered = message.lower()

    def error(kind: ErrorKind, code: str | None = None, **extra) -> ProviderError:
        return ProviderError(
            kind, message, code=code or problem or f"http_{status}", http_status=status, **extra
        )

    if status == 429:  # rate-limit-exceeded, usage-capped, legacy code 88
        return error(ErrorKind.RATE_LIMITED, retry_at=_reset(response))
    if status == 401:
        return error(ErrorKind.AUTH_EXPIRED, code="unauthorized")
    if status == 403:
        if "duplicate content" in lowered:
            # X gives no id for the existing post; a person checks the timeline.
            return error(ErrorKind.DUPLICATE_CONTENT, code="duplicate_content")
        if problem == "client-forbidden":
            # The app is not enrolled for this endpoint: an operator problem.
            return error(ErrorKind.PLAN_RESTRICTED, action=Action.CONTACT_SUPPORT)
        if "not permitted to perform this action" in lowered:
            return error(ErrorKind.CONTENT_REJECTED, code="not_permitted")
        return error(ErrorKind.PERMISSION_MISSING)
    if status in (400, 413, 422):  # invalid-request
        return error(ErrorKind.CONTENT_REJECTED)
    if status >= 500:
        kind = ErrorKind.OUTCOME_UNKNOWN if is_create else ErrorKind.PROVIDER_UNAVAILABLE
        return error(kind)
    return error(ErrorKind.UNKNOWN)
