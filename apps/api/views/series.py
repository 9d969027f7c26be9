"""/series: recurring series of the workspace, their preview, pause and resume."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors, replayed
from apps.api.serializers.series import (
    OccurrenceSerializer,
    PreviewLimitSerializer,
    SchedulePreviewSerializer,
    SeriesCreateSerializer,
    SeriesSerializer,
    SeriesStopSerializer,
    SeriesUpdateSerializer,
)
from apps.series.models import Series
from apps.series.rules import PreviewItem, schedule_preview, series_preview
from apps.series.services import (
    series_create,
    series_delete,
    series_end,
    series_pause,
    series_resume,
    series_update,
)

SCHEDULE_CODES = [
    "INVALID_RRULE",
    "INVALID_DATETIME",
    "LOCAL_TIME_HAS_OFFSET",
    "INVALID_TIMEZONE",
    "DTSTART_TOO_OLD",
    "RULE_TOO_COSTLY",
]
# A series makes scheduled publications: it needs what scheduling one needs.
CHANGE = ("write", "publish")


class SeriesViewSet(WorkspaceViewSet):
    """Series of the token's workspace, newest first."""

    queryset = Series.objects.order_by("-id")
    serializer_class = SeriesSerializer
    required_scopes = {
        "list": "read",
        "retrieve": "read",
        "preview": "read",
        "preview_schedule": "read",
        "create": CHANGE,
        "partial_update": CHANGE,
        "destroy": CHANGE,
        "pause": CHANGE,
        "resume": CHANGE,
        "end": CHANGE,
    }

    def allowed_query_params(self) -> set[str]:
        if self.action == "preview":
            return set(PreviewLimitSerializer().fields)
        return super().allowed_query_params()

    @extend_schema(
        summary="List series", responses={200: SeriesSerializer(many=True), **errors(400)}
    )
    def list(self, request: ApiRequest) -> Response:
        return self.render_page(self.get_queryset())

    @extend_schema(
        summary="Create a series",
        description="Its occurrences from now on become scheduled publications over its "
        "horizon (by a job, within moments), each with the reference key "
        "series-<id>-<local time>. Wall-clock times keep across DST changes; a nonexistent "
        "one moves forward by the gap, an ambiguous one takes its first occurrence.",
        request=SeriesCreateSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            201: SeriesSerializer,
            **replayed(SeriesSerializer),
            **post_errors(404, codes={400: SCHEDULE_CODES, 403: ["APPROVAL_REQUIRED"]}),
        },
    )
    def create(self, request: ApiRequest) -> Response:
        data = self.parse(SeriesCreateSerializer)
        series = series_create(workspace=self.workspace, created_by=self.token.created_by, **data)
        return self.render(series, status=201)

    @extend_schema(summary="A series", responses={200: SeriesSerializer, **errors(404)})
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self.render(self.get_object())

    @extend_schema(
        summary="Edit a series",
        description="Occurrences not materialized yet follow the edit. Those already made "
        "into publications are left, or replaced with `apply_to_materialized: true` (their "
        "publications are cancelled, never one that started, and made again).",
        request=SeriesUpdateSerializer,
        responses={
            200: SeriesSerializer,
            **errors(
                400,
                404,
                409,
                codes={400: SCHEDULE_CODES, 403: ["APPROVAL_REQUIRED"], 409: ["SERIES_ENDED"]},
            ),
        },
    )
    def partial_update(self, request: ApiRequest, pk: str) -> Response:
        series = self.get_object()
        data = dict(self.parse(SeriesUpdateSerializer))
        apply = data.pop("apply_to_materialized", False)
        return self.render(
            series_update(
                series=series,
                apply_to_materialized=apply,
                actor=self.token.created_by,
                **data,
            )
        )

    @extend_schema(
        summary="Delete a series",
        description="Its future publications that have not started are cancelled; what "
        "went out stays.",
        responses={204: None, **errors(404)},
    )
    def destroy(self, request: ApiRequest, pk: str) -> Response:
        series_delete(series=self.get_object())
        return Response(status=204)

    @extend_schema(
        summary="The next occurrences",
        description="Local and UTC times of the next occurrences, with what became of "
        "those already materialized.",
        parameters=[OpenApiParameter("limit", int, required=False, description="1 to 100")],
        responses={
            200: OccurrenceSerializer(many=True),
            **errors(400, 404, codes={400: ["RULE_TOO_COSTLY"]}),
        },
    )
    @action(detail=True, methods=["get"], pagination_class=None)
    def preview(self, request: ApiRequest, pk: str) -> Response:
        series = self.get_object()
        limit = self.parse(PreviewLimitSerializer, data=request.query_params)["limit"]
        items = series_preview(series=series, limit=limit)
        return Response(OccurrenceSerializer(items, many=True).data)

    @extend_schema(
        summary="Preview a schedule",
        description="The next occurrences of a rule that is not saved yet.",
        request=SchedulePreviewSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: OccurrenceSerializer(many=True),
            **post_errors(codes={400: SCHEDULE_CODES}),
        },
    )
    @action(detail=False, methods=["post"], url_path="preview")
    def preview_schedule(self, request: ApiRequest) -> Response:
        data = self.parse(SchedulePreviewSerializer)
        found = schedule_preview(
            rrule=data["rrule"],
            dtstart=data["dtstart"],
            timezone_name=data.get("timezone") or self.workspace.default_timezone,
            count=data.get("count"),
            until=data.get("until"),
            limit=data["limit"],
        )
        items = [PreviewItem(o.local_iso, o.utc, None, None) for o in found]
        return Response(OccurrenceSerializer(items, many=True).data)

    def _stop(self, request: ApiRequest, pk: str, service) -> Response:
        series = self.get_object()
        data = self.parse(SeriesStopSerializer)
        return self.render(service(series=series, cancel_future=data["cancel_future"]))

    @extend_schema(
        summary="Pause a series",
        description="Stops materializing. Publications already made still go out unless "
        "`cancel_future`. Occurrences during the pause are not made up on resume.",
        request=SeriesStopSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: SeriesSerializer, **post_errors(404, codes={409: ["SERIES_NOT_ACTIVE"]})},
    )
    @action(detail=True, methods=["post"])
    def pause(self, request: ApiRequest, pk: str) -> Response:
        return self._stop(request, pk, series_pause)

    @extend_schema(
        summary="Resume a paused series",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: SeriesSerializer,
            **post_errors(404, codes={403: ["APPROVAL_REQUIRED"], 409: ["SERIES_NOT_PAUSED"]}),
        },
    )
    @action(detail=True, methods=["post"])
    def resume(self, request: ApiRequest, pk: str) -> Response:
        return self.render(series_resume(series=self.get_object(), actor=self.token.created_by))

    @extend_schema(
        summary="End a series",
        description="For good; `cancel_future` also cancels its future publications.",
        request=SeriesStopSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: SeriesSerializer, **post_errors(404)},
    )
    @action(detail=True, methods=["post"])
    def end(self, request: ApiRequest, pk: str) -> Response:
        return self._stop(request, pk, series_end)
