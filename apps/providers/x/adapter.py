"""The X adapter (API v2): posts, chunked media with alt text, reply threads, OAuth 2 with
PKCE and rotating refresh tokens, reconciliation by reading the user's timeline.

X has no idempotency handle, so an unknown outcome is a single attempt settled by lookup.
An identical resend is refused as duplicate content without naming the existing post; the
adapter then looks for that post in the user's recent timeline and names it on the error.
Weighted character counting belongs to the capability catalog, not here.
"""

from __future__ import annotations

import html
import re
import unicodedata
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import httpx
from django.conf import settings as django_settings
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.common.errors import ValidationFailed
from apps.providers import httpcall, oauth
from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    Implements,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.text_counting import find_urls
from apps.providers.x import media as x_media
from apps.providers.x.errors import classify

API = "https://api.x.com/2"
AUTHORIZE = "https://x.com/i/oauth2/authorize"
TOKEN = "https://api.x.com/2/oauth2/token"
SCOPES = "tweet.read tweet.write users.read offline.access media.write"
# Access tokens live 2 hours.
REFRESH_MARGIN = timedelta(minutes=5)
CLOCK_SKEW = timedelta(minutes=2)
# How far back a duplicate-content refusal is matched against the user's posts, and how
# many timeline pages (100 posts each, billed reads) a lookup reads at most.
DUPLICATE_WINDOW = timedelta(hours=24)
LOOKUP_PAGES = 3


class XAdapter(Adapter):
    platform = "x"
    implements = Implements(
        media_kinds=frozenset({"image", "video", "gif"}),
        max_images=4,
        max_videos=1,
        max_gifs=1,
        threads=True,  # reply.in_reply_to_tweet_id
        alt_text=True,  # media metadata
    )
    retry_safe_after_unknown = False

    # Credentials

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        expiry = oauth.parse_expires_at(credentials.get("expires_at")) or account.token_expires_at
        if not oauth.is_near_expiry(expiry, REFRESH_MARGIN):
            return None
        return self.refresh(credentials)

    def refresh(self, credentials: dict) -> dict:
        """A new token pair. X refresh tokens are single-use: the returned one replaces the
        stored one, and reusing the old one fails (AUTH_EXPIRED, reconnect)."""
        if not credentials.get("refresh_token"):
            raise ProviderError(
                ErrorKind.AUTH_EXPIRED,
                "The X token expired and there is no refresh token; reconnect the account.",
                code="no_refresh_token",
            )
        client_id, auth = _client_auth()
        token = oauth.token_request(
            TOKEN,
            {
                "grant_type": "refresh_token",
                "refresh_token": credentials["refresh_token"],
                "client_id": client_id,
            },
            auth=auth,
        )
        return _credentials(token, previous=credentials)

    # Publishing

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        api = _Api(ctx, self)
        checkpoint = ctx.checkpoint.setdefault(f"x_media_s{segment.position}", {})
        media_ids = [
            x_media.upload(api.send, m, checkpoint, save=ctx.persist_checkpoint)
            for m in segment.media
        ]
        payload: dict = {"text": segment.text}
        if media_ids:
            payload["media"] = {"media_ids": media_ids}
        if reply_to is not None:
            payload["reply"] = {"in_reply_to_tweet_id": reply_to.parent.provider_post_id}
        response = api.send("POST", f"{API}/tweets", is_create=True, json=payload)
        if response.status_code != 201:
            error = classify(response, is_create=True)
            if error.kind == ErrorKind.DUPLICATE_CONTENT:
                # X refuses an identical resend without naming the post it matched; look
                # for it, so a resend after an unanswered attempt can settle on it.
                found = self._find_duplicate(api, ctx, segment)
                error.existing_post_id = found.provider_post_id if found else None
            raise error
        post_id = str(response.json()["data"]["id"])
        return PublishedSegment(
            provider_post_id=post_id,
            provider_url=_post_url(ctx.account, post_id),
            published_at=timezone.now(),
        )

    # Reconciliation

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """Best effort: the user's posts since the attempt began, matched on normalized text
        (X rewrites links to t.co and escapes &, < and >; a long post's full text is in
        `note_tweet`). Reads are billed."""
        return self._find(_Api(ctx, self), ctx, segment, not_before=not_before)

    def _find_duplicate(
        self, api: _Api, ctx: PublishContext, segment: SegmentPayload
    ) -> PublishedSegment | None:
        """The post a duplicate-content refusal matched, when a recent one has our text.
        Best effort: a failing lookup leaves the refusal as it is."""
        try:
            return self._find(api, ctx, segment, not_before=timezone.now() - DUPLICATE_WINDOW)
        except ProviderError:
            return None

    def _find(
        self, api: _Api, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        start = (not_before - CLOCK_SKEW).astimezone(UTC)
        params = {
            "start_time": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "max_results": 100,
            # A post over 280 weighted characters comes back with `text` cut short; its
            # full text is only in `note_tweet`, and only when asked for.
            "tweet.fields": "created_at,note_tweet",
        }
        wanted = _normalize(segment.text)
        # Newest first; a busy account may have posted more than a page since.
        for _ in range(LOOKUP_PAGES):
            response = api.send("GET", f"{API}/users/{ctx.account.remote_id}/tweets", params=params)
            if response.status_code != 200:
                raise classify(response, is_create=False)
            body = response.json()
            for post in body.get("data", []):
                if _normalize(_full_text(post)) == wanted:
                    return _found(ctx.account, post)
            next_token = (body.get("meta") or {}).get("next_token")
            if not next_token:
                return None
            params = {**params, "pagination_token": next_token}
        return None

    # Deletion (the live validation's clean-up)

    def delete_post(self, ctx: PublishContext, post: PublishedSegment) -> None:
        """Delete one of the user's posts (DELETE /2/tweets/:id); one already gone (404)
        counts as deleted."""
        response = _Api(ctx, self).send("DELETE", f"{API}/tweets/{post.provider_post_id}")
        if response.status_code not in (200, 404):
            raise classify(response, is_create=False)

    # Connect

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        client_id, _ = _client_auth()
        query = urlencode(
            {
                "response_type": "code",
                "client_id": client_id,
                "redirect_uri": redirect_uri,
                "scope": SCOPES,
                "state": state,
                "code_challenge": code_challenge,
                "code_challenge_method": "S256",
            }
        )
        return f"{AUTHORIZE}?{query}"

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        client_id, auth = _client_auth()
        token = oauth.token_request(
            TOKEN,
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect_uri,
                "code_verifier": code_verifier,
                "client_id": client_id,
            },
            auth=auth,
        )
        credentials = _credentials(token)
        with httpcall.client(headers=_bearer(credentials)) as http:
            response = httpcall.send(http, "GET", f"{API}/users/me", is_create=False)
        if response.status_code != 200:
            raise classify(response, is_create=False)
        me = response.json()["data"]
        return ConnectedIdentity(
            remote_id=str(me["id"]),
            handle=me["username"],
            display_name=me.get("name", ""),
            credentials=credentials,
            token_expires_at=oauth.parse_expires_at(credentials.get("expires_at")),
            settings={"username": me["username"]},
        )


class _Api:
    """Calls with the account's bearer token. A 401 is answered once by refreshing the
    token (stored at once: the old refresh token is spent) and repeating the call, which X
    refused before doing anything."""

    def __init__(self, ctx: PublishContext, adapter: XAdapter) -> None:
        self.ctx = ctx
        self.adapter = adapter
        self.refreshed = False

    def send(self, method: str, url: str, *, is_create: bool = False, **kwargs) -> httpx.Response:
        while True:
            with httpcall.client(headers=_bearer(self.ctx.credentials)) as http:
                response = httpcall.send(http, method, url, is_create=is_create, **kwargs)
            if response.status_code != 401 or self.refreshed:
                return response
            self.refreshed = True
            fresh = self.adapter.refresh(self.ctx.credentials)
            self.ctx.persist_credentials(fresh)


def _credentials(token: dict, previous: dict | None = None) -> dict:
    credentials = dict(previous or {})
    credentials["access_token"] = token["access_token"]
    expiry = oauth.expires_at(token.get("expires_in"))
    credentials["expires_at"] = expiry.isoformat() if expiry else None
    if token.get("refresh_token"):
        credentials["refresh_token"] = token["refresh_token"]
    return credentials


def _bearer(credentials: dict) -> dict:
    return {"Authorization": f"Bearer {credentials['access_token']}"}


def _client_auth() -> tuple[str, tuple[str, str] | None]:
    """(client id, HTTP Basic auth): confidential clients authenticate with their secret;
    a public client sends only its id."""
    client_id = django_settings.X_CLIENT_ID
    if not client_id:
        raise ValidationFailed(
            "X is not configured on this site (X_CLIENT_ID).", code="NOT_CONFIGURED"
        )
    secret = django_settings.X_CLIENT_SECRET
    return client_id, (client_id, secret) if secret else None


def _found(account: SocialAccount, post: dict) -> PublishedSegment:
    created = post.get("created_at")
    return PublishedSegment(
        provider_post_id=str(post["id"]),
        provider_url=_post_url(account, str(post["id"])),
        published_at=datetime.fromisoformat(created.replace("Z", "+00:00")) if created else None,
    )


def _full_text(post: dict) -> str:
    """A post's whole text: a long post's `text` is only its start."""
    note = post.get("note_tweet") or {}
    return str(note.get("text") or post.get("text") or "")


def _post_url(account: SocialAccount, post_id: str) -> str:
    return f"https://x.com/{account.handle}/status/{post_id}"


_LEADING_MENTIONS = re.compile(r"^(?:@\w+\s+)+")
_SPACE = re.compile(r"\s+")


def _without_links(text: str) -> str:
    """Every link X would shorten to t.co (bare domains too) blanked out, so our text and
    X's rendering of it compare equal."""
    out, last = [], 0
    for start, end in find_urls(text, bare_domains=True):
        out += [text[last:start], " "]
        last = end
    return "".join(out) + text[last:]


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFC", html.unescape(text))
    text = _LEADING_MENTIONS.sub("", _without_links(text))
    return _SPACE.sub(" ", text).strip().casefold()


register_adapter(XAdapter())
