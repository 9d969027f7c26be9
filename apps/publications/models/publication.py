"""The publication: what a team wants to say, once, before it is adapted per destination."""

from django.conf import settings
from django.db import models
from django.db.models import F

from apps.accounts.models import Workspace, validate_timezone
from apps.common.querysets import WorkspaceQuerySet


class Publication(models.Model):
    """The source intent: ordered segments (several make a thread), a schedule, and one
    Rendition per destination account (apps.renditions).

    ``status`` is never set by hand: it is the aggregate of the renditions' statuses,
    recomputed by ``apps.publishing.services.publication_refresh_status`` whenever one
    changes (the full rule is ``apps.publishing.status.aggregate_status``):

        draft        all renditions draft (or none yet)
        scheduled    nothing started, something scheduled
        publishing   something in flight, or work left beside finished renditions
        published | partially_published | failed    everything finished
        cancelled    every rendition cancelled (cancelled ones are otherwise ignored)

    so it moves draft <-> scheduled -> publishing -> published | partially_published |
    failed, and to cancelled when every destination is cancelled.

    ``scheduled_at`` is a UTC instant; ``timezone`` is the IANA zone it was chosen in (for
    showing it back and for recurrence), which never changes when it fires. ``revision``
    starts at 1 and grows by one on every edit, in the edit's transaction: an edit names
    the revision it was made against and a stale one is refused (optimistic concurrency).
    """

    class Status(models.TextChoices):
        DRAFT = "draft"
        SCHEDULED = "scheduled"
        PUBLISHING = "publishing"
        PUBLISHED = "published"
        PARTIALLY_PUBLISHED = "partially_published"
        FAILED = "failed"
        CANCELLED = "cancelled"

    # Indexed first in publication_ws_id (and the other workspace indexes), not alone.
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="publications", db_index=False
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="publications",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)
    scheduled_at = models.DateTimeField(null=True, blank=True)
    timezone = models.CharField(max_length=64, default="UTC", validators=[validate_timezone])
    revision = models.PositiveIntegerField(default=1)
    reference_key = models.CharField(
        max_length=200,
        null=True,
        blank=True,
        help_text="Client-chosen key, unique in the workspace (a series occurrence, an import).",
    )
    first_comment = models.TextField(
        blank=True,
        default="",
        help_text="Posted under each post whose platform takes comments, once it is live.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "reference_key"],
                condition=models.Q(reference_key__isnull=False),
                name="publication_reference_key_unique",
            ),
            models.CheckConstraint(
                condition=models.Q(revision__gte=1), name="publication_revision_positive"
            ),
        ]
        indexes = [
            # Lists filtered by state, and the calendar (by time range).
            models.Index(fields=["workspace", "status"], name="publication_ws_status"),
            models.Index(fields=["workspace", "scheduled_at"], name="publication_ws_scheduled"),
            # The calendar's counts and first cards of a cell: the posts it shows (cancelled
            # ones left out) in time order. Matching the filter, it is the plan whatever the
            # statistics say (an index on status would read the workspace's every post).
            models.Index(
                fields=["workspace", "scheduled_at", "id"],
                condition=~models.Q(status="cancelled"),
                name="publication_ws_live_time",
            ),
            # The monthly quota counts an organization's creations in a UTC month.
            models.Index(fields=["workspace", "created_at"], name="publication_ws_created"),
            # The API's list, newest first by id: `WHERE workspace_id = ? [AND id < ?]
            # ORDER BY id DESC NULLS LAST LIMIT ?` (publication_read writes the order so;
            # ids are never null). No other index gives that order, so it is the plan
            # whatever the statistics say: with `ORDER BY id DESC` a large workspace's list
            # was planned as the primary key walked back past every newer row of every
            # other workspace (55,000 rows beside a tenant of 50,000).
            models.Index(F("workspace"), F("id").desc(nulls_last=True), name="publication_ws_id"),
        ]

    def __str__(self) -> str:
        return f"Publication {self.pk} ({self.status})"


class PublicationSegmentQuerySet(WorkspaceQuerySet):
    workspace_path = "publication__workspace"


class PublicationSegment(models.Model):
    """One post of a publication; a thread has several, in ``position`` order (0 first)."""

    publication = models.ForeignKey(Publication, on_delete=models.CASCADE, related_name="segments")
    position = models.PositiveSmallIntegerField()
    text = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = PublicationSegmentQuerySet.as_manager()

    class Meta:
        ordering = ["publication_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["publication", "position"], name="publication_segment_position_unique"
            )
        ]

    def __str__(self) -> str:
        return f"Segment {self.position} of publication {self.publication_id}"


class SegmentMediaQuerySet(WorkspaceQuerySet):
    workspace_path = "segment__publication__workspace"


class SegmentMedia(models.Model):
    """A media file attached to a segment, in order. ``alt_text`` overrides the asset's own
    alt text for this use when it is not blank."""

    segment = models.ForeignKey(
        PublicationSegment, on_delete=models.CASCADE, related_name="media_links"
    )
    # RESTRICT: an asset in use cannot be deleted, unless its publication goes with it.
    media = models.ForeignKey(
        "publications.MediaAsset", on_delete=models.RESTRICT, related_name="segment_links"
    )
    position = models.PositiveSmallIntegerField()
    alt_text = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = SegmentMediaQuerySet.as_manager()

    class Meta:
        ordering = ["segment_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["segment", "position"], name="segment_media_position_unique"
            )
        ]

    def __str__(self) -> str:
        return f"Media {self.media_id} at {self.position} of segment {self.segment_id}"

    @property
    def effective_alt_text(self) -> str:
        return self.alt_text or self.media.alt_text
