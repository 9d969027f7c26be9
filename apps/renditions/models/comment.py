"""A publication's first comment under one destination's post."""

from __future__ import annotations

from datetime import datetime

from django.db import models
from django.utils import timezone

from apps.accounts.models import Workspace
from apps.common.querysets import WorkspaceQuerySet


class FirstComment(models.Model):
    """The first comment posted under a rendition's post once it is live (a comment on
    LinkedIn, Facebook, Instagram and YouTube; a self-reply where comments are replies).

    Created when the post is published, with the text it will get (the publication's first
    comment then), so an edit afterwards never changes what one destination already has.
    The post stands whatever happens to its comment: a comment that fails is shown on the
    post with its error and can be retried; one whose answer never came is looked up before
    anything is sent again, so a retry never comments twice.

    Status: pending (its job will post it) -> published | failed | unknown (sent, the
    platform did not answer and cannot be asked: a person checks). failed and unknown go
    back to pending when a person retries; unknown also to published when they mark it so.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        PUBLISHED = "published"
        FAILED = "failed"
        UNKNOWN = "unknown"

    rendition = models.OneToOneField(
        "renditions.Rendition", on_delete=models.CASCADE, related_name="first_comment"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    text = models.TextField()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    provider_comment_id = models.CharField(max_length=255, blank=True)
    provider_url = models.URLField(max_length=1000, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    last_error = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(status="published") | ~models.Q(provider_comment_id=""),
                name="first_comment_published_has_id",
            )
        ]
        indexes = [
            # The due sweep's jobless comments (`WHERE status = 'pending' ORDER BY id`):
            # pending comments only, so its size follows the comments on their way.
            models.Index(
                fields=["id"],
                condition=models.Q(status="pending"),
                name="first_comment_pending",
            )
        ]

    def __str__(self) -> str:
        return f"First comment of rendition {self.rendition_id} ({self.status})"

    @property
    def needs_attention(self) -> bool:
        return self.status in (self.Status.FAILED, self.Status.UNKNOWN)

    def move(self, from_statuses: set[str], status: str, **fields) -> bool:
        """Write `status` (and `fields`) if the row is still in one of `from_statuses`;
        False when another writer moved it first (nothing written then)."""
        values = {"status": status, "updated_at": timezone.now(), **fields}
        moved = FirstComment.objects.filter(pk=self.pk, status__in=from_statuses).update(**values)
        if moved:
            for name, value in values.items():
                setattr(self, name, value)
        return bool(moved)

    def mark_published(self, comment_id: str, url: str = "", at: datetime | None = None) -> bool:
        if not comment_id:
            raise ValueError("A published comment needs the provider's id.")
        return self.move(
            {self.Status.PENDING, self.Status.UNKNOWN},
            self.Status.PUBLISHED,
            provider_comment_id=comment_id,
            provider_url=url or "",
            published_at=at or timezone.now(),
            last_error=None,
        )
