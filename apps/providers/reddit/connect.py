"""Reddit login: the authorization URL (a permanent grant, for a refresh token), the code
and refresh-token grants, made with the app's client id and secret."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings

from apps.accounts.models import SocialAccount
from apps.providers import oauth
from apps.providers.errors import ErrorKind, ProviderError

AUTHORIZE = "https://www.reddit.com/api/v1/authorize"
TOKEN = "https://www.reddit.com/api/v1/access_token"
# `edit` deletes a post (the live validation removes its test post).
SCOPES = ["identity", "submit", "read", "history", "flair", "edit"]
REFRESH_MARGIN = timedelta(minutes=5)


def authorization_url(*, state: str, redirect_uri: str) -> str:
    # duration=permanent is what yields a refresh token.
    query = {
        "client_id": settings.REDDIT_CLIENT_ID,
        "response_type": "code",
        "state": state,
        "redirect_uri": redirect_uri,
        "duration": "permanent",
        "scope": " ".join(SCOPES),
    }
    return f"{AUTHORIZE}?{urlencode(query)}"


def exchange_code(*, code: str, redirect_uri: str) -> dict:
    return _token({"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri})


def refresh(account: SocialAccount, credentials: dict) -> dict | None:
    """The fresh credentials when the token is near expiry, else None."""
    expiry = account.token_expires_at or oauth.parse_expires_at(credentials.get("expires_at"))
    if not oauth.is_near_expiry(expiry, REFRESH_MARGIN):
        return None
    tokens = _token(
        {"grant_type": "refresh_token", "refresh_token": credentials.get("refresh_token", "")}
    )
    return {**credentials, **tokens}


def _token(data: dict) -> dict:
    body = oauth.token_request(
        TOKEN,
        data,
        auth=(settings.REDDIT_CLIENT_ID, settings.REDDIT_CLIENT_SECRET),
        headers={"User-Agent": settings.REDDIT_USER_AGENT},
    )
    if "access_token" not in body:
        # Reddit answers a refused code or refresh token with 200 {"error": ...}.
        raise ProviderError(
            ErrorKind.AUTH_EXPIRED,
            "Reddit refused the authorization; reconnect the account.",
            code=str(body.get("error") or "invalid_grant"),
        )
    expires = oauth.expires_at(body.get("expires_in"))
    tokens = {
        "access_token": body["access_token"],
        "expires_at": expires.isoformat() if expires else None,
    }
    if body.get("refresh_token"):
        tokens["refresh_token"] = body["refresh_token"]
    return tokens
