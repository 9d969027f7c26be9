"""/publications/bulk: many publications in one request, one outcome per item."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.errors import validation_details
from apps.api.permissions import Scopes
from apps.api.schema import IDEMPOTENCY_KEY, post_errors, replayed
from apps.api.serializers.bulk import (
    BulkCreateSerializer,
    BulkItemSerializer,
    BulkReportSerializer,
)
from apps.api.serializers.publications import PublicationSerializer
from apps.common.envelope import envelope
from apps.common.errors import DomainError, ValidationFailed
from apps.publications.models import Publication
from apps.publishing.selectors import with_publication_read
from apps.publishing.services.bulk import MAX_BULK_ITEMS, publications_bulk_create
from apps.publishing.services.create_pipeline import Outcome, OutcomeStatus


def _bulk_scopes(request: ApiRequest) -> Scopes:
    """Write; publish too when any item asks to be scheduled (as for a single create)."""
    body = request.data if isinstance(request.data, Mapping) else {}
    items = body.get("items")
    if isinstance(items, list) and any(
        isinstance(item, Mapping) and item.get("status") == Publication.Status.SCHEDULED
        for item in items
    ):
        return ("write", "publish")
    return "write"


def _raw_key(item: object) -> str | None:
    key = item.get("reference_key") if isinstance(item, Mapping) else None
    return key if isinstance(key, str) else None


def _printable(value: Any) -> Any:
    """value with NUL characters replaced: an item's error echoes the field names it was
    sent, and a stored (Idempotency-Key) answer is jsonb, which refuses NUL."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_printable(v) for v in value]
    return value


def _error(exc: DomainError) -> dict:
    return _printable(envelope(exc.code, exc.message, exc.details)["error"])


class PublicationBulkViewSet(WorkspaceViewSet):
    """Creates up to 500 publications of the token's workspace in one request."""

    queryset = Publication.objects.all()
    serializer_class = PublicationSerializer
    required_scopes = {"create": _bulk_scopes}

    def get_queryset(self) -> QuerySet:
        return with_publication_read(super().get_queryset())

    @extend_schema(
        summary="Create many publications",
        description=f"Up to {MAX_BULK_ITEMS} items, each the body of POST /publications. "
        "Every item is checked on its own, by the same rules as POST /publications "
        "(validation, accounts, the approval rule, monthly quota and daily caps, counting "
        "the items accepted before it in the same request): the answer "
        'lists each item in order with `"status"` created, exists (its `reference_key` '
        "was already used: the existing publication, nothing created) or error (the error "
        "as POST /publications would answer it). More items than the limit is a 400 "
        "TOO_MANY_ITEMS and nothing is created, as is an item that is not an object. "
        "Scheduled items need the publish scope.",
        request=BulkCreateSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: BulkReportSerializer,
            **replayed(BulkReportSerializer),
            **post_errors(codes={400: ["TOO_MANY_ITEMS"]}),
        },
    )
    def create(self, request: ApiRequest) -> Response:
        raw_items = request.data.get("items") if isinstance(request.data, Mapping) else None
        if isinstance(raw_items, list) and len(raw_items) > MAX_BULK_ITEMS:
            raise ValidationFailed(
                f"At most {MAX_BULK_ITEMS} items a request; this one has {len(raw_items)}.",
                code="TOO_MANY_ITEMS",
                details={"items": [f"At most {MAX_BULK_ITEMS} items."]},
            )
        items = self.parse(BulkCreateSerializer)["items"]

        # Each item is read by the single create's serializer; a body it refuses is that
        # item's error, and only the valid ones go on to the service.
        # One serializer reads them all, so its fields are built once, not once per item
        # (that cost more than creating the items); each item is an object (the body's
        # serializer checked it), so a refusal is the same field-by-field detail.
        rejected: dict[int, DomainError] = {}
        valid: list[tuple[int, dict]] = []
        reader = BulkItemSerializer(context=self.get_serializer_context())
        for index, item in enumerate(items):
            try:
                data = reader.run_validation(item)
            except ValidationError as exc:
                code, details = validation_details(exc.detail)
                rejected[index] = ValidationFailed(
                    "The publication is not valid.", code=code, details=details
                )
                continue
            valid.append((index, dict(data)))

        done = publications_bulk_create(
            workspace=self.workspace,
            author=self.token.created_by,
            items=[data for _index, data in valid],
        )
        outcomes: list[Outcome] = [
            Outcome(index, _raw_key(items[index]), OutcomeStatus.ERROR, error=exc)
            for index, exc in rejected.items()
        ]
        for (index, _data), outcome in zip(valid, done, strict=True):
            outcome.index = index
            outcomes.append(outcome)
        outcomes.sort(key=lambda outcome: outcome.index)
        return Response(self._report(outcomes))

    def _report(self, outcomes: list[Outcome]) -> dict:
        ids = {o.publication.pk for o in outcomes if o.publication is not None}
        fresh = self.get_queryset().filter(pk__in=ids).order_by("pk")
        # One list serializer for all: its fields are built once, not once per item.
        shown = PublicationSerializer(fresh, many=True, context=self.get_serializer_context())
        by_pk = {row["id"]: row for row in shown.data}
        rows = []
        for outcome in outcomes:
            row: dict = {
                "index": outcome.index,
                "reference_key": outcome.reference_key,
                "status": outcome.status,
            }
            if outcome.publication is not None:
                row["publication"] = by_pk[outcome.publication.pk]
            if outcome.error is not None:
                row["error"] = _error(outcome.error)
            rows.append(row)
        counts = {status: 0 for status in (OutcomeStatus.CREATED, OutcomeStatus.EXISTS, "errors")}
        for outcome in outcomes:
            counts["errors" if outcome.status == OutcomeStatus.ERROR else outcome.status] += 1
        return {"items": rows, **counts}
