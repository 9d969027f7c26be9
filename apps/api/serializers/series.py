"""Recurring series: a publication template repeated by an RFC 5545 rule."""

from __future__ import annotations

from rest_framework import serializers

from apps.api.serializers.base import BooleanField, IntegerField, StrictSerializer, TextField
from apps.series.models import DEFAULT_HORIZON_DAYS, DEFAULT_LATE_WINDOW_MINUTES, Series


class SeriesSerializer(serializers.ModelSerializer):
    class Meta:
        model = Series
        fields = [
            "id",
            "name",
            "status",
            "template",
            "rrule",
            "dtstart",
            "timezone",
            "count",
            "until",
            "late_window_minutes",
            "horizon_days",
            "materialized_through",
            "paused_at",
            "ended_at",
            "created_at",
            "updated_at",
        ]


class _ScheduleFields(StrictSerializer):
    rrule = TextField(
        max_length=500, help_text="An RFC 5545 RRULE without DTSTART/COUNT/UNTIL: FREQ=WEEKLY."
    )
    dtstart = TextField(
        max_length=40, help_text="First wall-clock time in `timezone`: 2027-03-28T09:00."
    )
    timezone = TextField(
        max_length=64, required=False, help_text="IANA zone (default: the workspace's)."
    )
    count = IntegerField(min_value=1, required=False, allow_null=True)
    until = TextField(
        max_length=40,
        required=False,
        allow_null=True,
        help_text="Last instant (with an offset), wall-clock time, or date in the zone.",
    )


class SeriesCreateSerializer(_ScheduleFields):
    """POST /series."""

    name = TextField(max_length=200)
    template = serializers.DictField(
        help_text='{"segments": [...], "destinations": [...]} as POST /publications takes '
        "them (destinations without their own time)."
    )
    late_window_minutes = IntegerField(
        min_value=0, max_value=7 * 24 * 60, required=False, default=DEFAULT_LATE_WINDOW_MINUTES
    )
    horizon_days = IntegerField(
        min_value=1, max_value=366, required=False, default=DEFAULT_HORIZON_DAYS
    )


class SeriesUpdateSerializer(StrictSerializer):
    """PATCH /series/{id}. Materialized future occurrences are left as they are unless
    apply_to_materialized is true (their publications are then replaced)."""

    name = TextField(max_length=200, required=False)
    template = serializers.DictField(required=False)
    rrule = TextField(max_length=500, required=False)
    dtstart = TextField(max_length=40, required=False)
    timezone = TextField(max_length=64, required=False)
    count = IntegerField(min_value=1, required=False, allow_null=True)
    until = TextField(max_length=40, required=False, allow_null=True)
    late_window_minutes = IntegerField(min_value=0, max_value=7 * 24 * 60, required=False)
    horizon_days = IntegerField(min_value=1, max_value=366, required=False)
    apply_to_materialized = BooleanField(required=False, default=False)


class SeriesStopSerializer(StrictSerializer):
    """POST /series/{id}/pause and /end."""

    cancel_future = BooleanField(
        required=False,
        default=False,
        help_text="Also cancel the publications already made for future occurrences "
        "(never one that started).",
    )


class SchedulePreviewSerializer(_ScheduleFields):
    """POST /series/preview: the next occurrences of a schedule not saved yet."""

    limit = IntegerField(min_value=1, max_value=100, required=False, default=10)


class PreviewLimitSerializer(StrictSerializer):
    limit = serializers.IntegerField(min_value=1, max_value=100, required=False, default=10)


class OccurrenceSerializer(serializers.Serializer):
    local = serializers.CharField(help_text="Wall-clock time in the series' zone.")
    scheduled_at = serializers.DateTimeField(help_text="UTC instant (DST policy applied).")
    status = serializers.CharField(
        allow_null=True, help_text="materialized, skipped, failed...; null: not yet."
    )
    publication = serializers.IntegerField(source="publication_id", allow_null=True)
