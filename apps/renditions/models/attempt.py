"""The record of every try at a destination."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from apps.accounts.models import Workspace
from apps.common.querysets import WorkspaceQuerySet


class DeliveryAttemptQuerySet(WorkspaceQuerySet):
    def in_flight(self) -> DeliveryAttemptQuerySet:
        return self.filter(outcome=DeliveryAttempt.Outcome.IN_FLIGHT)


class DeliveryAttempt(models.Model):
    """One call to a platform on behalf of a rendition: the evidence a person needs to
    resolve an ambiguous outcome.

    Append-only: the row is written (outcome ``in_flight``) and committed *before* the
    request leaves, then closed once with what happened. A row still in flight after its
    worker died is the proof that a request may have gone out. Rows are never deleted or
    rewritten after they are closed.

    Outcome transitions: in_flight -> published | pending | failed | unknown | lost |
    found | absent | resolved.
    """

    class Kind(models.TextChoices):
        PUBLISH = "publish"
        POLL = "poll"  # an asynchronous platform's next step
        RECONCILE = "reconcile"  # looking for a post after an unknown outcome
        RESOLVE = "resolve"  # a person settled an ambiguous outcome
        COMMENT = "comment"  # the first comment under the post

    class Outcome(models.TextChoices):
        IN_FLIGHT = "in_flight"
        PUBLISHED = "published"
        PENDING = "pending"  # accepted, the platform is still processing
        FAILED = "failed"
        UNKNOWN = "unknown"  # sent, no answer: the post may exist
        LOST = "lost"  # the worker died during the call
        FOUND = "found"  # reconciliation found our post
        ABSENT = "absent"  # reconciliation proved there is no post
        RESOLVED = "resolved"

    rendition = models.ForeignKey(
        "renditions.Rendition", on_delete=models.CASCADE, related_name="delivery_attempts"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    segment_position = models.PositiveSmallIntegerField(null=True, blank=True)
    job_id = models.BigIntegerField(null=True, blank=True)
    worker = models.CharField(max_length=255, blank=True)
    idempotency_key = models.CharField(max_length=255, blank=True)
    request_fingerprint = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of what was sent (text, media, reply)."
    )
    outcome = models.CharField(max_length=12, choices=Outcome.choices, default=Outcome.IN_FLIGHT)
    error = models.JSONField(null=True, blank=True)
    provider_post_id = models.CharField(max_length=255, blank=True)
    provider_url = models.URLField(max_length=1000, blank=True)
    note = models.TextField(blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DeliveryAttemptQuerySet.as_manager()

    class Meta:
        ordering = ["rendition_id", "started_at", "id"]
        indexes = [
            # Stale recovery and the publication page read a rendition's attempts.
            models.Index(fields=["rendition", "started_at"], name="attempt_rendition_started"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} attempt {self.pk} of rendition {self.rendition_id}: {self.outcome}"

    def close(
        self,
        outcome: str,
        *,
        error: dict | None = None,
        provider_post_id: str = "",
        provider_url: str = "",
        note: str = "",
    ) -> bool:
        """Record the outcome once; returns False if the row was already closed (by stale
        recovery, say), in which case nothing is written."""
        now = timezone.now()
        values = {
            "outcome": outcome,
            "error": error,
            "provider_post_id": provider_post_id or "",
            "provider_url": provider_url or "",
            "finished_at": now,
            "updated_at": now,
        }
        if note:
            values["note"] = note
        closed = DeliveryAttempt.objects.filter(pk=self.pk, outcome=self.Outcome.IN_FLIGHT).update(
            **values
        )
        if closed:
            for name, value in values.items():
                setattr(self, name, value)
        return bool(closed)
