"""Evergreen posts: posts the queue shares again into its free slots."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.api.serializers.base import IdField, IntegerField, StrictSerializer, TextField
from apps.planning.evergreen import MAX_VARIATION_LENGTH, MAX_VARIATIONS
from apps.planning.models import MAX_EVERGREEN_DAYS, EvergreenPost, EvergreenShare

MAX_MARKED = 100  # posts one request marks


class EvergreenShareSerializer(serializers.ModelSerializer):
    class Meta:
        model = EvergreenShare
        fields = ["number", "slot_at", "status", "publication", "text", "left_out", "reason"]


class EvergreenSerializer(serializers.ModelSerializer):
    source = serializers.IntegerField(
        source="source_id", read_only=True, help_text="The publication shared again."
    )
    variations = serializers.ListField(child=serializers.CharField(), read_only=True)
    note = serializers.DictField(
        read_only=True, help_text='Why the last look made nothing: {"code", "message"}.'
    )

    class Meta:
        model = EvergreenPost
        fields = [
            "id",
            "source",
            "status",
            "every_days",
            "min_gap_days",
            "max_shares",
            "ends_on",
            "variations",
            "shares_made",
            "next_check_at",
            "note",
            "paused_at",
            "ended_at",
            "created_at",
            "updated_at",
        ]


class EvergreenSettingsSerializer(StrictSerializer):
    """PATCH /evergreen/{id}: the fields given replace the post's."""

    every_days = IntegerField(min_value=1, max_value=MAX_EVERGREEN_DAYS, required=False)
    min_gap_days = IntegerField(min_value=0, max_value=MAX_EVERGREEN_DAYS, required=False)
    max_shares = IntegerField(min_value=1, required=False, allow_null=True)
    ends_on = serializers.DateField(required=False, allow_null=True)
    variations = serializers.ListField(
        child=TextField(max_length=MAX_VARIATION_LENGTH, allow_blank=True),
        max_length=MAX_VARIATIONS,
        required=False,
        help_text="Other texts of the first part, taken in turn with the post's own.",
    )

    def validate_ends_on(self, value: Any) -> Any:
        if value is not None and not isinstance(self.initial_data.get("ends_on"), str):
            raise serializers.ValidationError("A date, YYYY-MM-DD.")
        return value

    def validate_variations(self, value: list[str]) -> list[str]:
        if any(any("\ud800" <= ch <= "\udfff" for ch in text) for text in value):
            raise serializers.ValidationError("A text holds a character that is not allowed.")
        return value


class EvergreenCreateSerializer(EvergreenSettingsSerializer):
    """POST /evergreen: mark posts evergreen with these settings."""

    publications = serializers.ListField(
        child=IdField(), min_length=1, max_length=MAX_MARKED, help_text="Publication ids."
    )


class EvergreenMarkedSerializer(serializers.Serializer):
    """POST /evergreen's answer: the evergreen posts, in the order of the publications."""

    results = EvergreenSerializer(many=True, read_only=True)


class NextTurnDestinationSerializer(serializers.Serializer):
    account = serializers.IntegerField(source="account.pk")
    handle = serializers.CharField(source="account.handle")
    platform = serializers.CharField(source="rendition.platform")
    text = serializers.CharField(help_text="The first part's text it would get.")
    refused = serializers.BooleanField(
        help_text="The platform would refuse it as a repeat: it is left out of the turn."
    )
    caution = serializers.CharField(help_text="The platform's partial rule on repeats, if any.")


class NextTurnSerializer(serializers.Serializer):
    """GET /evergreen/{id}/next: the next turn as it would be made now."""

    number = serializers.IntegerField()
    text = serializers.CharField()
    destinations = NextTurnDestinationSerializer(many=True)
