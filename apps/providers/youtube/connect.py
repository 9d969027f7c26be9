"""Google login for YouTube: the authorization URL (PKCE, offline access), the code and
refresh-token grants."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings

from apps.accounts.models import SocialAccount
from apps.providers import oauth

AUTHORIZE = "https://accounts.google.com/o/oauth2/v2/auth"
TOKEN = "https://oauth2.googleapis.com/token"
SCOPES = [
    "https://www.googleapis.com/auth/youtube.upload",
    "https://www.googleapis.com/auth/youtube.readonly",  # reconciliation lists uploads
    "https://www.googleapis.com/auth/youtube.force-ssl",  # first comments: insert and list
]
REFRESH_MARGIN = timedelta(minutes=5)


def authorization_url(*, state: str, code_challenge: str, redirect_uri: str) -> str:
    # access_type=offline with prompt=consent is what yields a refresh token.
    query = {
        "client_id": settings.GOOGLE_CLIENT_ID,
        "redirect_uri": redirect_uri,
        "response_type": "code",
        "scope": " ".join(SCOPES),
        "access_type": "offline",
        "prompt": "consent",
        "include_granted_scopes": "true",
        "state": state,
        "code_challenge": code_challenge,
        "code_challenge_method": "S256",
    }
    return f"{AUTHORIZE}?{urlencode(query)}"


def exchange_code(*, code: str, code_verifier: str, redirect_uri: str) -> dict:
    """The token endpoint's answer to the authorization code."""
    return oauth.token_request(
        TOKEN,
        {
            "grant_type": "authorization_code",
            "code": code,
            "code_verifier": code_verifier,
            "client_id": settings.GOOGLE_CLIENT_ID,
            "client_secret": settings.GOOGLE_CLIENT_SECRET,
            "redirect_uri": redirect_uri,
        },
    )


def refresh(account: SocialAccount, credentials: dict) -> dict | None:
    """The fresh credentials when the token is near expiry, else None."""
    expiry = account.token_expires_at or oauth.parse_expires_at(credentials.get("expires_at"))
    if not oauth.is_near_expiry(expiry, REFRESH_MARGIN):
        return None
    body = oauth.token_request(
        TOKEN,
        {
            "grant_type": "refresh_token",
            "refresh_token": credentials.get("refresh_token", ""),
            "client_id": settings.GOOGLE_CLIENT_ID,
            "client_secret": settings.GOOGLE_CLIENT_SECRET,
        },
    )
    expires = oauth.expires_at(body.get("expires_in"))
    # Google usually keeps the refresh token; keep ours unless a new one is sent.
    return {
        **credentials,
        "access_token": body["access_token"],
        "refresh_token": body.get("refresh_token") or credentials.get("refresh_token", ""),
        "expires_at": expires.isoformat() if expires else None,
    }
