"""Recurring series: a publication template, an RFC 5545 rule in an IANA zone, and the
occurrences the materializer turned into real publications (or skipped)."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from apps.accounts.models import Workspace, validate_timezone
from apps.common.querysets import WorkspaceQuerySet

DEFAULT_HORIZON_DAYS = 60
MAX_HORIZON_DAYS = 366
DEFAULT_LATE_WINDOW_MINUTES = 60


class SeriesQuerySet(WorkspaceQuerySet["Series"]):
    def active(self) -> SeriesQuerySet:
        return self.filter(status=Series.Status.ACTIVE)

    def locked(self, series: Series) -> Series:
        """The series' row read again under a row lock (in the caller's transaction), so
        edits and materializer runs on one series take turns."""
        return self.select_for_update().select_related("workspace").get(pk=series.pk)


class Series(models.Model):
    """A post that repeats: ``template`` ({"segments": [...], "destinations": [...]}, as
    publication_create takes them) published at every occurrence of ``rrule`` (an RFC
    5545 RRULE, e.g. ``FREQ=WEEKLY;BYDAY=MO``) counted from ``dtstart``, a wall-clock time
    in ``timezone``. ``count`` or ``until`` bound it.

    Status: active <-> paused; active | paused -> ended (final).

    ``materialized_through`` is the materializer's cursor: every occurrence up to that
    instant has been handled (made a publication, or skipped). Occurrences falling while
    the series was paused are not made up later.
    """

    class Status(models.TextChoices):
        ACTIVE = "active"
        PAUSED = "paused"
        ENDED = "ended"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="series")
    name = models.CharField(max_length=200)
    template = models.JSONField(default=dict)
    rrule = models.CharField(max_length=500, help_text="An RFC 5545 RRULE, e.g. FREQ=WEEKLY.")
    dtstart = models.CharField(
        max_length=19,
        help_text="First wall-clock time, YYYY-MM-DDTHH:MM:SS, in the series' zone. Stored "
        "as text: a wall-clock time has no instant until its zone gives it one.",
    )
    timezone = models.CharField(max_length=64, validators=[validate_timezone])
    count = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)], help_text="Occurrences in all."
    )
    until = models.DateTimeField(null=True, blank=True, help_text="No occurrence after this.")
    late_window_minutes = models.PositiveIntegerField(
        default=DEFAULT_LATE_WINDOW_MINUTES,
        help_text="An occurrence missed by at most this much is published late; older ones "
        "are skipped.",
    )
    horizon_days = models.PositiveIntegerField(
        default=DEFAULT_HORIZON_DAYS,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_HORIZON_DAYS)],
        help_text="How far ahead occurrences become publications.",
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.ACTIVE)
    materialized_through = models.DateTimeField(null=True, blank=True)
    paused_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = SeriesQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "series"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["active", "paused", "ended"]),
                name="series_status_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(horizon_days__gte=1, horizon_days__lte=MAX_HORIZON_DAYS),
                name="series_horizon_bounded",
            ),
        ]
        indexes = [
            # The periodic materializer walks the active series.
            models.Index(fields=["id"], condition=models.Q(status="active"), name="series_active"),
            models.Index(fields=["workspace", "status"], name="series_ws_status"),
        ]

    def __str__(self) -> str:
        return self.name


class SeriesOccurrenceQuerySet(WorkspaceQuerySet):
    def current(self) -> SeriesOccurrenceQuerySet:
        """Not replaced by an edit of the series."""
        return self.exclude(status=SeriesOccurrence.Status.SUPERSEDED)


class SeriesOccurrence(models.Model):
    """One occurrence of a series that the materializer handled.

    Status:
        materialized  a publication was created for it (``is_late``: after its time,
                      within the late window)
        skipped       missed by more than the late window; no publication
        failed        the publication could not be created (``error``); tried again on
                      later runs while it is not past its window
        cancelled     the series ended (or was paused) with its future publications
                      cancelled
        superseded    an edit of the series replaced it; its publication was cancelled
    Moves: failed -> materialized | skipped; materialized -> cancelled | superseded.
    """

    class Status(models.TextChoices):
        MATERIALIZED = "materialized"
        SKIPPED = "skipped"
        FAILED = "failed"
        CANCELLED = "cancelled"
        SUPERSEDED = "superseded"

    series = models.ForeignKey(Series, on_delete=models.CASCADE, related_name="occurrences")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    local_start = models.CharField(max_length=19, help_text="Wall-clock time in the series' zone.")
    scheduled_at = models.DateTimeField(help_text="Its UTC instant under the DST policy.")
    publication = models.ForeignKey(
        "publications.Publication",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="series_occurrences",
    )
    status = models.CharField(max_length=12, choices=Status.choices)
    is_late = models.BooleanField(default=False)
    error = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = SeriesOccurrenceQuerySet.as_manager()

    class Meta:
        ordering = ["series_id", "scheduled_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["series", "local_start"],
                condition=~models.Q(status="superseded"),
                name="series_occurrence_once",
            ),
        ]
        indexes = [
            models.Index(fields=["series", "scheduled_at"], name="series_occurrence_time"),
        ]

    def __str__(self) -> str:
        return f"{self.series_id} @ {self.local_start} ({self.status})"
