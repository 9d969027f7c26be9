"""/publications: compose, schedule, edit, cancel and retry; validate without creating."""

from __future__ import annotations

from collections.abc import Mapping

from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.permissions import Scopes
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors, replayed
from apps.api.serializers.publication_rows import publication_representations
from apps.api.serializers.publications import (
    PublicationCreateSerializer,
    PublicationFilterSerializer,
    PublicationSerializer,
    PublicationUpdateSerializer,
    ValidationReportSerializer,
)
from apps.api.validation import publication_validate
from apps.publications.models import Publication
from apps.publishing.selectors import (
    publication_detail,
    with_publication_read,
    with_publication_rows,
)
from apps.publishing.services import (
    publication_cancel,
    publication_create,
    publication_retry,
    publication_update,
)

P = Publication.Status

CREATE_CODES = {
    400: [
        "SCHEDULE_IN_PAST",
        "MISSING_UTC_OFFSET",
        "INVALID_TIMEZONE",
        "INVALID_DATETIME",
        "SCHEDULE_CONFLICT",
        "LOCAL_TIME_HAS_OFFSET",
        "PUBLICATION_TOO_LARGE",
        "FIRST_COMMENT_TOO_LONG",
    ],
    409: ["REFERENCE_KEY_EXISTS", "MONTHLY_QUOTA_EXCEEDED", "DAILY_CAP_EXCEEDED"],
}
EDIT_CODES = {
    **CREATE_CODES,
    409: [
        *CREATE_CODES[409],
        "REVISION_CONFLICT",
        "PUBLICATION_CANCELLED",
        "RENDITION_LOCKED",
        "PUBLICATION_STARTED",
    ],
}


def _body(request: ApiRequest) -> Mapping:
    return request.data if isinstance(request.data, Mapping) else {}


def _create_scopes(request: ApiRequest) -> Scopes:
    """Drafts need write; creating it scheduled needs publish too."""
    if _body(request).get("status") == P.SCHEDULED:
        return ("write", "publish")
    return "write"


def _change_scopes(request: ApiRequest, publication: Publication) -> Scopes:
    """Editing or cancelling a draft needs write. Scheduling it, or changing or cancelling
    a publication that is scheduled (or went out), needs publish too: it changes what
    goes out, or when."""
    if _body(request).get("status") == P.SCHEDULED or publication.status != P.DRAFT:
        return ("write", "publish")
    return "write"


class PublicationViewSet(WorkspaceViewSet):
    """Publications of the token's workspace, each with its renditions (one per
    destination) and their delivery attempts."""

    queryset = Publication.objects.all()
    serializer_class = PublicationSerializer
    filter_serializer = PublicationFilterSerializer
    required_scopes = {
        "list": "read",
        "retrieve": "read",
        "create": _create_scopes,
        "validate": "read",
        "partial_update": "write",
        "destroy": "write",
        "retry": "publish",
    }
    required_object_scopes = {"partial_update": _change_scopes, "destroy": _change_scopes}

    def get_queryset(self) -> QuerySet:
        return with_publication_read(super().get_queryset())

    def _fresh(self, publication: Publication) -> Publication:
        """The publication re-read with everything the response shows."""
        return self.get_queryset().get(pk=publication.pk)

    @extend_schema(
        summary="List publications",
        parameters=[PublicationFilterSerializer],
        responses={
            200: PublicationSerializer(many=True),
            **errors(400, codes={400: ["INVALID_CURSOR"]}),
        },
    )
    def list(self, request: ApiRequest) -> Response:
        filters = self.parse(PublicationFilterSerializer, request.query_params.dict())
        queryset = super().get_queryset()
        if "status" in filters:
            queryset = queryset.filter(status__in=filters["status"])
        if "scheduled_after" in filters:
            queryset = queryset.filter(scheduled_at__gte=filters["scheduled_after"])
        if "scheduled_before" in filters:
            queryset = queryset.filter(scheduled_at__lt=filters["scheduled_before"])
        if "reference_key" in filters:
            queryset = queryset.filter(reference_key=filters["reference_key"])
        # Written from each publication's JSON row as PublicationSerializer writes it,
        # without loading the rows into model instances (most of a page's time).
        page = self.paginate_queryset(with_publication_rows(queryset))
        return self.get_paginated_response(publication_representations(page or []))

    @extend_schema(
        summary="Create a publication",
        description='A draft by default; `"status": "scheduled"` schedules it (publish '
        "scope). Give `segments` (or a top-level `text` for one), the `destinations` "
        "(account ids, each with optional own segments, settings and time), and a time "
        "(`scheduled_at`, or `local_time` with `timezone`; none with scheduled means now).",
        request=PublicationCreateSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            201: PublicationSerializer,
            **replayed(PublicationSerializer),
            **post_errors(404, codes=CREATE_CODES),
        },
    )
    def create(self, request: ApiRequest) -> Response:
        data = self.parse(PublicationCreateSerializer)
        publication = publication_create(
            workspace=self.workspace, author=self.token.created_by, keep_rows=True, **data
        )
        # Shown from the rows just written (their relations are cached), not read back.
        return self.render(publication, status=201)

    @extend_schema(
        summary="A publication and what happened per destination",
        responses={200: PublicationSerializer, **errors(404)},
    )
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        publication = publication_detail(workspace_id=self.workspace.pk, pk=int(pk))
        if publication is None:
            raise Http404
        return self.render(publication)

    @extend_schema(
        summary="Edit a publication",
        description="Send the `revision` you read and the fields to change. A stale "
        "revision is 409 REVISION_CONFLICT (reload and apply again). Moving the time moves "
        "every destination that follows it; destinations that went out cannot change.",
        request=PublicationUpdateSerializer,
        responses={200: PublicationSerializer, **errors(400, 404, 409, 413, 415, codes=EDIT_CODES)},
    )
    def partial_update(self, request: ApiRequest, pk: str) -> Response:
        publication = self.get_object()
        data = self.parse(PublicationUpdateSerializer)
        revision = data.pop("revision")
        publication = publication_update(
            publication=publication,
            expected_revision=revision,
            actor=self.token.created_by,
            **data,
        )
        return self.render(self._fresh(publication))

    @extend_schema(
        summary="Cancel a publication",
        description="Cancels every destination that has not gone out. Published "
        "destinations stay on their platforms; ones in flight finish; an ambiguous one "
        "waits to be resolved. Answers the publication as it is now.",
        responses={200: PublicationSerializer, **errors(404)},
    )
    def destroy(self, request: ApiRequest, pk: str) -> Response:
        publication = publication_cancel(publication=self.get_object())
        return self.render(self._fresh(publication))

    @extend_schema(
        summary="Retry the failed destinations",
        description="Sends every failed, non-ambiguous destination again now (at most 6 "
        "manual retries each). Published destinations are never sent again.",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: OpenApiResponse(PublicationSerializer, "The publication after the retry."),
            **post_errors(
                404, codes={409: ["NOT_RETRYABLE", "MANUAL_RETRY_LIMIT", "RENDITION_CHANGED"]}
            ),
        },
    )
    @action(detail=True, methods=["post"])
    def retry(self, request: ApiRequest, pk: str) -> Response:
        publication = self.get_object()
        publication_retry(publication=publication)
        return self.render(self._fresh(publication))

    @extend_schema(
        summary="Validate a publication without creating it",
        description="Runs every check of POST /publications (and, for "
        '`"status": "scheduled"`, of scheduling) and of the destinations\' platforms, and '
        "answers each problem with its field path and machine code. Nothing is created. "
        "A body that does not fit the schema (wrong types, unknown fields) is a 400, as it "
        "would be for POST /publications.",
        request=PublicationCreateSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: ValidationReportSerializer, **post_errors()},
    )
    @action(detail=False, methods=["post"])
    def validate(self, request: ApiRequest) -> Response:
        data = self.parse(PublicationCreateSerializer)
        problems = publication_validate(token=self.token, data=data)
        return Response({"valid": not problems, "problems": problems})
