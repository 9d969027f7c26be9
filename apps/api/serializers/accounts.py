"""Connected social accounts, and the body that opens a sandbox account."""

from __future__ import annotations

from rest_framework import serializers

from apps.accounts.models import SocialAccount
from apps.api.serializers.base import (
    MAX_SMALL_INT,
    BooleanField,
    IntegerField,
    NumberInputField,
    StrictSerializer,
    TextField,
)
from apps.sandbox.behaviour import BEHAVIOUR_KEYS, MAX_WAIT_S

SANDBOX = "sandbox"


class AccountSerializer(serializers.ModelSerializer):
    """A destination account. Credentials are never shown."""

    class Meta:
        model = SocialAccount
        fields = [
            "id",
            "platform",
            "handle",
            "display_name",
            "status",
            "token_expires_at",
            "settings",
            "created_at",
            "updated_at",
        ]


# Bounds of single keys (behaviour.py checks them again, and latency_ms with hang_s together).
_MAXIMUM = {"server_error_percent": 100, "retry_after_s": MAX_WAIT_S, "processing_s": MAX_WAIT_S}


def _behaviour_field(key: str, kind: type, default: object, help_text: str) -> serializers.Field:
    if kind is bool:
        return BooleanField(required=False, help_text=help_text)
    unit = " s" if key.endswith("_s") else ""
    bounds = {
        "required": False,
        "min_value": 0,
        "max_value": _MAXIMUM.get(key, MAX_SMALL_INT if kind is int else 86_400),
        "error_messages": {"max_value": f"At most {{max_value}}{unit}."},
        "help_text": help_text,
    }
    if kind is int:
        return IntegerField(**bounds)
    # Null stands for the default only where the default is no value (hang_s).
    return NumberInputField(allow_null=default is None, **bounds)


# The sandbox contract's behaviour keys (DESIGN §7), typed for validation and the schema.
SandboxBehaviourSerializer = type(
    "SandboxBehaviourSerializer",
    (StrictSerializer,),
    {
        "__doc__": "How the sandbox answers this account; every key is optional.",
        **{
            key: _behaviour_field(key, kind, default, text)
            for key, (kind, default, text) in BEHAVIOUR_KEYS.items()
        },
    },
)


class AccountCreateSerializer(StrictSerializer):
    """POST /accounts: opens an account on the built-in sandbox platform. Real platforms
    are connected in the web app (they need the platform's OAuth consent)."""

    platform = serializers.ChoiceField(
        choices=[SANDBOX],
        error_messages={
            "invalid_choice": "Only sandbox accounts are created through the API; connect "
            "other platforms in the web app."
        },
    )
    handle = TextField(max_length=100)
    behaviour = SandboxBehaviourSerializer(required=False)
