"""The rendition: one publication adapted for one destination account, and its state."""

from __future__ import annotations

from datetime import datetime

from django.db import models
from django.utils import timezone

from apps.accounts.models import SocialAccount, Workspace
from apps.common.querysets import WorkspaceQuerySet
from apps.renditions.errors import InvalidTransition, RenditionChanged

# The structured error a failed rendition carries (DESIGN §1: kind, provider code and HTTP
# status, whether and when it is retried, and what a person should do).
ERROR_KEYS = ("kind", "code", "http_status", "message", "retryable", "action", "retry_at")


class RenditionQuerySet(WorkspaceQuerySet):
    def with_effective_scheduled_at(self) -> RenditionQuerySet:
        """The rows with ``effective_at`` (the rendition's own time, else its publication's).

        It is a column kept by the database (see ``Rendition.effective_at``), so this adds
        nothing to the query; it stays for the readers that name what they rely on."""
        return self.all()


class Rendition(models.Model):
    """One publication adapted for one SocialAccount: text and settings for that platform,
    an optional schedule of its own, and what happened when it was published.

    Status transitions (enforced by ``transition_to``, the only writer of ``status``):

        draft      -> scheduled | cancelled
        scheduled  -> publishing | cancelled | draft (unscheduled)
        publishing -> published | failed | waiting (accepted, still processing)
                      | scheduled (released back unsent, e.g. at shutdown)
        waiting    -> published | failed | publishing (next step of an async publish)
        failed     -> scheduled (retry) | published (reconciled or resolved by a person)
                      | cancelled
        published, cancelled: terminal

    ``ambiguous`` is a flag on a failed rendition whose request may have reached the
    platform: it is never retried automatically, only reconciled or resolved by a person.
    A failed rendition with ``next_retry_at`` set (and not ambiguous) has a retry pending.
    """

    class Status(models.TextChoices):
        DRAFT = "draft"
        SCHEDULED = "scheduled"
        PUBLISHING = "publishing"
        WAITING = "waiting"
        PUBLISHED = "published"
        FAILED = "failed"
        CANCELLED = "cancelled"

    TRANSITIONS: dict[str, frozenset[str]] = {
        Status.DRAFT: frozenset({Status.SCHEDULED, Status.CANCELLED}),
        Status.SCHEDULED: frozenset({Status.PUBLISHING, Status.CANCELLED, Status.DRAFT}),
        Status.PUBLISHING: frozenset(
            {Status.PUBLISHED, Status.FAILED, Status.WAITING, Status.SCHEDULED}
        ),
        Status.WAITING: frozenset({Status.PUBLISHED, Status.FAILED, Status.PUBLISHING}),
        Status.FAILED: frozenset({Status.SCHEDULED, Status.PUBLISHED, Status.CANCELLED}),
        Status.PUBLISHED: frozenset(),
        Status.CANCELLED: frozenset(),
    }
    TERMINAL = frozenset({Status.PUBLISHED, Status.CANCELLED})
    # Not yet handed to a provider: the content may still change and cancelling is clean.
    NOT_STARTED = frozenset({Status.DRAFT, Status.SCHEDULED})

    publication = models.ForeignKey(
        "publications.Publication", on_delete=models.CASCADE, related_name="renditions"
    )
    # Direct, so every query can be scoped to the workspace without a join.
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="renditions")
    # RESTRICT: an account with delivery history is disabled, not deleted (deleting the
    # workspace or the publication still takes its renditions along).
    social_account = models.ForeignKey(
        SocialAccount, on_delete=models.RESTRICT, related_name="renditions"
    )
    platform = models.CharField(max_length=32, help_text="Copied from the account.")
    settings = models.JSONField(default=dict, blank=True)
    overrides_content = models.BooleanField(
        default=False,
        help_text="Its segments were written for this destination; source edits leave them.",
    )
    scheduled_at = models.DateTimeField(
        null=True, blank=True, help_text="Overrides the publication's time for this destination."
    )
    # When it is due: ``coalesce(scheduled_at, publication.scheduled_at)``, stored so the
    # queue, the daily caps and the sweep filter and sort on an indexed column instead of a
    # join. Written only by the database: the triggers of migration 0005_effective_at set
    # it on every insert and on every change of either time, whoever writes the rows
    # (services, bulk INSERTs, the admin, raw SQL), so no writer has to remember it. Read
    # back on insert (the column default makes Django ask for it); after an update that
    # moves a time, an instance in memory holds the old value until refreshed.
    effective_at = models.DateTimeField(null=True, blank=True, editable=False, db_default=None)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.DRAFT)
    provider_post_id = models.CharField(max_length=255, blank=True)
    provider_url = models.URLField(max_length=1000, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    next_retry_at = models.DateTimeField(null=True, blank=True)
    last_error = models.JSONField(null=True, blank=True)
    ambiguous = models.BooleanField(default=False)
    manual_retry_count = models.PositiveIntegerField(default=0)
    checkpoint = models.JSONField(
        default=dict,
        blank=True,
        help_text="Server-issued handles kept between attempts (upload session, container).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = RenditionQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["publication", "social_account"], name="rendition_one_per_account"
            ),
            models.CheckConstraint(
                condition=models.Q(ambiguous=False) | models.Q(status="failed"),
                name="rendition_ambiguous_only_when_failed",
            ),
            models.CheckConstraint(
                condition=~models.Q(status="published") | models.Q(published_at__isnull=False),
                name="rendition_published_has_time",
            ),
        ]
        indexes = [
            models.Index(fields=["workspace", "status"], name="rendition_ws_status"),
            # An account's queue: its scheduled posts from now on, in time order (`WHERE
            # social_account_id = ? AND status = 'scheduled' AND effective_at >= ? ORDER BY
            # effective_at, id`). Holds scheduled rows only, so the published history of
            # the account, and every other tenant, stays out of it.
            models.Index(
                fields=["social_account", "effective_at", "id"],
                condition=models.Q(status="scheduled"),
                name="rendition_queue",
            ),
            # The outbox sweep: scheduled renditions whose time has come, every tenant.
            models.Index(
                fields=["effective_at"],
                condition=models.Q(status="scheduled"),
                name="rendition_due",
            ),
            # The stranded-work sweep: renditions a platform call is under way for, every
            # tenant (few at any instant, however many posts are scheduled or done).
            models.Index(
                fields=["id"],
                condition=models.Q(status__in=["publishing", "waiting"]),
                name="rendition_in_flight",
            ),
            # Daily caps count an account's renditions per UTC day.
            models.Index(fields=["social_account", "status"], name="rendition_account_status"),
            # The operators' dashboard: destinations failed over the last day.
            models.Index(
                fields=["updated_at"],
                condition=models.Q(status="failed"),
                name="rendition_failed_recent",
            ),
            # Operators look for ambiguous outcomes first.
            models.Index(
                fields=["workspace"],
                condition=models.Q(ambiguous=True),
                name="rendition_ambiguous",
            ),
        ]

    def __str__(self) -> str:
        return f"Rendition {self.pk} {self.platform} ({self.status})"

    # --- reading -------------------------------------------------------------------------

    @property
    def effective_scheduled_at(self) -> datetime | None:
        """When it is due: its own override, else the publication's time."""
        return self.scheduled_at or self.publication.scheduled_at

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL

    @property
    def is_retry_pending(self) -> bool:
        return (
            self.status == self.Status.FAILED
            and self.next_retry_at is not None
            and not self.ambiguous
        )

    @property
    def is_content_editable(self) -> bool:
        """True while an edit cannot contradict what a platform already holds: not handed
        to a provider (or failed cleanly), and no thread segment published yet."""
        return self._status_editable and not self.segments.exclude(provider_post_id="").exists()

    def content_editable_as_read(self) -> bool:
        """``is_content_editable`` judged on the segments read with the rendition
        (prefetched, else loaded): what a page showing many renditions asks, without a
        query for each."""
        return self._status_editable and not any(s.provider_post_id for s in self.segments.all())

    @property
    def _status_editable(self) -> bool:
        if self.status in self.NOT_STARTED:
            return True
        return self.status == self.Status.FAILED and not self.ambiguous

    def can_transition_to(self, status: str) -> bool:
        return status in self.TRANSITIONS[self.status]

    # --- the state machine -----------------------------------------------------------------

    def transition_to(self, status: str, **fields) -> None:
        """Move to status (with the given field values) if the table allows it.

        The write is guarded by the status this copy holds (``UPDATE ... WHERE status =
        <old>``): if another process moved the row first, nothing is written and
        RenditionChanged is raised, so a stale worker cannot overwrite a newer outcome.
        An illegal move raises InvalidTransition.
        """
        old = self.status
        if status not in self.TRANSITIONS[old]:
            raise InvalidTransition(
                f"A rendition cannot go from {old} to {status}.",
                details={"rendition": self.pk, "from": old, "to": status},
            )
        values = {"status": status, "updated_at": timezone.now(), **fields}
        updated = Rendition.objects.filter(pk=self.pk, status=old).update(**values)
        if updated != 1:
            current = Rendition.objects.filter(pk=self.pk).values_list("status", flat=True)
            raise RenditionChanged(
                f"Rendition {self.pk} is no longer {old}.",
                details={"rendition": self.pk, "expected": old, "current": current.first()},
            )
        computed = [name for name, value in values.items() if hasattr(value, "resolve_expression")]
        for name, value in values.items():
            if name not in computed:
                setattr(self, name, value)
        if computed:
            self.refresh_from_db(fields=computed)

    def mark_scheduled(self) -> None:
        """Due at its effective time (from draft, released from publishing, or retried)."""
        self.transition_to(self.Status.SCHEDULED, next_retry_at=None, ambiguous=False)

    def mark_draft(self) -> None:
        """Unscheduled: kept, but not due."""
        self.transition_to(self.Status.DRAFT, next_retry_at=None)

    def mark_publishing(self) -> None:
        """Handed to the provider. Counts an attempt when it starts from scheduled (a
        waiting rendition resuming its next step is the same attempt)."""
        fields: dict = {"next_retry_at": None}
        if self.status == self.Status.SCHEDULED:
            fields["attempts"] = models.F("attempts") + 1
        self.transition_to(self.Status.PUBLISHING, **fields)

    def mark_waiting(self) -> None:
        """Accepted by the platform, which is still processing it."""
        self.transition_to(self.Status.WAITING)

    def mark_published(self, post_id: str, url: str = "", at: datetime | None = None) -> None:
        """Live on the platform (published, reconciled, or resolved by a person)."""
        self.transition_to(
            self.Status.PUBLISHED,
            provider_post_id=post_id or "",
            provider_url=url or "",
            published_at=at or timezone.now(),
            next_retry_at=None,
            ambiguous=False,
            last_error=None,
        )

    def mark_failed(
        self, error: dict, retry_at: datetime | None = None, ambiguous: bool = False
    ) -> None:
        """Failed with a structured error. retry_at schedules an automatic retry; an
        ambiguous failure (the post may exist) is never retried automatically, so it
        cannot have one."""
        if ambiguous and retry_at is not None:
            raise ValueError("An ambiguous failure is never retried automatically.")
        self.transition_to(
            self.Status.FAILED,
            last_error=normalize_error(error, retry_at=retry_at),
            next_retry_at=retry_at,
            ambiguous=ambiguous,
        )

    def mark_cancelled(self) -> None:
        self.transition_to(self.Status.CANCELLED, next_retry_at=None)


def normalize_error(error: dict, *, retry_at: datetime | None = None) -> dict:
    """The stored shape of ``last_error``: every key of ERROR_KEYS (kind and message
    required), retry_at (ISO 8601) filled from the retry time when not given. Extra keys a
    classifier adds (e.g. the existing post a duplicate rejection names) are kept."""
    if not error.get("kind") or not isinstance(error.get("message"), str):
        raise ValueError("An error needs a kind and a message.")
    clean = {key: error.get(key) for key in ERROR_KEYS}
    clean.update({key: value for key, value in error.items() if key not in ERROR_KEYS})
    clean["kind"] = str(clean["kind"])
    if clean["action"] is not None:
        clean["action"] = str(clean["action"])
    if isinstance(clean["retry_at"], datetime):
        clean["retry_at"] = clean["retry_at"].isoformat()
    if clean["retry_at"] is None and retry_at is not None:
        clean["retry_at"] = retry_at.isoformat()
    if clean["retryable"] is None:
        clean["retryable"] = retry_at is not None
    return clean
