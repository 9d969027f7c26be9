"""Posting slots and the queue: a weekly set of (weekday, time) in a zone."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from apps.api.serializers.base import IntegerField, StrictSerializer, TextField
from apps.planning.models import WEEKDAYS

TIME_HELP = "A wall-clock time, HH:MM (24 h), in the slots' zone."


class SlotSerializer(StrictSerializer):
    weekday = serializers.ChoiceField(choices=list(WEEKDAYS), help_text="mon … sun.")
    time = TextField(
        help_text=TIME_HELP,
        max_length=5,
        validators=[
            RegexValidator(r"^([01][0-9]|2[0-3]):[0-5][0-9]$", "A time like 09:30 (HH:MM).")
        ],
    )

    def to_internal_value(self, data: Any) -> tuple[int, dt.time]:
        value = super().to_internal_value(data)
        text = value["time"]
        try:
            if len(text) != 5 or text[2] != ":":
                raise ValueError
            at = dt.time.fromisoformat(text)
        except ValueError:
            raise serializers.ValidationError({"time": ["A time like 09:30 (HH:MM)."]}) from None
        return WEEKDAYS.index(value["weekday"]), at

    def to_representation(self, instance: tuple[int, dt.time]) -> dict:
        weekday, at = instance
        return {"weekday": WEEKDAYS[weekday], "time": f"{at:%H:%M}"}


class QueueSlotsSerializer(serializers.Serializer):
    """The slots in force for an account (its own, or the workspace's), or the
    workspace's default slots."""

    account = serializers.IntegerField(
        allow_null=True, help_text="The account, or null for the workspace's default slots."
    )
    source = serializers.ChoiceField(
        choices=["account", "workspace", "none"],
        help_text="account: its own slots; workspace: it follows the workspace's default; "
        "none: no slots are set anywhere.",
    )
    timezone = serializers.CharField(help_text="The IANA zone the times are read in.")
    timezone_is_workspace_default = serializers.BooleanField(
        help_text="True when the slots follow the workspace's zone (none set of their own)."
    )
    slots = SlotSerializer(many=True)
    description = serializers.CharField(
        help_text='As people read it: "Monday 09:00, 12:30 · Thursday 09:00 (Europe/Paris)".'
    )


class QueueSlotsReplaceSerializer(StrictSerializer):
    slots = SlotSerializer(many=True, max_length=7 * 24)
    timezone = TextField(
        required=False,
        allow_blank=True,
        default="",
        help_text="An IANA zone; blank or absent: the workspace's zone.",
    )


class PublicationQueueSerializer(StrictSerializer):
    revision = IntegerField(help_text="The revision the request was made against.")
