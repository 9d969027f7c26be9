"""Meta's token endpoints, and the login Instagram and Threads share: authorization code →
short-lived token → long-lived token (60 days), refreshed a week before it expires.

Facebook Pages use the token calls here but connect through the person's Pages
(apps.providers.facebook.connect)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.meta.graph import graph_call, graph_client
from apps.providers.oauth import parse_expires_at

# Long-lived tokens last 60 days and may be refreshed once a day old; refresh a week ahead.
REFRESH_MARGIN = timedelta(days=7)


def token_expiry(body: dict) -> datetime | None:
    seconds = body.get("expires_in")
    return timezone.now() + timedelta(seconds=int(seconds)) if seconds else None


def token_call(
    method: str, url: str, *, params: dict | None = None, data: dict | None = None
) -> dict:
    """A token endpoint call (code exchange, long-lived exchange, refresh).

    A refusal here means the code or grant is no longer good (Meta answers an invalid code
    with code 100), so anything but a rate limit or an outage asks for a reconnect.
    """
    with graph_client() as client:
        try:
            return graph_call(client, method, url, params=params, data=data, is_create=False)
        except ProviderError as exc:
            if exc.kind in (ErrorKind.CONTENT_REJECTED, ErrorKind.PERMISSION_MISSING):
                exc.kind, exc.action, exc.retryable = (
                    ErrorKind.AUTH_EXPIRED,
                    Action.RECONNECT,
                    False,
                )
            raise


def exchange_token(url: str, params: dict) -> dict:
    """A long-lived token exchange or refresh: `{access_token, expires_at}`.

    These endpoints are documented as GET with the token (and secret) in the query string.
    """
    body = token_call("GET", url, params=params)
    expires_at = token_expiry(body)
    return {
        "access_token": body["access_token"],
        "expires_at": expires_at.isoformat() if expires_at else None,
    }


@dataclass(frozen=True)
class LongLivedLogin:
    """One platform's endpoints and grant names for the shared login."""

    name: str  # in messages: "The Threads token expired"
    authorize_url: str
    token_url: str  # code → short-lived token
    exchange_url: str  # short-lived → long-lived
    refresh_url: str
    exchange_grant: str
    refresh_grant: str
    scopes: tuple[str, ...]
    app_id_setting: str  # the platform's own app, else the Meta app
    app_secret_setting: str

    def client_id(self) -> str:
        return getattr(settings, self.app_id_setting) or settings.META_APP_ID

    def client_secret(self) -> str:
        return getattr(settings, self.app_secret_setting) or settings.META_APP_SECRET

    def authorization_url(self, *, state: str, redirect_uri: str) -> str:
        # Neither platform takes a PKCE challenge; the state still binds the callback.
        query = {
            "client_id": self.client_id(),
            "redirect_uri": redirect_uri,
            "response_type": "code",
            "scope": ",".join(self.scopes),
            "state": state,
        }
        return f"{self.authorize_url}?{urlencode(query)}"

    def exchange_code(self, *, code: str, redirect_uri: str) -> tuple[dict, dict]:
        """(the short-lived token's answer, the long-lived `{access_token, expires_at}`)."""
        short = token_call(
            "POST",
            self.token_url,
            data={
                "client_id": self.client_id(),
                "client_secret": self.client_secret(),
                "grant_type": "authorization_code",
                "redirect_uri": redirect_uri,
                "code": code,
            },
        )
        short = (short.get("data") or [short])[0]  # newer answers wrap the token in "data"
        long_lived = exchange_token(
            self.exchange_url,
            {
                "grant_type": self.exchange_grant,
                "client_secret": self.client_secret(),
                "access_token": short["access_token"],
            },
        )
        return short, long_lived

    def refresh(self, account: SocialAccount, credentials: dict) -> dict | None:
        """A new 60-day token when the current one is within a week of expiry. An expired
        token cannot be refreshed: reconnect."""
        expiry = account.token_expires_at or parse_expires_at(credentials.get("expires_at"))
        if expiry is None or expiry - timezone.now() > REFRESH_MARGIN:
            return None
        if expiry <= timezone.now():
            raise ProviderError(
                ErrorKind.AUTH_EXPIRED,
                f"The {self.name} token expired; reconnect the account.",
                code="token_expired",
            )
        fresh = exchange_token(
            self.refresh_url,
            {"grant_type": self.refresh_grant, "access_token": credentials["access_token"]},
        )
        return {**credentials, **fresh}
