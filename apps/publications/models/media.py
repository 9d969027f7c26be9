"""Uploaded media files, stored through Django's storage API."""

import uuid

from django.conf import settings
from django.db import models

from apps.accounts.models import Workspace
from apps.common.querysets import WorkspaceQuerySet


def media_upload_to(instance: "MediaAsset", filename: str) -> str:
    """workspaces/<id>/media/<uuid>.<ext>: the client's file name is never used on disk."""
    extension = {
        "image/jpeg": "jpg",
        "image/png": "png",
        "image/gif": "gif",
        "image/webp": "webp",
        "video/mp4": "mp4",
        "video/quicktime": "mov",
        "video/webm": "webm",
    }.get(instance.mime_type, "bin")
    return f"workspaces/{instance.workspace_id}/media/{uuid.uuid4().hex}.{extension}"


class MediaAsset(models.Model):
    """An image, GIF or video uploaded to a workspace.

    The kind and MIME type come from the file's content, never its name. Dimensions and
    duration are filled where they are cheap to read (images through Pillow, MP4/MOV from
    the container header); they stay empty otherwise. The checksum is the SHA-256 of the
    bytes as stored.
    """

    class Kind(models.TextChoices):
        IMAGE = "image"
        VIDEO = "video"
        GIF = "gif"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="media")
    file = models.FileField(upload_to=media_upload_to, max_length=255)
    original_name = models.CharField(max_length=255, blank=True)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    mime_type = models.CharField(max_length=100)
    size_bytes = models.PositiveBigIntegerField()
    width = models.PositiveIntegerField(null=True, blank=True)
    height = models.PositiveIntegerField(null=True, blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    sha256 = models.CharField(max_length=64)
    alt_text = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        indexes = [
            # The media library: a workspace's uploads, newest first.
            models.Index(fields=["workspace", "-created_at"], name="media_workspace_recent"),
            # "Already uploaded?" lookups by content.
            models.Index(fields=["workspace", "sha256"], name="media_workspace_sha256"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind__in=["image", "video", "gif"]), name="media_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.original_name or self.file.name}"
