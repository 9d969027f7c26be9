"""POST /publications/bulk: the body (items, each like POST /publications) and the report
(one outcome per item, in order)."""

from __future__ import annotations

from rest_framework import serializers

from apps.api.schema import ErrorSerializer
from apps.api.serializers.base import StrictSerializer
from apps.api.serializers.publications import PublicationCreateSerializer, PublicationSerializer
from apps.publishing.services.bulk import MAX_BULK_ITEMS


class BulkItemSerializer(PublicationCreateSerializer):
    """One item: the body of POST /publications. Its `reference_key`, when already used
    in the workspace, answers the existing publication (`"status": "exists"`)."""


class BulkCreateSerializer(StrictSerializer):
    """The body. Each item is validated on its own, so a bad one is reported in its
    outcome and never blocks the others."""

    # Each item is an object of any content here: its fields are checked per item (an item
    # that is not a valid PublicationCreate is that item's error, not the request's).
    items = serializers.ListField(
        child=serializers.DictField(),
        max_length=MAX_BULK_ITEMS,
        help_text=f"Up to {MAX_BULK_ITEMS} objects, each the body of POST /publications "
        "(PublicationCreate); an item that does not fit it is reported in its outcome.",
    )


class BulkOutcomeSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="The item's position in `items` (0 first).")
    reference_key = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=["created", "exists", "error"])
    publication = PublicationSerializer(
        required=False, help_text="The new publication, or the one holding the reference_key."
    )
    error = ErrorSerializer(required=False, help_text="Why the item was not created.")


class BulkReportSerializer(serializers.Serializer):
    items = BulkOutcomeSerializer(many=True)
    created = serializers.IntegerField()
    exists = serializers.IntegerField()
    errors = serializers.IntegerField()
