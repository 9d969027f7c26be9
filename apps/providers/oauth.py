"""OAuth helpers shared by the platform connect flows and token refreshes.

State and PKCE values (RFC 7636, S256), expiry arithmetic, one token-endpoint call whose
failures are classified like any provider error, and the write that keeps a rotated
refresh token: several platforms revoke the previous refresh token on use, so a refreshed
pair must be stored before anything else can fail.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from datetime import UTC, datetime, timedelta

import httpx
from django.conf import settings
from django.utils import timezone

from apps.providers import httpcall
from apps.providers.errors import (
    Action,
    ErrorKind,
    ProviderError,
    classify_status,
    classify_transport,
    parse_retry_after,
)

# Token-endpoint error codes that mean this site's client registration is wrong, not the user's.
_CLIENT_ERRORS = {"invalid_client", "unauthorized_client"}


def new_state() -> str:
    """An unguessable value binding a callback to the session that started the flow."""
    return secrets.token_urlsafe(32)


def new_code_verifier() -> str:
    """A PKCE verifier: 86 unreserved characters (RFC 7636 allows 43 to 128)."""
    return secrets.token_urlsafe(64)


def code_challenge(verifier: str) -> str:
    """The S256 challenge for a verifier: base64url(sha256(verifier)) without padding."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def expires_at(
    expires_in: int | float | str | None, *, now: datetime | None = None
) -> datetime | None:
    """The instant a token with `expires_in` seconds of life expires; None when not given."""
    if expires_in in (None, ""):
        return None
    return (now or timezone.now()) + timedelta(seconds=float(expires_in))


def parse_expires_at(value: str | None) -> datetime | None:
    """Read back the ISO `expires_at` kept in credentials."""
    if not value:
        return None
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def is_near_expiry(expiry: datetime | None, margin: timedelta) -> bool:
    """True when a token expiring at `expiry` should be refreshed now. No expiry: never."""
    return expiry is not None and expiry - timezone.now() <= margin


def token_request(
    url: str,
    data: dict,
    *,
    auth: tuple[str, str] | None = None,
    headers: dict | None = None,
) -> dict:
    """POST a form to a token endpoint and return its JSON body.

    A 400/401 refusal of a grant (expired code, revoked or reused refresh token) is
    AUTH_EXPIRED, so the account is asked to reconnect; a refusal of this site's client
    credentials is an operator problem and says so.
    """
    try:
        with httpcall.client(timeout=settings.PROVIDER_TIMEOUT_S) as client:
            response = client.post(
                url,
                data=data,
                auth=httpx.USE_CLIENT_DEFAULT if auth is None else auth,
                headers=headers,
            )
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=False) from exc
    if response.status_code == 200:
        return response.json()
    try:
        body = response.json()
    except ValueError:
        body = {}
    code = body.get("error") if isinstance(body, dict) else None
    description = (body.get("error_description") or "") if isinstance(body, dict) else ""
    if response.status_code in (400, 401) and code in _CLIENT_ERRORS:
        raise ProviderError(
            ErrorKind.PERMISSION_MISSING,
            "The platform refused this site's client credentials; an operator must check "
            f"the app's client id and secret. {description}".strip(),
            code=code,
            http_status=response.status_code,
            action=Action.CONTACT_SUPPORT,
        )
    if response.status_code in (400, 401):
        raise ProviderError(
            ErrorKind.AUTH_EXPIRED,
            f"The platform refused the authorization; reconnect the account. {description}".strip(),
            code=code,
            http_status=response.status_code,
        )
    if response.status_code == 429:
        raise ProviderError(
            ErrorKind.RATE_LIMITED,
            "The platform's token endpoint is rate limiting this site.",
            code=code,
            http_status=429,
            retry_at=parse_retry_after(response.headers.get("Retry-After")),
        )
    raise classify_status(response, is_create=False, code=code, message=description)
