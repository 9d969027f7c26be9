"""The adapter interface every platform implements.

The core is small: refresh credentials, look up the profile, upload media, publish one
segment. Platforms with more implement the optional capability interfaces below (lookup for
reconciliation, status polling for asynchronous platforms). The publish pipeline owns the
loop over a rendition's segments and persists each segment's provider id as soon as it
exists, so an adapter only ever publishes one segment per call.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import IO, Protocol, runtime_checkable

from apps.accounts.models import SocialAccount


@dataclass(frozen=True)
class MediaPayload:
    """One media file to attach, readable through Django's storage API."""

    media_id: int
    kind: str  # image, video, gif
    mime_type: str
    size_bytes: int
    alt_text: str
    open: Callable[[], IO[bytes]]  # a binary file object, to close once read
    width: int | None = None
    height: int | None = None
    public_url: str | None = None  # signed URL for platforms that fetch media


@dataclass(frozen=True)
class SegmentPayload:
    position: int
    text: str
    media: list[MediaPayload] = field(default_factory=list)


@dataclass(frozen=True)
class PublishContext:
    """Everything an adapter needs for one rendition: the account, its decrypted
    credentials, the rendition's settings, and a stable idempotency base."""

    account: SocialAccount
    credentials: dict
    settings: dict
    rendition_id: int
    idempotency_base: str  # stable across attempts; adapters derive per-segment handles
    # Server-issued handles an adapter must find again on the next attempt (a YouTube upload
    # session, a Meta container). Adapters write into it before the step the handle guards;
    # the pipeline persists it on the rendition segment between attempts.
    checkpoint: dict = field(default_factory=dict)
    # Writes `checkpoint` to the database at once (the pipeline supplies it). An adapter
    # calls `persist_checkpoint()` the moment a platform hands it a handle worth keeping
    # (an upload session, a container id), before the next request: a worker killed after
    # that point still leaves the handle for the next attempt.
    checkpoint_saver: Callable[[dict], None] | None = None
    # Stores credentials an adapter had to refresh mid-call (a 401 answered by a refresh):
    # only the pipeline persists credentials, so adapters hand them over through this.
    credentials_saver: Callable[[dict], None] | None = None
    # Whether an earlier publish attempt at a segment position ended (the attempt under
    # way, if any, excluded): the pipeline knows the rendition's history, adapters do not.
    attempted_before: Callable[[int], bool] = lambda position: False
    # When the segment's requests that went unanswered (outcome unknown, or lost with their
    # worker) were sent, oldest first: a post the platform dates inside one of their flights
    # may be that request's (LinkedIn's post ids carry their creation time).
    unanswered_sent_at: Callable[[int], list[datetime]] = lambda position: []

    def idempotency_key(self, position: int) -> str:
        return f"{self.idempotency_base}-s{position}"

    def persist_checkpoint(self) -> None:
        if self.checkpoint_saver is not None:
            self.checkpoint_saver(dict(self.checkpoint))

    def persist_credentials(self, fresh: dict) -> None:
        """Hand refreshed credentials to the pipeline (at once: the old refresh token may
        already be spent) and use them from now on."""
        if self.credentials_saver is not None:
            self.credentials_saver(dict(fresh))
        self.credentials.clear()
        self.credentials.update(fresh)


@dataclass(frozen=True)
class PublishedSegment:
    provider_post_id: str
    provider_url: str = ""
    published_at: datetime | None = None
    # An asynchronous platform accepted the segment but is still processing it.
    pending: bool = False


@dataclass(frozen=True)
class ReplyTarget:
    """The thread root and the segment to reply to, for platforms with native threads."""

    root: PublishedSegment
    parent: PublishedSegment


@dataclass(frozen=True)
class Implements:
    """What an adapter really builds, in the capability catalog's terms (accepts_media,
    max_media, mixed, settings_schema, supports_threads, supports_alt_text). A test holds
    the catalog to it, both ways: the catalog may advertise nothing the adapter lacks."""

    media_kinds: frozenset[str] = frozenset()  # image, video, gif
    max_images: int | None = 0  # None: no cap of our own
    max_videos: int | None = 0
    max_gifs: int | None = 0  # only where GIFs have their own bucket (gif_counts_as "gif")
    mixed_media: bool = False  # images and videos in one post
    settings: frozenset[str] = frozenset()  # per-rendition settings the catalog offers
    threads: bool = False
    alt_text: bool = False

    def refusal(self, segment: SegmentPayload, *, reply_to: ReplyTarget | None) -> str | None:
        """Why this segment asks for something the adapter does not build, else None."""
        if reply_to is not None and not self.threads:
            return "threads"
        kinds = {m.kind for m in segment.media}
        if kinds - self.media_kinds:
            return "media_kind"
        if "image" in kinds and "video" in kinds and not self.mixed_media:
            return "mixed_media"
        return None


class Adapter(ABC):
    """A platform. Methods raise apps.providers.errors.ProviderError on failure."""

    platform: str
    # True when re-sending a create after an unknown outcome cannot make a second post
    # (an idempotency key the server honours, a client-chosen record key).
    retry_safe_after_unknown: bool = False
    # How long the platform remembers an idempotency handle (Mastodon: about an hour).
    # Past it a resend is no longer safe and only a lookup may settle an unknown outcome.
    idempotency_window: timedelta | None = None
    # True when lookup_segment answers exactly (a client-chosen key or record id): "not
    # found" then proves absence. Listing-and-matching lookups are best effort.
    lookup_is_strong: bool = False
    # True when the platform refuses a resend of the same content naming the post it already
    # holds (LinkedIn's DUPLICATE_POST): once an unanswered request can no longer land, a
    # resend either makes the one post or names it, so an unknown outcome settles itself.
    duplicate_refusal_names_post: bool = False
    # How long the platform keeps refusing such a duplicate; past it a resend makes a second
    # post, so reconciliation no longer resends on the strength of the refusal.
    duplicate_window: timedelta | None = None
    # True when poll_segment itself may make the post: once the platform has processed the
    # work, the poll sends the irreversible create (Pinterest's Pin after its video, a Meta
    # container's publish, Bluesky's record once its video blob exists). A poll that stopped
    # mid-call may have made it, so the next one is looked up first (unless retry-safe).
    poll_makes_post: bool = False
    # False when the publish step only makes work the platform keeps out of sight (a Meta
    # container, published later by the poll): an unanswered publish request cannot have
    # made a post, so it leaves nothing to look for, and a resend (which reuses a container
    # the checkpoint holds) is safe.
    publish_makes_post: bool = True
    # Why the platform's API cannot delete a post the account made, where it cannot
    # (Instagram media, TikTok videos); "" where the adapter deletes (SupportsDelete) or has
    # not been taught to yet. The live validation tells the operator, and the catalog's
    # `delete` entry is held to it by a test.
    delete_unsupported: str = ""
    # What a person is told when an asynchronous platform's poll budget runs out with
    # nothing made, where the platform has its own reason (Reddit reports a failed upload
    # only on a websocket); None: the generic "did not finish processing" message.
    processing_timeout_message: str | None = None

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        """Return fresh credentials when the token is near expiry, else None."""
        return None

    def is_retry_safe(self, account: SocialAccount) -> bool:
        return self.retry_safe_after_unknown

    def resend_settles(self, ctx: PublishContext) -> bool:
        """Whether a resend under this rendition's handle can still settle its unknown
        outcome. False once the handle is known dead after the work may have completed
        (a YouTube session gone after its final byte was sent): every resend would be
        unknown again, and only a lookup can tell."""
        return True

    def duplicate_refusal_covers(self, segment: SegmentPayload) -> bool:
        """Whether a resend of `segment` would be refused as a duplicate naming the post
        (`duplicate_refusal_names_post`); a platform may exempt some content."""
        return self.duplicate_refusal_names_post

    @abstractmethod
    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        """Publish one segment (a post, or one reply of a thread)."""


@runtime_checkable
class SupportsLookup(Protocol):
    """Find out whether our post exists after an unknown outcome."""

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None: ...


@runtime_checkable
class SupportsStatusPoll(Protocol):
    """Asynchronous platforms: poll a pending segment until it is published or fails."""

    def poll_segment(self, ctx: PublishContext, pending: PublishedSegment) -> PublishedSegment: ...


@runtime_checkable
class SupportsFirstComment(Protocol):
    """Platforms that take a first comment under a post (the catalog's `first_comment`).

    `key` is stable across attempts at one comment: sent where the platform honours an
    idempotency handle, and how `find_comment` recognises ours where it lists comments.
    `comment_lookup_is_strong`: "not found" proves there is no comment (an exact handle,
    never a listing that may lag), so an unanswered comment may be sent again."""

    comment_lookup_is_strong: bool

    def publish_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment: ...

    def find_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment | None: ...


@runtime_checkable
class SupportsDelete(Protocol):
    """Platforms whose API deletes a post the account made (the live validation removes its
    test posts with it; publishing never deletes). A comment made as a reply is a post.
    Deleting what is already gone succeeds."""

    def delete_post(self, ctx: PublishContext, post: PublishedSegment) -> None: ...


_ADAPTERS: dict[str, Adapter] = {}


def register_adapter(adapter: Adapter) -> Adapter:
    _ADAPTERS[adapter.platform] = adapter
    return adapter


def get_adapter(platform: str) -> Adapter:
    from apps.providers import adapters  # noqa: F401 - imports register every adapter

    try:
        return _ADAPTERS[platform]
    except KeyError:
        raise LookupError(f"No adapter for platform '{platform}'.") from None


@dataclass(frozen=True)
class PollSchedule:
    """How an asynchronous platform wants a pending segment polled: the first poll after
    `initial_delay_s`, then every `interval_s` (multiplied by `factor` after each poll, up to
    `max_interval_s`), every `slow_interval_s` once `slow_after_s` have passed, and no more
    polls once `max_wait_s` have passed since the segment was accepted (the time budget)."""

    initial_delay_s: float
    interval_s: float
    max_wait_s: float
    factor: float = 1.0
    max_interval_s: float | None = None
    slow_after_s: float | None = None
    slow_interval_s: float | None = None

    def next_delay(self, *, polls_done: int, elapsed_s: float) -> float | None:
        """Seconds to wait before the next poll, or None when the budget is spent."""
        if polls_done == 0:
            delay = self.initial_delay_s
        elif self.slow_after_s is not None and elapsed_s >= self.slow_after_s:
            delay = self.slow_interval_s or self.interval_s
        else:
            delay = self.interval_s * self.factor ** (polls_done - 1)
            if self.max_interval_s is not None:
                delay = min(delay, self.max_interval_s)
        if elapsed_s + delay > self.max_wait_s:
            remaining = self.max_wait_s - elapsed_s
            return remaining if remaining > 0 else None
        return delay


@dataclass(frozen=True)
class ConnectedIdentity:
    """Who a connect flow authorised, and what to store for them (SocialAccount fields)."""

    remote_id: str
    handle: str
    display_name: str = ""
    credentials: dict = field(default_factory=dict)
    token_expires_at: datetime | None = None
    settings: dict = field(default_factory=dict)


@runtime_checkable
class SupportsOAuthConnect(Protocol):
    """Platforms connected through an OAuth 2 authorization code flow (with PKCE where the
    platform takes it). `instance` names the server for federated platforms (Mastodon)."""

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str: ...

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity: ...


@runtime_checkable
class SupportsPasswordConnect(Protocol):
    """Platforms connected with an identifier and an app-specific password (Bluesky)."""

    def connect_with_password(
        self, *, identifier: str, password: str, service: str | None = None
    ) -> ConnectedIdentity: ...


@runtime_checkable
class SupportsAccountChoice(Protocol):
    """Platforms whose connect authorises a person who then picks the account to publish as
    (a Facebook Page). After `complete_connect`, `account_choices` lists what may be picked
    (`[{"id", "name", "can_publish"}]`; empty when the identity already is the account to
    store), and `select_account` returns the identity to store for the chosen one."""

    def account_choices(self, identity: ConnectedIdentity) -> list[dict]: ...

    def select_account(
        self, identity: ConnectedIdentity, *, choice_id: str
    ) -> ConnectedIdentity: ...
