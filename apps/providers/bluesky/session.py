"""App-password sessions: createSession once at connect, refreshSession afterwards.

createSession is limited to 30 per 5 minutes and 300 per day per account, so it is never
used per post. refreshSession rotates both tokens (the old refresh JWT is revoked), so the
new pair must be stored at once.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

from apps.common import outbound
from apps.providers import httpcall
from apps.providers.bluesky.errors import classify, error_name
from apps.providers.errors import Action, ErrorKind, ProviderError

DEFAULT_SERVICE = "https://bsky.social"
# PDS default access-JWT lifetime, used when a token's own `exp` cannot be read.
ACCESS_TTL = timedelta(minutes=120)


def jwt_expiry(token: str) -> datetime:
    """The `exp` claim of a JWT, read without verifying it (only to schedule a refresh)."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return datetime.fromtimestamp(int(claims["exp"]), tz=UTC)
    except (IndexError, ValueError, KeyError, TypeError):
        return datetime.now(UTC) + ACCESS_TTL


def pds_endpoint(session: dict, fallback: str) -> str:
    """The account's PDS from its DID document (service `#atproto_pds`); the entryway
    (bsky.social) otherwise. A DID document is user-controlled, so the host must be public."""
    for service in (session.get("didDoc") or {}).get("service", []):
        if str(service.get("id", "")).endswith("#atproto_pds"):
            endpoint = str(service.get("serviceEndpoint", "")).rstrip("/")
            try:
                return httpcall.require_public_https(endpoint)
            except outbound.ForbiddenTarget as exc:
                raise ProviderError(
                    ErrorKind.PERMISSION_MISSING,
                    f"The account's data server is not a public HTTPS address: {exc}",
                    code="unsafe_pds",
                    action=Action.CONTACT_SUPPORT,
                ) from exc
    return fallback


def credentials_from(session: dict, pds: str) -> dict:
    return {
        "access_jwt": session["accessJwt"],
        "refresh_jwt": session["refreshJwt"],
        "did": session["did"],
        "pds": pds,
        "expires_at": jwt_expiry(session["accessJwt"]).isoformat(),
    }


def create_session(*, service: str, identifier: str, password: str) -> tuple[dict, str]:
    """Log in with an app password; returns (session body, PDS url)."""
    with httpcall.client(tenant_host=True) as http:
        response = httpcall.send(
            http,
            "POST",
            f"{service}/xrpc/com.atproto.server.createSession",
            is_create=False,
            json={"identifier": identifier, "password": password},
        )
    if response.status_code != 200:
        name = error_name(response)
        if name == "AuthFactorTokenRequired":
            raise ProviderError(
                ErrorKind.AUTH_EXPIRED,
                "This login asks for a sign-in code; use an app password instead "
                "(Bluesky settings, Privacy and security, App passwords).",
                code=name,
                http_status=response.status_code,
            )
        if response.status_code == 401:
            raise ProviderError(
                ErrorKind.AUTH_EXPIRED,
                "Bluesky did not accept that handle and app password.",
                code=name,
                http_status=401,
            )
        raise classify(response, is_create=False)
    body = response.json()
    return body, pds_endpoint(body, service)


def refresh_session(credentials: dict) -> dict:
    """New credentials from the refresh JWT. A revoked or expired refresh token means the
    account must be connected again."""
    pds = credentials["pds"]
    headers = {"Authorization": f"Bearer {credentials['refresh_jwt']}"}
    with httpcall.client(headers=headers, tenant_host=True) as http:
        response = httpcall.send(
            http, "POST", f"{pds}/xrpc/com.atproto.server.refreshSession", is_create=False
        )
    if response.status_code in (400, 401):
        raise ProviderError(
            ErrorKind.AUTH_EXPIRED,
            "Bluesky ended this session (the refresh token expired or was revoked); "
            "reconnect the account with an app password.",
            code=error_name(response),
            http_status=response.status_code,
        )
    if response.status_code != 200:
        raise classify(response, is_create=False)
    return credentials_from(response.json(), pds)
