"""What a rendition says: its segments and their media, linked to the source rows."""

from __future__ import annotations

from datetime import datetime

from django.db import models
from django.utils import timezone

from apps.common.querysets import WorkspaceQuerySet
from apps.renditions.errors import SegmentAlreadyPublished


class RenditionSegmentQuerySet(WorkspaceQuerySet["RenditionSegment"]):
    workspace_path = "rendition__workspace"


class RenditionSegmentManager(models.Manager["RenditionSegment"]):
    def get_queryset(self) -> RenditionSegmentQuerySet:
        # The source segment comes along (one join): an inherited segment's text is its.
        queryset = RenditionSegmentQuerySet(self.model, using=self._db)
        return queryset.select_related("source_segment")

    def for_workspace(self, workspace: models.Model | int) -> RenditionSegmentQuerySet:
        return self.get_queryset().for_workspace(workspace)


class RenditionSegment(models.Model):
    """One post of a rendition, in thread order, with the text this destination gets.

    ``source_segment`` links back to the publication's segment at the same position (null
    once that source segment is gone). The text is stored only where this destination
    overrides the source (``own_text``); otherwise it is the source segment's, read
    through ``text``, so fifty destinations of a long thread store its text once. The
    provider id is set as soon as this segment is live, so a retry of a half-published
    thread skips it.
    """

    rendition = models.ForeignKey(
        "renditions.Rendition", on_delete=models.CASCADE, related_name="segments"
    )
    source_segment = models.ForeignKey(
        "publications.PublicationSegment",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="rendition_segments",
    )
    position = models.PositiveSmallIntegerField()
    own_text = models.TextField(
        null=True,
        blank=True,
        db_column="text",
        help_text="This destination's own text; null: the source segment's.",
    )
    provider_post_id = models.CharField(max_length=255, blank=True)
    provider_url = models.URLField(max_length=1000, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = RenditionSegmentManager()

    class Meta:
        ordering = ["rendition_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["rendition", "position"], name="rendition_segment_position_unique"
            )
        ]

    def __str__(self) -> str:
        return f"Segment {self.position} of rendition {self.rendition_id}"

    @property
    def text(self) -> str:
        """The text this destination gets: its own, else the source segment's."""
        if self.own_text is not None:
            return self.own_text
        return self.source_segment.text if self.source_segment is not None else ""

    @text.setter
    def text(self, value: str) -> None:
        """Setting a text makes it this destination's own (an override)."""
        self.own_text = value

    @property
    def is_inherited(self) -> bool:
        return self.own_text is None

    @property
    def is_published(self) -> bool:
        return bool(self.provider_post_id)

    def mark_published(self, post_id: str, url: str = "", at: datetime | None = None) -> None:
        """Record the provider id of this segment. Written only while none is recorded
        (guarded update): a segment that is live is never published twice."""
        if not post_id:
            raise ValueError("A published segment needs the provider's id.")
        values = {
            "provider_post_id": post_id,
            "provider_url": url or "",
            "published_at": at or timezone.now(),
            "updated_at": timezone.now(),
        }
        updated = RenditionSegment.objects.filter(pk=self.pk, provider_post_id="").update(**values)
        if updated != 1:
            raise SegmentAlreadyPublished(
                f"Segment {self.position} of rendition {self.rendition_id} is already live.",
                details={"rendition": self.rendition_id, "position": self.position},
            )
        for name, value in values.items():
            setattr(self, name, value)


class RenditionMediaQuerySet(WorkspaceQuerySet):
    workspace_path = "rendition_segment__rendition__workspace"


class RenditionMedia(models.Model):
    """A media file of a rendition segment, in order, with the alt text it is sent with."""

    rendition_segment = models.ForeignKey(
        RenditionSegment, on_delete=models.CASCADE, related_name="media"
    )
    media = models.ForeignKey(
        "publications.MediaAsset", on_delete=models.RESTRICT, related_name="rendition_links"
    )
    position = models.PositiveSmallIntegerField()
    alt_text = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = RenditionMediaQuerySet.as_manager()

    class Meta:
        ordering = ["rendition_segment_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["rendition_segment", "position"], name="rendition_media_position_unique"
            )
        ]

    def __str__(self) -> str:
        return f"Media {self.media_id} at {self.position} of {self.rendition_segment}"
