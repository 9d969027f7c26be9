"""/renditions/{id}/metrics and /analytics: metrics read from the platforms over time."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.models import SocialAccount, Workspace
from apps.analytics import selectors
from apps.api.base import WorkspaceAPIView
from apps.api.schema import errors
from apps.api.serializers.analytics import (
    AnalyticsQuerySerializer,
    AnalyticsSerializer,
    RenditionMetricsSerializer,
)
from apps.api.serializers.base import MAX_ID
from apps.common.errors import NotFound
from apps.renditions.models import Rendition


class RenditionMetricsView(WorkspaceAPIView):
    """One destination's metrics over time."""

    required_scopes = {"GET": "read"}

    @extend_schema(
        summary="A destination's metrics over time",
        description="The latest counts, every sample read so far (oldest first), and per "
        "metric whether the platform offers it and why not: a metric that is not offered "
        "is null with its reason, never 0. Reads come often in a post's first day, daily "
        "in its first week, weekly up to 90 days, then stop (docs/analytics.md).",
        responses={200: RenditionMetricsSerializer, **errors(404)},
    )
    def get(self, request: Request, pk: str) -> Response:
        return Response(rendition_metrics_shown(self.request.auth.workspace, int(pk)))


# As AnalyticsQuerySerializer reads `account` (repeated).
ACCOUNT_IDS = {
    "type": "array",
    "items": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
    "maxItems": 100,
}


class AnalyticsView(WorkspaceAPIView):
    """A workspace's period: totals, top posts, followers, posting times."""

    required_scopes = {"GET": "read"}

    def allowed_query_params(self) -> set[str]:
        return {"from", "to", "account"}

    @extend_schema(
        summary="Analytics of a period",
        description="For the posts published between `from` and `to` (whole days in the "
        "workspace's zone; default the last 30 days, at most 366): the totals of their "
        "latest counts, the top posts by engagement, followers over time per account, and "
        "engagement by weekday and hour of posting (the heat-map) with the best times.",
        parameters=[
            OpenApiParameter("from", OpenApiTypes.DATE, required=False, description="YYYY-MM-DD"),
            OpenApiParameter("to", OpenApiTypes.DATE, required=False, description="YYYY-MM-DD"),
            OpenApiParameter("account", ACCOUNT_IDS, required=False, explode=True),
        ],
        responses={200: AnalyticsSerializer, **errors(400, 404)},
    )
    def get(self, request: Request) -> Response:
        query: dict = {
            key: request.query_params[key] for key in ("from", "to") if key in request.query_params
        }
        accounts = request.query_params.getlist("account")
        if accounts:
            query["account"] = accounts
        return Response(analytics_shown(self.request.auth.workspace, query))


def rendition_metrics_shown(workspace: Workspace, pk: int) -> dict:
    """What GET /renditions/{id}/metrics answers (the MCP tool answers the same)."""
    rendition = (
        Rendition.objects.for_workspace(workspace)
        .select_related("social_account")
        .filter(pk=pk)
        .first()
    )
    if rendition is None:
        raise NotFound("No such rendition in this workspace.", details={"rendition_id": pk})
    return RenditionMetricsSerializer(selectors.rendition_metrics(rendition)).data


def analytics_shown(workspace: Workspace, query: dict) -> dict:
    """What GET /analytics answers for `query` ({from?, to?, account?}); a bad query
    raises DRF's ValidationError (the 400 envelope)."""
    serializer = AnalyticsQuerySerializer(data=query)
    serializer.is_valid(raise_exception=True)
    data = serializer.validated_data
    asked = set(data.get("account") or [])
    known = set(
        SocialAccount.objects.for_workspace(workspace)
        .filter(pk__in=asked)
        .values_list("pk", flat=True)
    )
    if asked - known:
        # Another workspace's account is not found, as everywhere in the API.
        raise NotFound(
            "No such account in this workspace.", details={"account": sorted(asked - known)}
        )
    today = timezone.now().astimezone(selectors.zone_of(workspace)).date()
    period = selectors.period_of(workspace, data.get("from"), data.get("to"), today)
    result = selectors.workspace_analytics(workspace, period=period, accounts=data.get("account"))
    return AnalyticsSerializer(result).data
