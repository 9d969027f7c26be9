"""/portal-links: the workspace's client links (the approval portal). Making and revoking
one needs the admin scope and a token made by someone who may approve posts: the link's
decisions are made with that person's powers (``apps.approvals.portal``)."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors, replayed
from apps.api.serializers.portal_links import (
    PortalLinkCreatedSerializer,
    PortalLinkCreateSerializer,
    PortalLinkSerializer,
)
from apps.approvals.models import PortalLink
from apps.approvals.portal import portal_link_create, portal_link_revoke, portal_url


class PortalLinkViewSet(WorkspaceViewSet):
    """Links through which a client without an account reviews posts, newest first."""

    queryset = PortalLink.objects.order_by("-id")
    serializer_class = PortalLinkSerializer
    required_scopes = {"list": "read", "retrieve": "read", "create": "admin", "destroy": "admin"}
    # The address is shown once: never kept in a stored Idempotency-Key replay.
    idempotency_redacted_fields = frozenset({"url"})

    def get_queryset(self) -> QuerySet:
        return super().get_queryset().select_related("created_by").prefetch_related("publications")

    @extend_schema(
        summary="List client links",
        responses={200: PortalLinkSerializer(many=True), **errors(400)},
    )
    def list(self, request: ApiRequest) -> Response:
        return self.render_page(self.get_queryset())

    @extend_schema(
        summary="Make a client link",
        description="A link that lets someone without an account see the workspace's posts "
        "in review (only `publications` when given; only those planned within the period "
        "when given) and approve them or ask for changes. The address is in this response "
        "only. Needs a token made by a workspace admin (403 PERMISSION_DENIED otherwise).",
        request=PortalLinkCreateSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            201: PortalLinkCreatedSerializer,
            **replayed(PortalLinkCreatedSerializer),
            **post_errors(codes={403: ["PERMISSION_DENIED"], 404: ["NOT_FOUND"]}),
        },
    )
    def create(self, request: ApiRequest) -> Response:
        data = self.parse(PortalLinkCreateSerializer)
        link, token = portal_link_create(
            workspace=self.workspace, actor=self.token.created_by, **data
        )
        link = self.get_queryset().get(pk=link.pk)
        context = {**self.get_serializer_context(), "url": portal_url(token)}
        return Response(PortalLinkCreatedSerializer(link, context=context).data, status=201)

    @extend_schema(summary="A client link", responses={200: PortalLinkSerializer, **errors(404)})
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self.render(self.get_object())

    @extend_schema(
        summary="Revoke a client link",
        description="It stops opening at once. Answers the link as it is now.",
        responses={200: PortalLinkSerializer, **errors(404)},
    )
    def destroy(self, request: ApiRequest, pk: str) -> Response:
        link = portal_link_revoke(link=self.get_object(), actor=self.token.created_by)
        return self.render(self.get_queryset().get(pk=link.pk))
