"""What Threads, Instagram and Facebook Pages share: the Graph error envelope, the token
exchanges, and container publishing.

Container publishing (Threads, Instagram) has two steps. Creating a container is invisible
on the platform and safe to repeat; publishing it is the one irreversible call. So
`publish_segment` only creates the container and answers pending, and `poll_segment` waits
until the container is FINISHED and then publishes it. The container id is also written to
`ctx.checkpoint` before anything else happens, so a later attempt or a reconciliation reads
the container's status instead of guessing: PUBLISHED means our post exists, FINISHED means
it does not (yet).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
from django.conf import settings
from django.utils import timezone

from apps.providers import httpcall
from apps.providers.base import (
    Adapter,
    MediaPayload,
    PollSchedule,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
)
from apps.providers.errors import (
    Action,
    ErrorKind,
    ProviderError,
    classify_status,
    classify_transport,
    parse_retry_after,
)

GRAPH_VERSION = "v23.0"
FACEBOOK_GRAPH = f"https://graph.facebook.com/{GRAPH_VERSION}"

# Codes of the Graph error envelope (developers.facebook.com, graph-api error handling).
TRANSIENT_CODES = frozenset({1, 2, -1, -2})  # Instagram reports its server faults as -1/-2
# 4 app, 17 user, 32 Page, 613 custom; 80000-80014 Business Use Case throttling (80001
# Pages, 80002 Instagram, ...), which the Instagram Platform and Page tokens are subject to.
RATE_LIMIT_CODES = frozenset({4, 17, 32, 613, *range(80000, 80015)})
PUBLISH_LIMIT_CODE = 9
FEED_LIMIT_CODE = 341
AUTH_CODE = 190
PERMISSION_CODES = frozenset({10, *range(200, 300)})
INVALID_PARAMETER_CODE = 100
POLICY_BLOCK_CODE = 368
DUPLICATE_CODE = 506
LINK_ERROR_CODE = 1609005
MEDIA_NOT_READY_CODE = 9007

# Subcodes whose meaning overrides the code (code 4 + 2207051 is a spam block, not a rate
# limit). Transient Instagram subcodes (2207001, 2207003, 2207020, 2207032, 2207053) arrive
# with code -1/-2 and are handled by the code.
SUBCODE_KINDS: dict[int, tuple[ErrorKind, str]] = {
    2207006: (ErrorKind.PROVIDER_UNAVAILABLE, "The media could not be found; try again."),
    2207008: (ErrorKind.PROVIDER_UNAVAILABLE, "The media container expired; try again."),
    2207027: (ErrorKind.MEDIA_PROCESSING, "The media is not ready for publishing yet."),
    2207042: (ErrorKind.RATE_LIMITED, "The account reached its daily publishing limit."),
    2207050: (ErrorKind.PERMISSION_MISSING, "The Instagram account is restricted."),
    2207051: (ErrorKind.CONTENT_REJECTED, "The platform restricted this activity as spam."),
    4279013: (ErrorKind.PERMISSION_MISSING, "The Threads profile is restricted."),
}
# Any other 2207xxx subcode is a media or parameter problem (format, size, type, ...).
INSTAGRAM_SUBCODE_RANGE = range(2207000, 2208000)
PUBLISH_WINDOW = timedelta(hours=24)

# Container states (Threads `status`, Instagram `status_code`).
IN_PROGRESS, FINISHED, PUBLISHED, ERROR, EXPIRED = (
    "IN_PROGRESS",
    "FINISHED",
    "PUBLISHED",
    "ERROR",
    "EXPIRED",
)
CHILDREN_PREFIX = "children:"

# Meta's token endpoints take the token and app secret in the query string, and httpx logs
# every request URL at INFO: those values are masked before any handler sees them.
_SECRET_PARAMS = re.compile(
    r"((?:access_token|client_secret|fb_exchange_token|code)=)[^&\s\"]+", re.IGNORECASE
)


class RedactSecretsFilter(logging.Filter):
    """Masks token-like query parameters in the arguments of httpx's request log line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                _SECRET_PARAMS.sub(r"\1[redacted]", str(arg))
                if isinstance(arg, httpx.URL | str)
                else arg
                for arg in record.args
            )
        return True


logging.getLogger("httpx").addFilter(RedactSecretsFilter())


def _body(response: httpx.Response) -> dict:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def regain_access_at(response: httpx.Response, *, now: datetime | None = None) -> datetime | None:
    """When Meta says a throttled caller may call again.

    `X-Business-Use-Case-Usage` maps business ids to usage entries, each with
    `estimated_time_to_regain_access` in minutes; the longest wait wins. A Retry-After
    header, should one appear, is honoured too.
    """
    now = now or datetime.now(UTC)
    minutes = 0
    raw = response.headers.get("X-Business-Use-Case-Usage")
    if raw:
        try:
            usage = json.loads(raw)
        except ValueError:
            usage = {}
        for entries in usage.values() if isinstance(usage, dict) else []:
            for entry in entries if isinstance(entries, list) else []:
                try:
                    minutes = max(minutes, int(entry.get("estimated_time_to_regain_access", 0)))
                except (TypeError, ValueError, AttributeError):
                    continue
    header_at = parse_retry_after(response.headers.get("Retry-After"), now=now)
    buc_at = now + timedelta(minutes=minutes) if minutes else None
    candidates = [at for at in (header_at, buc_at) if at is not None]
    return max(candidates) if candidates else None


def graph_error(response: httpx.Response, *, is_create: bool) -> ProviderError:
    """Classify a Graph error envelope by code and subcode (HTTP status only as a fallback).

    `is_create` is true for the irreversible call (publish, a feed post): a transient code
    there leaves the outcome unknown, since the post may have been made.
    """
    error = _body(response).get("error")
    if not isinstance(error, dict):
        return classify_status(response, is_create=is_create)
    code, subcode = error.get("code"), error.get("error_subcode")
    message = error.get("error_user_msg") or error.get("message") or ""
    code_text = f"{code}/{subcode}" if subcode else (str(code) if code is not None else None)
    status = response.status_code

    def make(kind: ErrorKind, text: str = "", **extra) -> ProviderError:
        return ProviderError(kind, text or message, code=code_text, http_status=status, **extra)

    if subcode in SUBCODE_KINDS:
        kind, text = SUBCODE_KINDS[subcode]
        detail = f"{text} ({message})" if message else text
        if kind == ErrorKind.RATE_LIMITED:
            return make(kind, detail, retry_at=datetime.now(UTC) + PUBLISH_WINDOW)
        if kind == ErrorKind.CONTENT_REJECTED:
            # A policy block: nothing to edit, a person may try again much later.
            return make(kind, detail, action=Action.RETRY)
        return make(kind, detail)
    # Rate limits often carry is_transient too: the code decides first.
    if code in RATE_LIMIT_CODES or code == FEED_LIMIT_CODE:
        return make(ErrorKind.RATE_LIMITED, retry_at=regain_access_at(response))
    if code == PUBLISH_LIMIT_CODE:
        return make(ErrorKind.RATE_LIMITED, retry_at=datetime.now(UTC) + PUBLISH_WINDOW)
    if code == MEDIA_NOT_READY_CODE:
        return make(ErrorKind.MEDIA_PROCESSING)
    if code in TRANSIENT_CODES:
        return _transient(make, message, is_create=is_create)
    if code == AUTH_CODE:
        return make(ErrorKind.AUTH_EXPIRED)
    if code in PERMISSION_CODES:
        return make(ErrorKind.PERMISSION_MISSING)
    if code == DUPLICATE_CODE:
        return make(ErrorKind.DUPLICATE_CONTENT)
    if code == POLICY_BLOCK_CODE:
        return make(ErrorKind.CONTENT_REJECTED, action=Action.RETRY)
    if code in (INVALID_PARAMETER_CODE, LINK_ERROR_CODE) or subcode in INSTAGRAM_SUBCODE_RANGE:
        return make(ErrorKind.CONTENT_REJECTED)
    if error.get("is_transient") is True:
        return _transient(make, message, is_create=is_create)
    return classify_status(response, is_create=is_create, code=code_text, message=message)


def _transient(
    make: Callable[..., ProviderError], message: str, *, is_create: bool
) -> ProviderError:
    """Meta's side failed. On the irreversible call the post may still have been made."""
    if is_create:
        return make(ErrorKind.OUTCOME_UNKNOWN, message or "The platform had a transient error.")
    return make(ErrorKind.PROVIDER_UNAVAILABLE)


def graph_call(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    is_create: bool,
    params: dict | None = None,
    data: dict | None = None,
    files: dict | None = None,
    headers: dict | None = None,
) -> dict:
    """One Graph call: the decoded body, or a classified ProviderError."""
    try:
        response = client.request(
            method, url, params=params, data=data, files=files, headers=headers
        )
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=is_create) from exc
    if response.status_code >= 400 or "error" in _body(response):
        raise graph_error(response, is_create=is_create)
    return _body(response)


def graph_client(access_token: str | None = None) -> httpx.Client:
    """Tokens travel in the Authorization header, never in a URL that could be logged."""
    headers = {"Authorization": f"Bearer {access_token}"} if access_token else {}
    return httpcall.client(headers=headers, timeout=settings.PROVIDER_TIMEOUT_S)


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


def public_media_url(media: MediaPayload) -> str:
    """Meta fetches media itself; without a signed public URL there is nothing to send."""
    if not media.public_url:
        raise ProviderError(
            ErrorKind.UNKNOWN,
            "This platform fetches media by URL, and no public URL was prepared for it.",
            code="media_url_missing",
            retryable=False,
            action=Action.CONTACT_SUPPORT,
        )
    return media.public_url


def parse_graph_time(value: str | None) -> datetime | None:
    """Graph timestamps look like 2026-03-01T10:00:00+0000."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def normalize_text(text: str | None) -> str:
    """Platforms trim and re-space text; reconciliation compares words, not whitespace."""
    return " ".join((text or "").split())


class ContainerAdapter(Adapter):
    """Threads and Instagram. Subclasses name their endpoints and build container params."""

    graph_base: str
    create_edge: str  # POST /{user}/<edge> makes a container
    publish_edge: str  # POST /{user}/<edge>?creation_id= publishes it
    status_fields: str
    status_key: str
    status_detail_key: str
    text_field: str  # name of the text in the user's media listing
    replies_edge: str = ""  # GET /{user}/<edge> lists the user's replies (Threads)
    max_carousel_items: int
    poll_schedule: PollSchedule
    retry_safe_after_unknown = False

    # Hooks -----------------------------------------------------------------------------

    def _single_params(
        self, ctx: PublishContext, segment: SegmentPayload, reply_to_id: str | None
    ) -> dict:
        """Params of a one-item container (text, one image or one video)."""
        raise NotImplementedError

    def _carousel_item_params(self, media: MediaPayload) -> dict:
        raise NotImplementedError

    def _carousel_params(
        self, ctx: PublishContext, text: str, reply_to_id: str | None, children: list[str]
    ) -> dict:
        raise NotImplementedError

    def _unfindable(self, ctx: PublishContext) -> ProviderError | None:
        """The error to raise when a published post of this kind cannot be found by listing
        the user's media (so a lost publish answer leaves no way to learn its id)."""
        return None

    # Adapter ---------------------------------------------------------------------------

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        """Create the segment's container(s) and answer pending with the container id.

        A container this rendition already made (found in the checkpoint) is reused while it
        can still be published, and a PUBLISHED one is reported as the post: a repeated
        attempt never makes a second post.
        """
        with graph_client(ctx.credentials.get("access_token")) as client:
            entry = self._entry_for_position(ctx, segment.position)
            if entry is not None:
                reused = self._reuse(client, ctx, entry)
                if reused is not None:
                    return reused
            return self._create(client, ctx, segment, reply_to)

    def poll_segment(self, ctx: PublishContext, pending: PublishedSegment) -> PublishedSegment:
        """IN_PROGRESS stays pending; FINISHED is published now (the irreversible step)."""
        container_id = pending.provider_post_id
        with graph_client(ctx.credentials.get("access_token")) as client:
            if container_id.startswith(CHILDREN_PREFIX):
                entry = self._entry_for_pending(ctx, container_id)
                if entry is None:
                    raise ProviderError(
                        ErrorKind.UNKNOWN,
                        "The carousel's saved state was lost; retry the post.",
                        code="checkpoint_missing",
                    )
                container_id = self._create_carousel_when_ready(client, ctx, entry)
                if container_id is None:
                    return pending
            status, detail = self._status(client, container_id)
            if status == FINISHED:
                return self._publish(client, ctx, container_id)
            if status == PUBLISHED:
                return self._published_post(client, ctx, self._entry_for_pending(ctx, container_id))
            if status in (ERROR, EXPIRED):
                raise self._container_failure(status, detail)
            return PublishedSegment(provider_post_id=container_id, pending=True)

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """Reconcile by the container's status; without a container, by listing the user's
        recent media and matching the text and time.

        A pending result means the container exists but is not published: nothing went out,
        and polling it (poll_segment) finishes the job without a second post.
        """
        with graph_client(ctx.credentials.get("access_token")) as client:
            entry = self._entry_for_position(ctx, segment.position)
            if entry is not None and entry.get("id"):
                status, _ = self._status(client, entry["id"])
                if status == PUBLISHED:
                    return self._published_post(client, ctx, entry)
                if status in (IN_PROGRESS, FINISHED):
                    return PublishedSegment(provider_post_id=entry["id"], pending=True)
                return None
            if entry is not None and entry.get("children"):
                return PublishedSegment(provider_post_id=self._children_id(entry), pending=True)
            if unfindable := self._unfindable(ctx):
                raise unfindable
            return self._find_published(
                client,
                ctx,
                {"text": segment.text, "created_at": not_before.isoformat()},
                is_reply=segment.position > 0,
            )

    # Steps -----------------------------------------------------------------------------

    def _url(self, ctx: PublishContext, edge: str) -> str:
        return f"{self.graph_base}/{ctx.account.remote_id}/{edge}"

    def _create(
        self,
        client: httpx.Client,
        ctx: PublishContext,
        segment: SegmentPayload,
        reply_to: ReplyTarget | None,
    ) -> PublishedSegment:
        reply_to_id = reply_to.parent.provider_post_id if reply_to else None
        entry = {
            "text": segment.text,
            "created_at": timezone.now().isoformat(),
            "reply_to_id": reply_to_id,
        }
        if len(segment.media) > 1:
            if len(segment.media) > self.max_carousel_items:
                raise ProviderError(
                    ErrorKind.CONTENT_REJECTED,
                    f"A carousel holds at most {self.max_carousel_items} items.",
                    code="too_many_media",
                )
            # Recorded only once every item exists: a half-made set is simply made again
            # (item containers are invisible and expire on their own).
            entry["children"] = [
                self._create_container(client, ctx, self._carousel_item_params(media))
                for media in segment.media
            ]
            self._store_entry(ctx, segment.position, entry)
            container_id = self._create_carousel_when_ready(client, ctx, entry)
            return PublishedSegment(
                provider_post_id=container_id or self._children_id(entry), pending=True
            )
        container_id = self._create_container(
            client, ctx, self._single_params(ctx, segment, reply_to_id)
        )
        entry["id"] = container_id
        self._store_entry(ctx, segment.position, entry)
        return PublishedSegment(provider_post_id=container_id, pending=True)

    def _create_container(self, client: httpx.Client, ctx: PublishContext, params: dict) -> str:
        # Container creation is invisible on the platform: a repeat is harmless.
        body = graph_call(
            client, "POST", self._url(ctx, self.create_edge), data=params, is_create=False
        )
        return str(body["id"])

    def _create_carousel_when_ready(
        self, client: httpx.Client, ctx: PublishContext, entry: dict
    ) -> str | None:
        """Make the carousel container once every item is FINISHED (the platform refuses
        it before); None while an item is still processing. Updates the checkpoint entry."""
        if entry.get("id"):
            return entry["id"]
        for child in entry["children"]:
            status, detail = self._status(client, child)
            if status in (ERROR, EXPIRED):
                raise self._container_failure(status, detail)
            if status != FINISHED:
                return None
        params = self._carousel_params(
            ctx, entry["text"], entry.get("reply_to_id"), entry["children"]
        )
        entry["id"] = self._create_container(client, ctx, params)
        ctx.persist_checkpoint()
        return entry["id"]

    def _reuse(
        self, client: httpx.Client, ctx: PublishContext, entry: dict
    ) -> PublishedSegment | None:
        if not entry.get("id"):
            if entry.get("children"):
                return PublishedSegment(provider_post_id=self._children_id(entry), pending=True)
            return None
        status, _ = self._status(client, entry["id"])
        if status == PUBLISHED:
            return self._published_post(client, ctx, entry)
        if status in (IN_PROGRESS, FINISHED):
            return PublishedSegment(provider_post_id=entry["id"], pending=True)
        return None  # ERROR / EXPIRED: a new container is needed

    def _status(self, client: httpx.Client, container_id: str) -> tuple[str, str]:
        body = graph_call(
            client,
            "GET",
            f"{self.graph_base}/{container_id}",
            params={"fields": self.status_fields},
            is_create=False,
        )
        return body.get(self.status_key, ""), str(body.get(self.status_detail_key) or "")

    def _publish(
        self, client: httpx.Client, ctx: PublishContext, container_id: str
    ) -> PublishedSegment:
        body = graph_call(
            client,
            "POST",
            self._url(ctx, self.publish_edge),
            data={"creation_id": container_id},
            is_create=True,
        )
        media_id = str(body["id"])
        return PublishedSegment(
            provider_post_id=media_id,
            provider_url=self._permalink(client, media_id),
            published_at=timezone.now(),
        )

    def _permalink(self, client: httpx.Client, media_id: str) -> str:
        # The post exists already: a failure here must not turn success into an error.
        try:
            body = graph_call(
                client,
                "GET",
                f"{self.graph_base}/{media_id}",
                params={"fields": "permalink"},
                is_create=False,
            )
        except ProviderError:
            return ""
        return body.get("permalink", "")

    def _published_post(
        self, client: httpx.Client, ctx: PublishContext, entry: dict | None
    ) -> PublishedSegment:
        """The container says PUBLISHED: our post exists, find its media id."""
        if unfindable := self._unfindable(ctx):
            raise unfindable
        found = self._find_published(
            client, ctx, entry, is_reply=bool(entry and entry.get("reply_to_id"))
        )
        if found is None:
            # It exists, so it must never be sent again; a person settles the id.
            raise ProviderError(
                ErrorKind.OUTCOME_UNKNOWN,
                "The post was published but could not be found in the account's posts yet.",
                code=PUBLISHED,
            )
        return found

    def _find_published(
        self, client: httpx.Client, ctx: PublishContext, entry: dict | None, *, is_reply: bool
    ) -> PublishedSegment | None:
        """Our post among the user's recent media (or replies): same text, made after the
        attempt began."""
        if entry is None:
            return None
        since = parse_graph_time(entry.get("created_at"))
        if since is not None:
            since -= timedelta(minutes=2)  # clocks differ a little between us and Meta
        body = graph_call(
            client,
            "GET",
            # The create edge lists the user's posts; replies are listed apart.
            self._url(ctx, self.replies_edge if is_reply else self.create_edge),
            params={"fields": f"id,{self.text_field},timestamp,permalink", "limit": 25},
            is_create=False,
        )
        wanted = normalize_text(entry.get("text"))
        for item in body.get("data", []):
            at = parse_graph_time(item.get("timestamp"))
            recent = since is None or (at is not None and at >= since)
            if normalize_text(item.get(self.text_field)) == wanted and recent:
                return PublishedSegment(
                    provider_post_id=str(item["id"]),
                    provider_url=item.get("permalink", ""),
                    published_at=at,
                )
        return None

    @staticmethod
    def _container_failure(status: str, detail: str) -> ProviderError:
        if status == EXPIRED:
            # Unpublished containers expire after 24 h; a new attempt makes a new one.
            return ProviderError(
                ErrorKind.MEDIA_PROCESSING,
                "The platform's container expired before it was published.",
                code=EXPIRED,
            )
        subcode = re.search(r"\b(\d{7})\b", detail)
        return ProviderError(
            ErrorKind.CONTENT_REJECTED,
            f"The platform could not process the media: {detail or 'no reason given'}.",
            code=subcode.group(1) if subcode else (detail or ERROR),
        )

    # Checkpoint ------------------------------------------------------------------------

    @staticmethod
    def _children_id(entry: dict) -> str:
        return CHILDREN_PREFIX + ",".join(entry["children"])

    @staticmethod
    def _store_entry(ctx: PublishContext, position: int, entry: dict) -> None:
        # Written to the database before the next request: a run that stops after this
        # still leaves the container for the next attempt to reuse or reconcile by.
        ctx.checkpoint.setdefault("containers", {})[str(position)] = entry
        ctx.persist_checkpoint()

    @staticmethod
    def _entry_for_position(ctx: PublishContext, position: int) -> dict | None:
        return ctx.checkpoint.get("containers", {}).get(str(position))

    def _entry_for_pending(self, ctx: PublishContext, pending_id: str) -> dict | None:
        for entry in ctx.checkpoint.get("containers", {}).values():
            if entry.get("id") == pending_id:
                return entry
            if entry.get("children") and self._children_id(entry) == pending_id:
                return entry
        return None
