"""The Mastodon adapter: statuses, media, reply-chain threads, first comments (self-replies),
reconciliation and connect."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from urllib.parse import urlencode

import httpx
from django.conf import settings

from apps.accounts.models import SocialAccount
from apps.common.db_clock import estimated_db_now
from apps.common.errors import ValidationFailed
from apps.providers import httpcall, oauth
from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    Implements,
    MediaPayload,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import REQUEST_IN_PROGRESS, ErrorKind, ProviderError
from apps.providers.mastodon.errors import classify
from apps.providers.mastodon.models import MastodonApp
from apps.providers.mastodon.services import (
    SCOPES,
    mastodon_app_get_or_register,
    normalize_instance,
)

VISIBILITIES = ("public", "unlisted", "private", "direct")
# Media processing: poll 1 s doubling to 10 s. Past the in-call budget the attempt ends as
# media_processing (retryable) and the next attempt resumes polling the same upload.
MEDIA_POLL_FIRST_S = 1.0
MEDIA_POLL_MAX_S = 10.0
MEDIA_WAIT_BUDGET_S = 60.0
# Reconciliation pages through the account's newest statuses, at most this many pages.
LOOKUP_PAGE_SIZE = 40
LOOKUP_MAX_PAGES = 3
# Tolerated clock difference between this host and the instance when matching created_at.
CLOCK_SKEW = timedelta(minutes=2)


class MastodonAdapter(Adapter):
    platform = "mastodon"
    implements = Implements(
        media_kinds=frozenset({"image", "video", "gif"}),
        max_images=4,
        max_videos=1,  # a GIF goes up as a gifv, in the video bucket
        settings=frozenset({"spoiler_text", "visibility", "language", "sensitive"}),
        threads=True,  # in_reply_to_id
        alt_text=True,  # the upload's description
    )
    # Every create carries Idempotency-Key; Mastodon returns the original status for a
    # repeated key during the hour after it was stored.
    retry_safe_after_unknown = True
    idempotency_window = timedelta(hours=1)
    # A comment is found by listing the account's statuses, which may lag behind a reply.
    comment_lookup_is_strong = False
    connect_asks_instance = True

    def is_retry_safe(self, account: SocialAccount) -> bool:
        # Other Fediverse servers speak the same API but may ignore the header (found at connect).
        return bool(account.settings.get("honours_idempotency_key", True))

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        return None  # Mastodon tokens do not expire and there is no refresh grant.

    # Publishing

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        """Create the status under the segment's Idempotency-Key. After an unanswered
        create of the same segment, the status it may have made is looked for first: see
        `_find_unanswered`."""
        instance = _instance(ctx.account)
        payload = self._status_payload(ctx, segment)
        parent = reply_to.parent.provider_post_id if reply_to is not None else None
        with _client(ctx.credentials) as http:
            sent_at = _unanswered_since(ctx, segment.position)
            if sent_at is not None:
                found = self._find_unanswered(http, ctx, segment, parent, sent_at)
                if found is not None:
                    _unmark_sent(ctx, segment.position)
                    return found
            media_ids = [
                self._media_id(http, instance, ctx, segment.position, media, sent_at=sent_at)
                for media in segment.media
            ]
            if media_ids:
                payload["media_ids"] = media_ids
            if parent is not None:
                payload["in_reply_to_id"] = parent
            if sent_at is None:
                _mark_sent(ctx, segment.position)
            try:
                response = httpcall.send(
                    http,
                    "POST",
                    f"{instance}/api/v1/statuses",
                    is_create=True,
                    json=payload,
                    headers={"Idempotency-Key": ctx.idempotency_key(segment.position)},
                )
                if response.status_code != 200:
                    raise classify(response, is_create=True, keyed=self.is_retry_safe(ctx.account))
            except ProviderError as err:
                if err.code == REQUEST_IN_PROGRESS:
                    # A request under this key still runs and may yet save the status (so
                    # the segment stays marked sent): look again once what it saves can be
                    # listed, never sooner.
                    err.retry_at = _mark_locked(ctx, segment.position)
                elif sent_at is None and err.kind != ErrorKind.OUTCOME_UNKNOWN:
                    _unmark_sent(ctx, segment.position)  # refused: this one made nothing
                raise
        _unmark_sent(ctx, segment.position)  # the segment has its post
        return _published(response.json())

    def _find_unanswered(
        self,
        http: httpx.Client,
        ctx: PublishContext,
        segment: SegmentPayload,
        parent: str | None,
        sent_at: datetime,
    ) -> PublishedSegment | None:
        """The status an unanswered create of this segment made, if it made one.

        The key alone does not settle it: Mastodon records a key only after the status is
        saved, so a failure in between leaves a status that a resend under the same key
        duplicates. The account's own statuses since that create are read first (text, reply
        target and our uploaded media must match). Found: that is the post. Not found: the
        listing may lag behind a status just saved (a read replica), so the resend waits
        until RECONCILE_SETTLE_S after that create; until then this raises a retryable
        `not_listed_yet` and nothing is sent.
        """
        status = _find_status(http, ctx, segment, since=sent_at, parent=parent, check_parent=True)
        if status is not None:
            return _published(status)
        # Counted from the create, or from the last time a request under the key was seen
        # still running (its status is saved only when it ends).
        locked_at = _locked_since(ctx, segment.position)
        settled_at = max(sent_at, locked_at or sent_at) + timedelta(
            seconds=settings.RECONCILE_SETTLE_S
        )
        if estimated_db_now() < settled_at:
            raise ProviderError(
                ErrorKind.PROVIDER_UNAVAILABLE,
                "An earlier request for this post went unanswered and its status is not "
                "listed yet; looking again before anything is sent.",
                code="not_listed_yet",
                retry_at=settled_at,
            )
        return None

    def _status_payload(self, ctx: PublishContext, segment: SegmentPayload) -> dict:
        settings = ctx.settings
        payload: dict = {"status": segment.text}
        visibility = _visibility(settings)
        if visibility:
            payload["visibility"] = visibility
        if settings.get("spoiler_text"):
            # A content warning hides the text behind it; Mastodon marks such posts sensitive.
            payload["spoiler_text"] = settings["spoiler_text"]
            payload["sensitive"] = True
        elif settings.get("sensitive"):
            payload["sensitive"] = True
        if settings.get("language"):
            payload["language"] = settings["language"]
        return payload

    def _media_id(
        self,
        http: httpx.Client,
        instance: str,
        ctx: PublishContext,
        position: int,
        media: MediaPayload,
        *,
        sent_at: datetime | None = None,
    ) -> str:
        """Upload one file with its alt text and wait until Mastodon has processed it.

        The remote id is kept in the checkpoint before waiting, so an attempt that ran out
        of patience resumes on the same upload instead of sending the file again. An
        upload the instance no longer shows (404) is sent again, unless a create of this
        segment went unanswered within the key's hour: then the status that create made
        holds it (unattached uploads live a day), and a resend would be a second status.
        """
        uploads = ctx.checkpoint.setdefault(f"mastodon_media_s{position}", {})
        remote_id = uploads.get(str(media.media_id))
        if remote_id is not None:
            response = httpcall.send(
                http, "GET", f"{instance}/api/v1/media/{remote_id}", is_create=False
            )
            if response.status_code == 404 and _within_window(sent_at, self.idempotency_window):
                raise ProviderError(
                    ErrorKind.PROVIDER_UNAVAILABLE,
                    "The media of this post is attached to a status already: the earlier "
                    "request that went unanswered made it, and it is not listed yet. "
                    "Looking again before anything is sent.",
                    code="media_attached",
                    retry_at=estimated_db_now() + timedelta(seconds=settings.RECONCILE_SETTLE_S),
                )
            if response.status_code == 404:  # unattached uploads expire; send it again
                remote_id = None
            elif response.status_code == 200:
                return remote_id
            elif response.status_code != 206:
                raise classify(response, is_create=False)
        if remote_id is None:
            with media.open() as fh:
                response = httpcall.send(
                    http,
                    "POST",
                    f"{instance}/api/v2/media",
                    is_create=False,  # an orphan upload never becomes a post
                    files={"file": (f"media-{media.media_id}", fh, media.mime_type)},
                    data={"description": media.alt_text},
                )
            if response.status_code not in (200, 202):
                raise classify(response, is_create=False)
            remote_id = str(response.json()["id"])
            uploads[str(media.media_id)] = remote_id
            ctx.persist_checkpoint()  # a killed worker resumes this upload, not a new one
            if response.status_code == 200:
                return remote_id
        self._wait_processed(http, instance, remote_id)
        return remote_id

    def _wait_processed(self, http: httpx.Client, instance: str, remote_id: str) -> None:
        """202 on upload means processing: GET answers 206 until ready (200) or 422."""
        delay, waited = MEDIA_POLL_FIRST_S, 0.0
        while waited + delay <= MEDIA_WAIT_BUDGET_S:
            httpcall.sleep(delay)
            waited += delay
            response = httpcall.send(
                http, "GET", f"{instance}/api/v1/media/{remote_id}", is_create=False
            )
            if response.status_code == 200:
                return
            if response.status_code == 422:
                raise ProviderError(
                    ErrorKind.CONTENT_REJECTED,
                    "Mastodon could not process this media file.",
                    code="media_processing_failed",
                    http_status=422,
                )
            if response.status_code != 206:
                raise classify(response, is_create=False)
            delay = min(delay * 2, MEDIA_POLL_MAX_S)
        raise ProviderError(
            ErrorKind.MEDIA_PROCESSING,
            "Mastodon is still processing the media; the next attempt continues waiting.",
            code="media_processing",
        )

    # Reconciliation

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """Best effort past the key's hour: the account's newest statuses, matched on
        normalized text, our uploaded media and created_at >= not_before."""
        with _client(ctx.credentials) as http:
            status = _find_status(http, ctx, segment, since=not_before)
        return _published(status) if status is not None else None

    # First comment

    def publish_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment:
        """A self-reply under the post, as visible as the post (else the account's default);
        the key makes a resend within the hour return the first reply."""
        payload: dict = {"status": text, "in_reply_to_id": post.provider_post_id}
        visibility = _visibility(ctx.settings)
        if visibility:
            payload["visibility"] = visibility
        with _client(ctx.credentials) as http:
            response = httpcall.send(
                http,
                "POST",
                f"{_instance(ctx.account)}/api/v1/statuses",
                is_create=True,
                json=payload,
                headers={"Idempotency-Key": key},
            )
        if response.status_code != 200:
            raise classify(response, is_create=True, keyed=self.is_retry_safe(ctx.account))
        return _published(response.json())

    def comment_key_is_honoured(self, account: SocialAccount) -> bool:
        """A resend of a comment under its key within the key's hour returns the first
        reply, or is refused (503) while that reply's create still runs."""
        return self.is_retry_safe(account)

    def find_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment | None:
        """The account's own statuses newer than the post (a reply always is), newest first:
        the one replying to the post with the comment's normalized text."""
        wanted = _normalize(text, mentions=True)
        with _client(ctx.credentials) as http:
            for statuses in _own_statuses(http, ctx.account, {"since_id": post.provider_post_id}):
                for status in statuses:
                    if str(status.get("in_reply_to_id")) == post.provider_post_id and (
                        _normalize(_html_text(status.get("content", ""))) == wanted
                    ):
                        return _published(status)
        return None

    # Deletion (the live validation's clean-up)

    def delete_post(self, ctx: PublishContext, post: PublishedSegment) -> None:
        """Delete one of the account's statuses (a self-reply comment too); one already
        gone (404) counts as deleted."""
        with _client(ctx.credentials) as http:
            response = httpcall.send(
                http,
                "DELETE",
                f"{_instance(ctx.account)}/api/v1/statuses/{post.provider_post_id}",
                is_create=False,
            )
        if response.status_code not in (200, 404):
            raise classify(response, is_create=False)

    # Connect

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        instance_url = normalize_instance(instance or "")
        app = mastodon_app_get_or_register(instance_url=instance_url, redirect_uri=redirect_uri)
        # PKCE is honoured from Mastodon 4.3; older servers ignore the extra parameters.
        query = urlencode(
            {
                "response_type": "code",
                "client_id": app.client_id,
                "redirect_uri": redirect_uri,
                "scope": SCOPES,
                "state": state,
                "code_challenge": code_challenge,
                "code_challenge_method": "S256",
            }
        )
        return f"{instance_url}/oauth/authorize?{query}"

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        instance_url = normalize_instance(instance or "")
        app = MastodonApp.objects.filter(instance_url=instance_url).first()
        if app is None:
            raise ValidationFailed("Start connecting from this site again.", code="NO_APP")
        token = oauth.token_request(
            f"{instance_url}/oauth/token",
            {
                "grant_type": "authorization_code",
                "code": code,
                "client_id": app.client_id,
                "client_secret": app.client_secret,
                "redirect_uri": redirect_uri,
                "code_verifier": code_verifier,
                "scope": SCOPES,
            },
        )
        credentials = {"access_token": token["access_token"]}
        with _client(credentials) as http:
            response = httpcall.send(
                http, "GET", f"{instance_url}/api/v1/accounts/verify_credentials", is_create=False
            )
            if response.status_code != 200:
                raise classify(response, is_create=False)
            me = response.json()
            server = _server_info(http, instance_url)
        host = instance_url.removeprefix("https://")
        return ConnectedIdentity(
            remote_id=f"{me['id']}@{host}",
            handle=f"{me['username']}@{host}",
            display_name=me.get("display_name") or me["username"],
            credentials=credentials,
            token_expires_at=None,
            settings={"instance": instance_url, "account_id": str(me["id"]), **server},
        )


def _server_info(http: httpx.Client, instance_url: str) -> dict:
    """What the instance says about itself; optional, so failures are ignored."""
    try:
        response = httpcall.send(http, "GET", f"{instance_url}/api/v2/instance", is_create=False)
    except ProviderError:
        return {}
    if response.status_code != 200:
        return {}
    body = httpcall.json_body(response)
    version = str(body.get("version", ""))
    info: dict = {
        "server_version": version,
        # Pleroma-family servers report "x.y.z (compatible; ...)" and may ignore the key.
        "honours_idempotency_key": bool(version) and "compatible" not in version,
    }
    limit = body.get("configuration", {}).get("statuses", {}).get("max_characters")
    if isinstance(limit, int):
        info["max_characters"] = limit
    return info


def _visibility(settings: dict) -> str | None:
    visibility = settings.get("visibility")
    if visibility and visibility not in VISIBILITIES:
        raise ProviderError(
            ErrorKind.CONTENT_REJECTED,
            f"Mastodon visibility must be one of {', '.join(VISIBILITIES)}.",
            code="invalid_visibility",
        )
    return visibility or None


def _own_statuses(http: httpx.Client, account: SocialAccount, params: dict) -> Iterator[list[dict]]:
    """The account's statuses (reblogs excluded), newest first, one non-empty page at a
    time, for at most LOOKUP_MAX_PAGES pages."""
    account_id = account.settings.get("account_id") or account.remote_id.split("@")[0]
    params = {"limit": LOOKUP_PAGE_SIZE, "exclude_reblogs": "true", **params}
    for _ in range(LOOKUP_MAX_PAGES):
        response = httpcall.send(
            http,
            "GET",
            f"{_instance(account)}/api/v1/accounts/{account_id}/statuses",
            is_create=False,
            params=params,
        )
        if response.status_code != 200:
            raise classify(response, is_create=False)
        statuses = response.json()
        if not statuses:
            return
        yield statuses
        params["max_id"] = statuses[-1]["id"]


def _find_status(
    http: httpx.Client,
    ctx: PublishContext,
    segment: SegmentPayload,
    *,
    since: datetime,
    parent: str | None = None,
    check_parent: bool = False,
) -> dict | None:
    """The account's newest status created since `since` (less the clock skew) with the
    segment's normalized text, replying to `parent` when `check_parent`, and carrying the
    media this segment uploaded (their ids, where the checkpoint has them; else as many)."""
    wanted = _normalize(segment.text, mentions=True)
    uploads = ctx.checkpoint.get(f"mastodon_media_s{segment.position}") or {}
    media = [uploads.get(str(m.media_id)) for m in segment.media]
    cutoff = since - CLOCK_SKEW
    for statuses in _own_statuses(http, ctx.account, {}):
        for status in statuses:
            if _parse_time(status["created_at"]) < cutoff:
                continue
            if _normalize(_html_text(status.get("content", ""))) != wanted:
                continue
            if check_parent and str(status.get("in_reply_to_id") or "") != (parent or ""):
                continue
            attached = [str(m.get("id")) for m in status.get("media_attachments") or []]
            if None in media:
                if len(attached) != len(media):
                    continue
            elif sorted(attached) != sorted(str(m) for m in media):
                continue
            return status
        if _parse_time(statuses[-1]["created_at"]) < cutoff:
            return None
    return None


# Checkpoint entry: segment position -> when its first create whose answer is not known
# left (ISO instant, on the database clock: another worker may read it). Kept until the
# segment has its post; dropped when that create was refused (it made nothing).
SENT = "mastodon_sent"


# Checkpoint entry: segment position -> when a request under its key was last refused
# because another one held the key's lock (a create still running); kept with SENT.
LOCKED = "mastodon_locked"


def _unanswered_since(ctx: PublishContext, position: int) -> datetime | None:
    sent = (ctx.checkpoint.get(SENT) or {}).get(str(position))
    return datetime.fromisoformat(sent) if sent else None


def _locked_since(ctx: PublishContext, position: int) -> datetime | None:
    locked = (ctx.checkpoint.get(LOCKED) or {}).get(str(position))
    return datetime.fromisoformat(locked) if locked else None


def _mark_locked(ctx: PublishContext, position: int) -> datetime:
    """Record that a request under the segment's key is still running; returns when its
    status can be looked for (RECONCILE_SETTLE_S later)."""
    now = estimated_db_now()
    ctx.checkpoint[LOCKED] = {**(ctx.checkpoint.get(LOCKED) or {}), str(position): now.isoformat()}
    ctx.persist_checkpoint()
    return now + timedelta(seconds=settings.RECONCILE_SETTLE_S)


def _within_window(sent_at: datetime | None, window: timedelta | None) -> bool:
    return sent_at is not None and estimated_db_now() - sent_at < (window or timedelta(0))


def _mark_sent(ctx: PublishContext, position: int) -> None:
    """Persisted before the create leaves: a worker killed mid-call leaves it too."""
    ctx.checkpoint[SENT] = {
        **(ctx.checkpoint.get(SENT) or {}),
        str(position): estimated_db_now().isoformat(),
    }
    ctx.persist_checkpoint()


def _unmark_sent(ctx: PublishContext, position: int) -> None:
    for entry in (SENT, LOCKED):
        marks = dict(ctx.checkpoint.get(entry) or {})
        if marks.pop(str(position), None) is not None:
            ctx.checkpoint[entry] = marks


def _client(credentials: dict) -> httpx.Client:
    return httpcall.client(
        headers={"Authorization": f"Bearer {credentials['access_token']}"}, tenant_host=True
    )


def _instance(account: SocialAccount) -> str:
    return account.settings["instance"].rstrip("/")


def _published(status: dict) -> PublishedSegment:
    return PublishedSegment(
        provider_post_id=str(status["id"]),
        provider_url=status.get("url") or status.get("uri") or "",
        published_at=_parse_time(status["created_at"]),
    )


def _parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


_BREAK = re.compile(r"<br\s*/?>|</p>\s*<p[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
_REMOTE_MENTION = re.compile(r"(?<![\w@])(@[\w.]+)@[\w.-]+\w")
_SPACE = re.compile(r"\s+")


def _html_text(content: str) -> str:
    """A status's HTML back to plain text: Mastodon wraps paragraphs, links and mentions in
    tags but keeps every character of the original text inside them."""
    return html.unescape(_TAG.sub("", _BREAK.sub("\n", content)))


def _normalize(text: str, *, mentions: bool = False) -> str:
    if mentions:  # a remote @user@domain is rendered as @user
        text = _REMOTE_MENTION.sub(r"\1", text)
    return _SPACE.sub(" ", text).strip().casefold()


register_adapter(MastodonAdapter())
