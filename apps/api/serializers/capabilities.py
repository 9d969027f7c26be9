"""The capability catalog as GET /capabilities shows it (schema only: the catalog renders
itself with ``PlatformCapabilities.as_dict``)."""

from __future__ import annotations

from rest_framework import serializers

from apps.providers.catalog import Readiness


class PlatformValidationSerializer(serializers.Serializer):
    passed_at = serializers.DateTimeField()
    api_version = serializers.CharField()
    steps_passed = serializers.ListField(child=serializers.CharField())


class PlatformCapabilitiesSerializer(serializers.Serializer):
    platform = serializers.CharField()
    readiness = serializers.ChoiceField(
        choices=[r.value for r in Readiness],
        help_text="supported while a passing validation against the live platform younger "
        "than 90 days is recorded, else experimental.",
    )
    validated_at = serializers.CharField(allow_null=True)
    validated_what = serializers.CharField(allow_null=True)
    validation = PlatformValidationSerializer(
        allow_null=True,
        help_text="The live validation that makes the platform supported; null without one.",
    )
    text = serializers.DictField(help_text="Limit, unit, how text is counted, link rules.")
    media = serializers.DictField(help_text="Accepted kinds, counts, sizes and durations.")
    threads = serializers.BooleanField()
    thread_mode = serializers.CharField()
    alt_text = serializers.DictField()
    settings = serializers.ListField(child=serializers.DictField())
    idempotency = serializers.CharField()
    retry_safe_publish = serializers.BooleanField()
    async_publish = serializers.BooleanField()
    daily_cap = serializers.IntegerField(allow_null=True)
    delete = serializers.DictField(
        help_text="Whether a post made here can be deleted through the API (supported), else "
        "why_not: platform (its API deletes nothing of the kind) or not_built; detail names "
        "the endpoint or says what to do instead."
    )


class CapabilitiesSerializer(serializers.Serializer):
    platforms = PlatformCapabilitiesSerializer(many=True)
