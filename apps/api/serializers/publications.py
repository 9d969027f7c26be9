"""Publications: the create/edit bodies, the list filters, the validation report, and the
publication as the API shows it (with every rendition and its delivery attempts)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.api.serializers.base import (
    MAX_SMALL_INT,
    IdField,
    IntegerField,
    JSONObjectField,
    NumberField,
    ScheduleTextField,
    ShownModelSerializer,
    StrictSerializer,
    TextField,
)
from apps.api.serializers.renditions import RenditionSerializer
from apps.publications import constants
from apps.publications.models import Publication, PublicationSegment, SegmentMedia

TARGET_STATUSES = (Publication.Status.DRAFT, Publication.Status.SCHEDULED)

# --- input ----------------------------------------------------------------------------------


class MediaRefSerializer(StrictSerializer):
    id = IdField(help_text="A media id from POST /media.")
    alt_text = TextField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=constants.MAX_ALT_TEXT_LENGTH,
        help_text="Overrides the media's own alt text for this use.",
    )


class SegmentInputSerializer(StrictSerializer):
    text = TextField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=constants.MAX_TEXT_LENGTH,
    )
    media = MediaRefSerializer(
        many=True, required=False, max_length=constants.MAX_MEDIA_PER_SEGMENT
    )


class _ScheduleFields(StrictSerializer):
    """When: an instant (scheduled_at) or a wall-clock time in a zone (local_time and
    timezone)."""

    scheduled_at = ScheduleTextField(
        required=False,
        allow_null=True,
        max_length=64,
        help_text="An ISO-8601 instant with a UTC offset, e.g. 2027-03-28T09:00:00+02:00 or ...Z.",
    )
    local_time = ScheduleTextField(
        required=False,
        allow_null=True,
        max_length=64,
        help_text="A wall-clock time without offset, e.g. 2027-03-28T02:30, read in "
        "`timezone` (a time skipped by DST moves forward by the gap; a repeated one takes its "
        "first occurrence).",
    )
    timezone = TextField(
        required=False,
        allow_null=True,
        max_length=64,
        help_text="An IANA zone, e.g. Europe/Warsaw (default: the workspace's).",
    )


class DestinationInputSerializer(_ScheduleFields):
    account = IdField(help_text="A social account id from GET /accounts.")
    segments = SegmentInputSerializer(
        many=True,
        required=False,
        allow_null=True,
        min_length=1,
        max_length=constants.MAX_SEGMENTS,
        help_text="This destination's own text (default: the publication's segments).",
    )
    settings = JSONObjectField(
        required=False, help_text="Platform settings (see GET /capabilities)."
    )


class _PublicationFields(_ScheduleFields):
    text = TextField(
        required=False,
        trim_whitespace=False,
        max_length=constants.MAX_TEXT_LENGTH,
        help_text='Shorthand for one segment: {"segments": [{"text": ...}]}.',
    )
    segments = SegmentInputSerializer(
        many=True,
        required=False,
        max_length=constants.MAX_SEGMENTS,
        help_text="The posts, in thread order (several make a thread).",
    )
    destinations = DestinationInputSerializer(
        many=True, required=False, max_length=constants.MAX_DESTINATIONS
    )
    status = serializers.ChoiceField(
        choices=TARGET_STATUSES,
        required=False,
        help_text="draft (default) or scheduled (needs the publish scope).",
    )
    reference_key = TextField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=constants.MAX_REFERENCE_KEY_LENGTH,
        help_text="Your own key, unique in the workspace (409 REFERENCE_KEY_EXISTS if reused).",
    )
    first_comment = TextField(
        required=False,
        allow_null=True,
        allow_blank=True,
        trim_whitespace=False,
        max_length=constants.MAX_FIRST_COMMENT_LENGTH,
        help_text="Posted under each destination's post once it is live, where the platform "
        "takes comments (the capabilities' `first_comment`); 400 FIRST_COMMENT_TOO_LONG when "
        "longer than a destination's platform allows. Blank for none.",
    )

    def validate(self, attrs: dict) -> dict:
        if "text" in attrs:
            if "segments" in attrs:
                raise serializers.ValidationError({"text": ["Give text or segments, not both."]})
            attrs["segments"] = [{"text": attrs.pop("text")}]
        return attrs


class PublicationCreateSerializer(_PublicationFields):
    """POST /publications."""

    def validate(self, attrs: dict) -> dict:
        attrs = super().validate(attrs)
        attrs.setdefault("segments", [])
        attrs.setdefault("destinations", [])
        return attrs


class PublicationUpdateSerializer(_PublicationFields):
    """PATCH /publications/{id}: the fields to change, and the revision they were made
    against."""

    revision = IntegerField(
        min_value=1,
        max_value=MAX_SMALL_INT,
        help_text="The revision this edit was made against (409 REVISION_CONFLICT if stale).",
    )


class PublicationFilterSerializer(serializers.Serializer):
    """Query parameters of GET /publications."""

    status = serializers.CharField(
        required=False,
        max_length=200,
        help_text="One status or several, comma-separated, each once: "
        + ", ".join(Publication.Status.values),
    )
    scheduled_after = serializers.DateTimeField(
        required=False, help_text="Scheduled at or after this instant (ISO 8601; UTC if naive)."
    )
    scheduled_before = serializers.DateTimeField(
        required=False, help_text="Scheduled before this instant (ISO 8601; UTC if naive)."
    )
    reference_key = serializers.CharField(
        required=False, max_length=constants.MAX_REFERENCE_KEY_LENGTH
    )

    def validate_status(self, value: str) -> list[str]:
        # As the schema states it: a list of statuses, none blank, none twice.
        statuses = [part.strip() for part in value.split(",")]
        unknown = [s for s in statuses if s not in Publication.Status.values]
        if unknown:
            raise serializers.ValidationError(
                f"Unknown status {', '.join(unknown) or '(none)'}; "
                f"choose from {', '.join(Publication.Status.values)}."
            )
        if len(set(statuses)) < len(statuses):
            raise serializers.ValidationError("A status is named twice.")
        return statuses


# --- output ---------------------------------------------------------------------------------


class SegmentMediaSerializer(ShownModelSerializer):
    id = serializers.IntegerField(source="media_id")
    alt_text = serializers.CharField(source="effective_alt_text")

    class Meta:
        model = SegmentMedia
        fields = ["id", "alt_text"]


class PublicationSegmentSerializer(ShownModelSerializer):
    media = SegmentMediaSerializer(source="media_links", many=True)

    class Meta:
        model = PublicationSegment
        fields = ["position", "text", "media"]


class PublicationSerializer(ShownModelSerializer):
    """A publication and, per destination, what happened."""

    segments = PublicationSegmentSerializer(many=True)
    renditions = RenditionSerializer(many=True)

    class Meta:
        model = Publication
        fields = [
            "id",
            "status",
            "revision",
            "scheduled_at",
            "timezone",
            "reference_key",
            "first_comment",
            "segments",
            "renditions",
            "created_at",
            "updated_at",
        ]


class ProblemSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="Where: segments.0.text, destinations.1.account...")
    code = serializers.CharField(help_text="Machine code: TEXT_TOO_LONG, SCHEDULE_IN_PAST...")
    message = serializers.CharField()
    limit = NumberField(allow_null=True, required=False)
    actual = NumberField(allow_null=True, required=False)


class ValidationReportSerializer(serializers.Serializer):
    valid = serializers.BooleanField()
    problems = ProblemSerializer(many=True)

    def to_representation(self, instance: Any) -> Any:
        return instance
