"""Client links (the approval portal) of the caller's workspace."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.api.serializers.base import IdField, StrictSerializer, TextField
from apps.approvals.models import PortalLink
from apps.approvals.portal import MAX_PUBLICATIONS


class PortalLinkSerializer(serializers.ModelSerializer):
    """A link as listed: never its address, which is shown once."""

    publications = serializers.PrimaryKeyRelatedField(
        many=True,
        read_only=True,
        help_text="The posts it shows; empty: every post in review (within the period).",
    )
    created_by = serializers.SlugRelatedField(slug_field="email", read_only=True)

    class Meta:
        model = PortalLink
        fields = [
            "id",
            "label",
            "publications",
            "period_start",
            "period_end",
            "expires_at",
            "created_by",
            "created_at",
            "last_used_at",
            "revoked_at",
        ]


class PortalLinkCreatedSerializer(PortalLinkSerializer):
    """A new link with its address: shown in this response only, stored nowhere."""

    url = serializers.SerializerMethodField(help_text="The link to send to the client.")

    class Meta(PortalLinkSerializer.Meta):
        fields = [*PortalLinkSerializer.Meta.fields, "url"]

    @extend_schema_field(serializers.URLField())
    def get_url(self, link: PortalLink) -> str:
        return self.context["url"]


class PortalLinkCreateSerializer(StrictSerializer):
    """POST /portal-links."""

    label = TextField(max_length=100, help_text="Who the link is for.")
    expires_at = serializers.DateTimeField(help_text="At most 90 days from now.")
    publications = serializers.ListField(
        child=IdField(), max_length=MAX_PUBLICATIONS, required=False, default=list
    )
    period_start = serializers.DateTimeField(required=False, allow_null=True, default=None)
    period_end = serializers.DateTimeField(required=False, allow_null=True, default=None)
