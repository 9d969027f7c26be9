"""TikTok login: the authorization URL, the code and refresh-token grants. TikTok rotates
refresh tokens: once used, the old one is dead, so a refreshed pair must be stored before
anything else can fail (the pipeline does that with what `refresh` returns)."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers import oauth
from apps.providers.errors import ErrorKind, ProviderError

AUTHORIZE = "https://www.tiktok.com/v2/auth/authorize/"
TOKEN = "https://open.tiktokapis.com/v2/oauth/token/"
SCOPES = ["user.info.basic", "video.publish", "video.list"]
REFRESH_MARGIN = timedelta(minutes=10)


def authorization_url(*, state: str, redirect_uri: str) -> str:
    # PKCE is for TikTok's mobile and desktop clients; a web app uses its secret.
    query = {
        "client_key": settings.TIKTOK_CLIENT_KEY,
        "scope": ",".join(SCOPES),
        "response_type": "code",
        "redirect_uri": redirect_uri,
        "state": state,
    }
    return f"{AUTHORIZE}?{urlencode(query)}"


def exchange_code(*, code: str, redirect_uri: str) -> dict:
    return _token(
        {
            "client_key": settings.TIKTOK_CLIENT_KEY,
            "client_secret": settings.TIKTOK_CLIENT_SECRET,
            "code": code,
            "grant_type": "authorization_code",
            "redirect_uri": redirect_uri,
        }
    )


def refresh(account: SocialAccount, credentials: dict) -> dict | None:
    """The fresh credentials when the token is near expiry, else None."""
    expiry = account.token_expires_at or oauth.parse_expires_at(credentials.get("expires_at"))
    if not oauth.is_near_expiry(expiry, REFRESH_MARGIN):
        return None
    refresh_expiry = oauth.parse_expires_at(credentials.get("refresh_expires_at"))
    if refresh_expiry is not None and refresh_expiry <= timezone.now():
        raise ProviderError(
            ErrorKind.AUTH_EXPIRED,
            "The TikTok authorization expired; reconnect the account.",
            code="refresh_token_expired",
        )
    tokens = _token(
        {
            "client_key": settings.TIKTOK_CLIENT_KEY,
            "client_secret": settings.TIKTOK_CLIENT_SECRET,
            "grant_type": "refresh_token",
            "refresh_token": credentials.get("refresh_token", ""),
        }
    )
    return {**credentials, **{key: value for key, value in tokens.items() if value}}


def _token(data: dict) -> dict:
    body = oauth.token_request(TOKEN, data)
    if "access_token" not in body:
        # TikTok may answer a refused grant with 200 and an OAuth error body.
        raise ProviderError(
            ErrorKind.AUTH_EXPIRED,
            f"TikTok refused the authorization: {body.get('error_description', '')}".strip(),
            code=body.get("error"),
        )
    expires = oauth.expires_at(body.get("expires_in"))
    refresh_expires = oauth.expires_at(body.get("refresh_expires_in"))
    return {
        "open_id": body.get("open_id", ""),
        "access_token": body["access_token"],
        "refresh_token": body.get("refresh_token", ""),
        "scope": body.get("scope", ""),
        "expires_at": expires.isoformat() if expires else None,
        "refresh_expires_at": refresh_expires.isoformat() if refresh_expires else None,
    }
