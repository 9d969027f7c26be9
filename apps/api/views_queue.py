"""The queue over the API: posting slots of the workspace and of each account, and
putting a publication into the next free slot.

    GET|PUT         /queue-slots                    the workspace's default slots
    GET|PUT|DELETE  /accounts/{id}/queue-slots      an account's slots (DELETE: follow the default)
    POST            /publications/{id}/queue        schedule at the next slot free for all
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response

from apps.accounts.models import SocialAccount, Workspace
from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors
from apps.api.serializers.publications import PublicationSerializer
from apps.api.serializers.queue import (
    PublicationQueueSerializer,
    QueueSlotsReplaceSerializer,
    QueueSlotsSerializer,
)
from apps.api.views.publications import EDIT_CODES
from apps.planning.models import QueueSchedule
from apps.planning.services import publication_queue, queue_slots_replace, queue_slots_reset
from apps.planning.slots import WeeklySlots, weekly_slots
from apps.publications.models import Publication
from apps.publishing.selectors import with_publication_read

SLOT_CODES = {400: ["INVALID_TIMEZONE"]}
QUEUE_CODES = {
    400: [*EDIT_CODES[400], "NO_QUEUE_SLOTS", "NO_DESTINATIONS"],
    409: [*EDIT_CODES[409], "NOT_QUEUEABLE", "NO_COMMON_SLOT", "QUEUE_FULL"],
}


def default_slots(workspace: Workspace) -> dict:
    schedule = QueueSchedule.objects.filter(workspace=workspace, social_account=None).first()
    slots = list(schedule.slots.values_list("weekday", "time")) if schedule else []
    zone = schedule.zone_name if schedule else workspace.default_timezone
    return {
        "account": None,
        "source": "workspace" if schedule else "none",
        "timezone": zone,
        "timezone_is_workspace_default": not (schedule and schedule.timezone),
        "slots": slots,
        "description": _describe(slots, zone),
    }


def account_slots(account: SocialAccount) -> dict:
    weekly = weekly_slots(account)
    own = QueueSchedule.objects.filter(social_account=account).first()
    default = QueueSchedule.objects.filter(
        workspace_id=account.workspace_id, social_account=None
    ).first()
    in_force = own or default
    return {
        "account": account.pk,
        "source": "account" if own else ("workspace" if default else "none"),
        "timezone": weekly.zone_name,
        "timezone_is_workspace_default": not (in_force and in_force.timezone),
        "slots": list(weekly.times),
        "description": weekly.describe(),
    }


def _describe(slots: list, zone: str) -> str:
    return WeeklySlots(zone, tuple(slots), is_own=False).describe()


class WorkspaceQueueSlotsViewSet(WorkspaceViewSet):
    """The workspace's default posting slots (accounts without their own use them)."""

    queryset = QueueSchedule.objects.all()
    serializer_class = QueueSlotsSerializer
    required_scopes = {"retrieve": "read", "update": "write"}

    @extend_schema(
        summary="The workspace's default posting slots",
        responses={200: QueueSlotsSerializer, **errors()},
    )
    def retrieve(self, request: ApiRequest) -> Response:
        return self.render(default_slots(self.workspace))

    @extend_schema(
        summary="Replace the workspace's default posting slots",
        description="The slots become exactly the given list (duplicates kept once, times "
        "to the minute). Posts already queued keep their times.",
        request=QueueSlotsReplaceSerializer,
        responses={200: QueueSlotsSerializer, **errors(400, codes=SLOT_CODES)},
    )
    def update(self, request: ApiRequest) -> Response:
        data = self.parse(QueueSlotsReplaceSerializer)
        queue_slots_replace(
            workspace=self.workspace, slots=data["slots"], timezone=data["timezone"]
        )
        return self.render(default_slots(self.workspace))


class AccountQueueSlotsViewSet(WorkspaceViewSet):
    """One account's posting slots: its own, or the workspace's it follows."""

    queryset = SocialAccount.objects.select_related("workspace")
    serializer_class = QueueSlotsSerializer
    required_scopes = {"retrieve": "read", "update": "write", "destroy": "write"}

    @extend_schema(
        summary="An account's posting slots",
        description="Its own slots when it has them (`source: account`), else the "
        "workspace's default (`source: workspace`).",
        responses={200: QueueSlotsSerializer, **errors(404)},
    )
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self.render(account_slots(self.get_object()))

    @extend_schema(
        summary="Give an account its own posting slots",
        description="Replaces the account's own slots (an empty list: no slots, so nothing "
        "can be queued for it). It no longer follows the workspace's default.",
        request=QueueSlotsReplaceSerializer,
        responses={200: QueueSlotsSerializer, **errors(400, 404, codes=SLOT_CODES)},
    )
    def update(self, request: ApiRequest, pk: str) -> Response:
        account = self.get_object()
        data = self.parse(QueueSlotsReplaceSerializer)
        queue_slots_replace(
            workspace=self.workspace,
            account=account,
            slots=data["slots"],
            timezone=data["timezone"],
        )
        return self.render(account_slots(account))

    @extend_schema(
        summary="Make an account follow the workspace's slots again",
        description="Drops the account's own slots; answers the slots now in force.",
        responses={200: QueueSlotsSerializer, **errors(404)},
    )
    def destroy(self, request: ApiRequest, pk: str) -> Response:
        account = self.get_object()
        queue_slots_reset(account=account)
        return self.render(account_slots(account))


class PublicationQueueViewSet(WorkspaceViewSet):
    """Add a publication to the queue."""

    queryset = Publication.objects.all()
    serializer_class = PublicationSerializer
    required_scopes = {"queue": ("write", "publish")}

    @extend_schema(
        summary="Add a publication to the queue",
        description="Schedules the publication at the earliest posting slot free for every "
        "one of its destinations (a slot is free for an account when none of its posts is "
        "due in that minute, and its day is under the platform's daily cap). A draft is "
        "scheduled; a scheduled post moves to that slot (its own slot does not count as "
        "taken). The post keeps one time for all its destinations: destinations with a "
        "time of their own are brought back to it. `revision` is the revision the request "
        "was made against.",
        request=PublicationQueueSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: OpenApiResponse(PublicationSerializer, "The publication, scheduled."),
            **post_errors(404, codes=QUEUE_CODES),
        },
    )
    def queue(self, request: ApiRequest, pk: str) -> Response:
        publication = self.get_object()
        data = self.parse(PublicationQueueSerializer)
        publication = publication_queue(
            publication=publication,
            expected_revision=data["revision"],
            actor=self.token.created_by,
        )
        return self.render(with_publication_read(self.get_queryset()).get(pk=publication.pk))
