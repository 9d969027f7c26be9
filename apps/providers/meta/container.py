"""Container publishing, as Threads and Instagram do it.

Publishing has two steps. Creating a container is invisible on the platform and safe to
repeat; publishing it is the one irreversible call. So `publish_segment` only creates the
container and answers pending, and `poll_segment` waits until the container is FINISHED
and then publishes it. The container id is also written to `ctx.checkpoint` before anything
else happens, so a later attempt or a reconciliation reads the container's status instead
of guessing: PUBLISHED means our post exists, FINISHED means it does not (yet).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import httpx
from django.utils import timezone

from apps.providers.base import (
    Adapter,
    MediaPayload,
    PollSchedule,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
)
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.matching import normalize_text
from apps.providers.meta.graph import graph_call, graph_client, parse_graph_time

# Container states (Threads `status`, Instagram `status_code`).
IN_PROGRESS, FINISHED, PUBLISHED, ERROR, EXPIRED = (
    "IN_PROGRESS",
    "FINISHED",
    "PUBLISHED",
    "ERROR",
    "EXPIRED",
)
CHILDREN_PREFIX = "children:"


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
    quota_edge: str  # GET /{user}/<edge> reads the publishing limit
    quota_fields = "quota_usage,config"
    poll_schedule: PollSchedule
    retry_safe_after_unknown = False
    poll_makes_post = True  # a FINISHED container is published by the poll
    publish_makes_post = False  # ...and only there: publish_segment makes containers

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
            reply_to_id = reply_to.parent.provider_post_id if reply_to else None
            return self._create(client, ctx, segment, reply_to_id)

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
                carousel_id = self._create_carousel_when_ready(client, ctx, entry)
                if carousel_id is None:
                    return pending
                container_id = carousel_id
            status, detail = self._status(client, container_id)
            if status == FINISHED:
                return self._publish(client, ctx, container_id)
            if status == PUBLISHED:
                return self._published_post(client, ctx, self._entry_for_pending(ctx, container_id))
            if status == EXPIRED and (self._entry_for_pending(ctx, container_id) or {}).get(
                "renewed"
            ):
                raise _expired_again()
            if status in (ERROR, EXPIRED):
                raise self._container_failure(status, detail)
            return PublishedSegment(provider_post_id=container_id, pending=True)

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """Reconcile by the container's status; without a container, by listing the user's
        recent media and matching the text and time.

        A pending result means the container exists but is not published: nothing went out,
        and polling it (poll_segment) finishes the job without a second post. An EXPIRED
        container was never published either: a new one is made, once (`_renew`), and
        answered pending. An ERROR container raises the platform's reason.
        """
        with graph_client(ctx.credentials.get("access_token")) as client:
            entry = self._entry_for_position(ctx, segment.position)
            if entry is not None and (entry.get("id") or entry.get("children")):
                status, detail = self._entry_status(client, entry)
                if status == PUBLISHED:
                    return self._published_post(client, ctx, entry)
                if status == EXPIRED:
                    return self._renew(client, ctx, segment, entry)
                if status == ERROR:
                    raise self._container_failure(ERROR, detail)
                return PublishedSegment(
                    provider_post_id=entry.get("id") or self._children_id(entry), pending=True
                )
            if unfindable := self._unfindable(ctx):
                raise unfindable
            return self._find_published(
                client,
                ctx,
                {"text": segment.text, "created_at": not_before.isoformat()},
                is_reply=segment.position > 0,
            )

    # Quota -----------------------------------------------------------------------------

    def quota_usage(self, ctx: PublishContext) -> dict:
        """Posts published in the last 24 h against the account's cap (`total` is read
        live, not assumed)."""
        with graph_client(ctx.credentials.get("access_token")) as client:
            body = graph_call(
                client,
                "GET",
                self._url(ctx, self.quota_edge),
                params={"fields": self.quota_fields},
                is_create=False,
            )
        return self._quota((body.get("data") or [{}])[0])

    def _quota(self, usage: dict) -> dict:
        config = usage.get("config") or {}
        return {
            "used": usage.get("quota_usage", 0),
            "total": config.get("quota_total"),
            "window_s": config.get("quota_duration"),
        }

    # Steps -----------------------------------------------------------------------------

    def _url(self, ctx: PublishContext, edge: str) -> str:
        return f"{self.graph_base}/{ctx.account.remote_id}/{edge}"

    def _create(
        self,
        client: httpx.Client,
        ctx: PublishContext,
        segment: SegmentPayload,
        reply_to_id: str | None,
        *,
        renewed: int = 0,
    ) -> PublishedSegment:
        entry: dict = {
            "text": segment.text,
            "created_at": timezone.now().isoformat(),
            "reply_to_id": reply_to_id,
        }
        if renewed:
            entry["renewed"] = renewed
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
        if not (entry.get("id") or entry.get("children")):
            return None
        status, _ = self._entry_status(client, entry)
        if status == PUBLISHED:
            return self._published_post(client, ctx, entry)
        if status in (IN_PROGRESS, FINISHED):
            return PublishedSegment(
                provider_post_id=entry.get("id") or self._children_id(entry), pending=True
            )
        return None  # ERROR / EXPIRED: never published; a new container is needed

    def _entry_status(self, client: httpx.Client, entry: dict) -> tuple[str, str]:
        """The state of the segment's container, or of its carousel items while the
        carousel itself is not made yet (an item in ERROR or EXPIRED decides it)."""
        if entry.get("id"):
            return self._status(client, entry["id"])
        states = [self._status(client, child) for child in entry["children"]]
        for bad in (ERROR, EXPIRED):
            for status, detail in states:
                if status == bad:
                    return status, detail
        if all(status == FINISHED for status, _ in states):
            return FINISHED, ""
        return IN_PROGRESS, ""

    def _renew(
        self, client: httpx.Client, ctx: PublishContext, segment: SegmentPayload, entry: dict
    ) -> PublishedSegment:
        """The segment's container expired unpublished (Meta keeps one 24 h): nothing was
        posted, so a new container is made from the segment (with fresh media URLs) and
        answered pending. Once: a renewed container that expires too is a plain failure
        (nothing was posted; a person retries when ready)."""
        if entry.get("renewed"):
            raise _expired_again()
        return self._create(
            client,
            ctx,
            segment,
            entry.get("reply_to_id"),
            renewed=int(entry.get("renewed") or 0) + 1,
        )

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
            # Unpublished containers expire after 24 h: nothing was posted, and polling it
            # again cannot help. Only a new container can, made from the segment's media
            # with fresh URLs, which the poll does not hold: handed to reconciliation,
            # whose lookup makes it (`_renew`).
            return ProviderError(
                ErrorKind.UNKNOWN,
                "The platform's container expired before it was published; nothing was "
                "posted. A new container is made and published.",
                code="container_expired",
                retryable=False,
                action=Action.WAIT,
            )
        subcode = re.search(r"\b(\d{7})\b", detail)
        return ProviderError(
            ErrorKind.CONTENT_REJECTED,
            f"The platform could not process the media: {detail or 'no reason given'}.",
            code=subcode.group(1) if subcode else (detail or ERROR),
            nothing_posted=True,  # an ERROR container is never published
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


def _expired_again() -> ProviderError:
    """The renewed container expired unpublished too. A container that reads EXPIRED was
    never published (a published one reads PUBLISHED), so the outcome is known: nothing
    was posted, a plain failure, never an unknown one; a person retries when ready."""
    return ProviderError(
        ErrorKind.MEDIA_PROCESSING,
        "The platform's container expired twice before it was published (Meta keeps an "
        "unpublished container 24 hours); nothing was posted. Retry the post to make a new "
        "one; if it expires again, check that its media links stay reachable.",
        code="container_expired_again",
        retryable=False,
        action=Action.RETRY,
        nothing_posted=True,
    )
