"""Renditions as the API shows them: per destination, its status, provider ids, retries,
the structured error, and every delivery attempt (the evidence behind an ambiguous
outcome)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.api.serializers.base import ShownModelSerializer, StrictSerializer, TextField, URLField
from apps.publishing.services import Resolution
from apps.renditions.models import (
    ERROR_KEYS,
    DeliveryAttempt,
    FirstComment,
    Rendition,
    RenditionMedia,
    RenditionSegment,
)


class RenditionErrorSerializer(serializers.Serializer):
    """Why a destination failed, and what happens next."""

    kind = serializers.CharField(
        help_text="rate_limited, provider_unavailable, auth_expired, content_rejected..."
    )
    code = serializers.CharField(allow_null=True, help_text="The provider's own error code.")
    http_status = serializers.IntegerField(allow_null=True)
    message = serializers.CharField(allow_blank=True)
    retryable = serializers.BooleanField(allow_null=True)
    action = serializers.CharField(
        allow_null=True, help_text="What a person should do: reconnect, edit_content..."
    )
    retry_at = serializers.CharField(
        allow_null=True, help_text="When the automatic retry runs (ISO 8601), if one is due."
    )
    check_at = serializers.SerializerMethodField(
        help_text="When the system next checks the platform itself for a post whose outcome "
        "is unknown (ISO 8601; action is then `wait`), else null."
    )
    details = serializers.SerializerMethodField()

    def get_check_at(self, error: dict) -> str | None:
        return error.get("check_at")

    @extend_schema_field(serializers.DictField())
    def get_details(self, error: dict) -> dict:
        """Anything else the classifier recorded (e.g. the existing post a duplicate names)."""
        return {
            key: value
            for key, value in error.items()
            if key not in ERROR_KEYS and key != "check_at"
        }


class DeliveryAttemptSerializer(ShownModelSerializer):
    class Meta:
        model = DeliveryAttempt
        fields = [
            "id",
            "kind",
            "outcome",
            "segment_position",
            "idempotency_key",
            "started_at",
            "finished_at",
            "error",
            "provider_post_id",
            "provider_url",
            "note",
        ]


class RenditionMediaSerializer(ShownModelSerializer):
    id = serializers.IntegerField(source="media_id")

    class Meta:
        model = RenditionMedia
        fields = ["id", "alt_text"]


class RenditionSegmentSerializer(ShownModelSerializer):
    text = serializers.CharField(
        help_text="The text this destination gets: its own, else the publication's segment's."
    )
    media = RenditionMediaSerializer(many=True)

    class Meta:
        model = RenditionSegment
        fields = ["position", "text", "media", "provider_post_id", "provider_url", "published_at"]


class FirstCommentSerializer(ShownModelSerializer):
    """The first comment under this destination's post."""

    error = RenditionErrorSerializer(source="last_error", allow_null=True)

    class Meta:
        model = FirstComment
        fields = [
            "id",
            "text",
            "status",
            "provider_comment_id",
            "provider_url",
            "published_at",
            "error",
        ]


class RenditionSerializer(ShownModelSerializer):
    """One destination of a publication."""

    account = serializers.IntegerField(source="social_account_id")
    account_handle = serializers.CharField(source="social_account.handle")
    scheduled_at = serializers.SerializerMethodField(
        help_text="When it is due: its own time, else the publication's."
    )
    error = RenditionErrorSerializer(source="last_error", allow_null=True)
    segments = RenditionSegmentSerializer(many=True)
    delivery_attempts = DeliveryAttemptSerializer(many=True)
    first_comment = serializers.SerializerMethodField(
        help_text="The first comment under the post (pending, published, failed or unknown), "
        "once the post is live and if the publication has one; else null."
    )

    class Meta:
        model = Rendition
        fields = [
            "id",
            "publication",
            "account",
            "account_handle",
            "platform",
            "status",
            "scheduled_at",
            "published_at",
            "provider_post_id",
            "provider_url",
            "attempts",
            "next_retry_at",
            "ambiguous",
            "manual_retry_count",
            "error",
            "settings",
            "segments",
            "delivery_attempts",
            "first_comment",
        ]

    @extend_schema_field(FirstCommentSerializer(allow_null=True))
    def get_first_comment(self, rendition: Rendition) -> Any:
        if rendition.status != Rendition.Status.PUBLISHED:
            return None  # made when the post goes live; no query before
        comment = getattr(rendition, "first_comment", None)
        return FirstCommentSerializer(comment).data if comment is not None else None

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_scheduled_at(self, rendition: Rendition) -> Any:
        value: datetime | None = rendition.effective_scheduled_at
        return _DATETIME.to_representation(value) if value else None


# How a model's date and time field is shown (in the zone current when it is shown).
_DATETIME = serializers.DateTimeField()


class RenditionResolveSerializer(StrictSerializer):
    """POST /renditions/{id}/resolve: what a person found on the platform."""

    outcome = serializers.ChoiceField(
        choices=Resolution.CHOICES,
        help_text="published (the post exists: give its URL), failed (it does not; leave it "
        "failed) or retry (it does not; send it again).",
    )
    provider_url = URLField(
        required=False, allow_blank=True, max_length=1000, help_text="The post's URL."
    )
    provider_post_id = TextField(required=False, allow_blank=True, max_length=255)


class FirstCommentMarkPostedSerializer(StrictSerializer):
    """POST /renditions/{id}/first-comment/mark-posted: the comment a person found."""

    provider_url = URLField(
        required=False, allow_blank=True, max_length=1000, help_text="The comment's URL."
    )
