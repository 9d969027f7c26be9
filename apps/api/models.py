"""Stored responses of POST requests sent with an Idempotency-Key header."""

from __future__ import annotations

from django.db import models

from apps.accounts.models import Workspace
from apps.common.querysets import WorkspaceQuerySet


class IdempotencyRecord(models.Model):
    """One Idempotency-Key of a workspace and the response its first request got.

    ``fingerprint`` is the SHA-256 of the method, path and body, so the same key with a
    different request is recognised. The row is inserted before the request runs and
    holds a row lock until it commits with the response (``response_status`` set); if the
    request fails, the row goes with the rolled-back transaction and the key can be used
    again. Rows older than IDEMPOTENCY_RETENTION_HOURS are pruned by the periodic
    ``api.idempotency_prune`` job, and treated as absent until then.
    """

    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="idempotency_records"
    )
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    method = models.CharField(max_length=10)
    path = models.CharField(max_length=500)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "key"], name="idempotency_record_unique_key"
            )
        ]
        indexes = [
            # The pruning job deletes by age.
            models.Index(fields=["created_at"], name="idempotency_record_created"),
        ]

    def __str__(self) -> str:
        return f"{self.method} {self.path} [{self.key}]"

    @property
    def is_complete(self) -> bool:
        return self.response_status is not None
