"""/evergreen: posts the queue shares again into its free slots; their turns; pause,
resume, skip a turn, stop."""

from __future__ import annotations

from collections.abc import Callable

from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors, replayed
from apps.api.serializers.evergreen import (
    EvergreenCreateSerializer,
    EvergreenMarkedSerializer,
    EvergreenSerializer,
    EvergreenSettingsSerializer,
    EvergreenShareSerializer,
    NextTurnSerializer,
)
from apps.common.errors import NotFound
from apps.planning.evergreen import (
    EvergreenSettings,
    evergreen_mark,
    evergreen_pause,
    evergreen_resume,
    evergreen_skip,
    evergreen_stop,
    evergreen_update,
)
from apps.planning.models import EvergreenPost
from apps.planning.recycling import next_turn
from apps.publications.models import Publication

# Re-shares are scheduled publications: changing them needs what scheduling needs.
CHANGE = ("write", "publish")


def _settings(data: dict, current: EvergreenPost | None = None) -> EvergreenSettings:
    """The settings given, the others as they are (or the defaults)."""
    base = EvergreenSettings()
    if current is not None:
        base = EvergreenSettings(
            every_days=current.every_days,
            min_gap_days=current.min_gap_days,
            max_shares=current.max_shares,
            ends_on=current.ends_on,
            variations=tuple(current.variations),
        )
    return EvergreenSettings(
        every_days=data.get("every_days", base.every_days),
        min_gap_days=data.get("min_gap_days", base.min_gap_days),
        max_shares=data.get("max_shares", base.max_shares),
        ends_on=data.get("ends_on", base.ends_on),
        variations=tuple(data.get("variations", base.variations)),
    )


class EvergreenViewSet(WorkspaceViewSet):
    """Evergreen posts of the token's workspace, newest first."""

    queryset = EvergreenPost.objects.order_by("-id")
    serializer_class = EvergreenSerializer
    required_scopes = {
        "list": "read",
        "retrieve": "read",
        "shares": "read",
        "next": "read",
        "create": CHANGE,
        "partial_update": CHANGE,
        "pause": CHANGE,
        "resume": CHANGE,
        "skip": CHANGE,
        "stop": CHANGE,
    }

    @extend_schema(
        summary="List evergreen posts",
        responses={200: EvergreenSerializer(many=True), **errors(400)},
    )
    def list(self, request: ApiRequest) -> Response:
        return self.render_page(self.get_queryset())

    @extend_schema(
        summary="Mark posts evergreen",
        description="Each post is shared again every `every_days` into the next posting "
        "slot free for its destinations (never on an account within `min_gap_days` of its "
        "last time there), each time a new publication with the reference key "
        "evergreen-<id>-<n>, made by a job within minutes and up to a week ahead. A post "
        "already evergreen keeps its settings. Answers the evergreen posts (`results`), in the "
        "order of the publications.",
        request=EvergreenCreateSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            201: EvergreenMarkedSerializer,
            **replayed(EvergreenMarkedSerializer),
            **post_errors(404),
        },
    )
    def create(self, request: ApiRequest) -> Response:
        data = dict(self.parse(EvergreenCreateSerializer))
        ids = data.pop("publications")
        found = {
            p.pk: p for p in Publication.objects.for_workspace(self.workspace).filter(pk__in=ids)
        }
        missing = [pk for pk in ids if pk not in found]
        if missing:
            raise NotFound(
                "Some publications are not in this workspace.", details={"publications": missing}
            )
        marked = evergreen_mark(
            workspace=self.workspace,
            publications=list(dict.fromkeys(found[pk] for pk in ids)),
            actor=self.token.created_by,
            settings=_settings(data),
        )
        return Response(EvergreenMarkedSerializer({"results": marked}).data, status=201)

    @extend_schema(summary="An evergreen post", responses={200: EvergreenSerializer, **errors(404)})
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self.render(self.get_object())

    @extend_schema(
        summary="Change an evergreen post's settings",
        description="Its next turn is worked out again at once; a re-share already made "
        "keeps its slot.",
        request=EvergreenSettingsSerializer,
        responses={
            200: EvergreenSerializer,
            **errors(400, 404, 409, codes={409: ["EVERGREEN_ENDED"]}),
        },
    )
    def partial_update(self, request: ApiRequest, pk: str) -> Response:
        row = self.get_object()
        data = self.parse(EvergreenSettingsSerializer)
        return self.render(evergreen_update(evergreen=row, settings=_settings(data, row)))

    @extend_schema(
        summary="An evergreen post's turns",
        description="The latest 100, newest first: made (with the publication), skipped or "
        "withdrawn, and the destinations left out of each.",
        responses={200: EvergreenShareSerializer(many=True), **errors(404)},
    )
    @action(detail=True, methods=["get"], pagination_class=None)
    def shares(self, request: ApiRequest, pk: str) -> Response:
        row = self.get_object()
        turns = row.shares.order_by("-number")[:100]
        return Response(EvergreenShareSerializer(turns, many=True).data)

    @extend_schema(
        summary="An evergreen post's next turn",
        description="Its number, the first part's text, and per destination the text it "
        "would get and whether the platform would refuse it as a repeat (X; LinkedIn "
        "within two days), so it is left out: add variations to send it.",
        responses={200: NextTurnSerializer, **errors(404)},
    )
    @action(detail=True, methods=["get"], pagination_class=None)
    def next(self, request: ApiRequest, pk: str) -> Response:
        return Response(NextTurnSerializer(next_turn(self.get_object())).data)

    def _act(self, service: Callable[..., object]) -> Response:
        row = self.get_object()
        service(evergreen=row)
        row.refresh_from_db()
        return self.render(row)

    @extend_schema(
        summary="Pause an evergreen post",
        description="No turn until resumed; the re-share waiting (made, not gone out) is "
        "withdrawn, its publication cancelled.",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: EvergreenSerializer, **post_errors(404, codes={409: ["NOT_ACTIVE"]})},
    )
    @action(detail=True, methods=["post"])
    def pause(self, request: ApiRequest, pk: str) -> Response:
        return self._act(evergreen_pause)

    @extend_schema(
        summary="Resume a paused evergreen post",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: EvergreenSerializer, **post_errors(404, codes={409: ["NOT_PAUSED"]})},
    )
    @action(detail=True, methods=["post"])
    def resume(self, request: ApiRequest, pk: str) -> Response:
        return self._act(evergreen_resume)

    @extend_schema(
        summary="Skip an evergreen post's next turn",
        description="The re-share waiting is cancelled, or the turn due next is recorded "
        "skipped; the cadence goes on from it.",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: EvergreenSerializer, **post_errors(404, codes={409: ["NOT_ACTIVE"]})},
    )
    @action(detail=True, methods=["post"])
    def skip(self, request: ApiRequest, pk: str) -> Response:
        return self._act(evergreen_skip)

    @extend_schema(
        summary="Stop an evergreen post",
        description="For good; the re-share waiting is withdrawn. What went out stays.",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: EvergreenSerializer, **post_errors(404)},
    )
    @action(detail=True, methods=["post"])
    def stop(self, request: ApiRequest, pk: str) -> Response:
        return self._act(evergreen_stop)
