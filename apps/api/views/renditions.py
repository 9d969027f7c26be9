"""/renditions: one destination of a publication, and settling an ambiguous outcome."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors
from apps.api.serializers.renditions import RenditionResolveSerializer, RenditionSerializer
from apps.publishing.services import rendition_resolve
from apps.renditions.models import Rendition


class RenditionViewSet(WorkspaceViewSet):
    """Renditions of the token's workspace."""

    queryset = Rendition.objects.select_related("social_account", "publication")
    serializer_class = RenditionSerializer
    required_scopes = {"retrieve": "read", "resolve": "publish"}

    def get_queryset(self) -> QuerySet:
        return super().get_queryset().prefetch_related("segments__media", "delivery_attempts")

    @extend_schema(
        summary="One destination of a publication",
        responses={200: RenditionSerializer, **errors(404)},
    )
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self.render(self.get_object())

    @extend_schema(
        summary="Resolve an ambiguous outcome",
        description="For a destination whose outcome is unknown (the request may have "
        "reached the platform): after checking the platform, say it was `published` (give "
        "the post's URL or id), `failed` (there is no post; leave it failed) or `retry` "
        "(there is no post; send it again). Recorded as a delivery attempt.",
        request=RenditionResolveSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: OpenApiResponse(RenditionSerializer, "The rendition after the resolution."),
            **post_errors(404, codes={409: ["NOT_AMBIGUOUS", "MANUAL_RETRY_LIMIT"]}),
        },
    )
    @action(detail=True, methods=["post"])
    def resolve(self, request: ApiRequest, pk: str) -> Response:
        rendition = self.get_object()
        data = self.parse(RenditionResolveSerializer)
        rendition = rendition_resolve(rendition=rendition, user=self.token.created_by, **data)
        return self.render(self.get_queryset().get(pk=rendition.pk))
