"""Pinterest login: the authorization URL, the code and refresh-token grants (made with the
app's id and secret). Refresh is continuous: each refresh returns a new refresh token,
which the pipeline stores with the rest of what `refresh` returns."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings

from apps.accounts.models import SocialAccount
from apps.providers import oauth

AUTHORIZE = "https://www.pinterest.com/oauth/"
TOKEN = "https://api.pinterest.com/v5/oauth/token"
SCOPES = ["boards:read", "pins:read", "pins:write", "user_accounts:read"]
REFRESH_MARGIN = timedelta(days=1)


def authorization_url(*, state: str, redirect_uri: str) -> str:
    query = {
        "client_id": settings.PINTEREST_APP_ID,
        "redirect_uri": redirect_uri,
        "response_type": "code",
        "scope": ",".join(SCOPES),
        "state": state,
    }
    return f"{AUTHORIZE}?{urlencode(query)}"


def exchange_code(*, code: str, redirect_uri: str) -> dict:
    return _token({"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri})


def refresh(account: SocialAccount, credentials: dict) -> dict | None:
    """The fresh credentials when the token is near expiry, else None."""
    expiry = account.token_expires_at or oauth.parse_expires_at(credentials.get("expires_at"))
    if not oauth.is_near_expiry(expiry, REFRESH_MARGIN):
        return None
    return {
        **credentials,
        **_token(
            {
                "grant_type": "refresh_token",
                "refresh_token": credentials.get("refresh_token", ""),
                # Apps created before 2025-09-25 get continuous tokens only when asked.
                "continuous_refresh": "true",
            }
        ),
    }


def _token(data: dict) -> dict:
    body = oauth.token_request(
        TOKEN, data, auth=(settings.PINTEREST_APP_ID, settings.PINTEREST_APP_SECRET)
    )
    expires = oauth.expires_at(body.get("expires_in"))
    refresh_expires = oauth.expires_at(body.get("refresh_token_expires_in"))
    tokens = {
        "access_token": body["access_token"],
        "expires_at": expires.isoformat() if expires else None,
    }
    if body.get("refresh_token"):
        tokens["refresh_token"] = body["refresh_token"]
        tokens["refresh_expires_at"] = refresh_expires.isoformat() if refresh_expires else None
    return tokens
