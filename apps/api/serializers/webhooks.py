"""Webhook endpoints and their delivery log."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.api.serializers.base import BooleanField, StrictSerializer, TextField
from apps.webhooks.constants import EVENT_TYPES
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint

EVENT_CHOICES = [(name, name) for name in EVENT_TYPES]


class WebhookEndpointSerializer(serializers.ModelSerializer):
    """An endpoint as listed: never its secret."""

    event_types = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_CHOICES))

    class Meta:
        model = WebhookEndpoint
        fields = [
            "id",
            "url",
            "description",
            "event_types",
            "is_active",
            "consecutive_failures",
            "failing_since",
            "last_success_at",
            "last_failure_at",
            "disabled_at",
            "disabled_reason",
            "created_at",
            "updated_at",
        ]


class WebhookEndpointSecretSerializer(WebhookEndpointSerializer):
    """An endpoint with its signing secret: shown in this response only."""

    secret = serializers.SerializerMethodField(
        help_text="whsec_… signing secret (Standard Webhooks). Shown only in this response."
    )

    previous_secret_signs_until = serializers.SerializerMethodField(
        help_text="After a rotation: until when deliveries are also signed with the secret "
        "it replaced (a second `v1,` signature), so receivers can switch within that time; "
        "null when there is no such overlap."
    )

    class Meta(WebhookEndpointSerializer.Meta):
        fields = [*WebhookEndpointSerializer.Meta.fields, "secret", "previous_secret_signs_until"]

    @extend_schema_field(serializers.CharField())
    def get_secret(self, endpoint: WebhookEndpoint) -> str:
        return self.context["secret"]

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_previous_secret_signs_until(self, endpoint: WebhookEndpoint) -> str | None:
        until = self.context.get("previous_secret_signs_until")
        return serializers.DateTimeField().to_representation(until) if until else None


class WebhookEndpointCreateSerializer(StrictSerializer):
    """POST /webhooks. event_types defaults to every event."""

    url = TextField(max_length=2000)
    event_types = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_CHOICES),
        allow_empty=False,
        max_length=len(EVENT_TYPES) * 2,
        required=False,
    )
    description = TextField(max_length=200, required=False, allow_blank=True)


class WebhookEndpointUpdateSerializer(StrictSerializer):
    """PATCH /webhooks/{id}. is_active true switches a disabled endpoint on again."""

    url = TextField(max_length=2000, required=False)
    event_types = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_CHOICES),
        allow_empty=False,
        max_length=len(EVENT_TYPES) * 2,
        required=False,
    )
    description = TextField(max_length=200, required=False, allow_blank=True)
    is_active = BooleanField(required=False)


class WebhookDeliverySerializer(serializers.ModelSerializer):
    """One event sent to the endpoint: the latest attempt's answer and timing."""

    event_id = serializers.CharField(source="event.event_id", help_text="The webhook-id header.")
    event_type = serializers.CharField(source="event.type")
    endpoint = serializers.IntegerField(source="endpoint_id")
    redelivery_of = serializers.IntegerField(source="redelivery_of_id", allow_null=True)

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "endpoint",
            "event_id",
            "event_type",
            "status",
            "attempts",
            "response_status",
            "latency_ms",
            "response_body",
            "error",
            "next_attempt_at",
            "last_attempt_at",
            "finished_at",
            "redelivery_of",
            "created_at",
        ]


class WebhookDeliveryFilterSerializer(StrictSerializer):
    status = serializers.ChoiceField(choices=WebhookDelivery.Status.choices, required=False)
