"""API tokens of the caller's workspace."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.accounts.models import ApiToken
from apps.accounts.token_roles import effective_scopes
from apps.api.serializers.base import StrictSerializer, TextField


class TokenSerializer(serializers.ModelSerializer):
    """A token as listed: never its secret, only the prefix it starts with."""

    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=ApiToken.Scope.choices),
        help_text="What the token was granted. Kept as granted through its creator's role changes.",
    )
    effective_scopes = serializers.SerializerMethodField(
        help_text="What the token may do now: its scopes that its creator's current role "
        "allows (all of them for a token made by no person; none once revoked). Narrower "
        "than scopes while the creator's role is smaller than when it was granted; whole "
        "again when the role allows it."
    )
    is_current = serializers.SerializerMethodField(help_text="The token making this request.")

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "name",
            "prefix",
            "scopes",
            "effective_scopes",
            "client",
            "is_current",
            "parent",
            "created_at",
            "last_used_at",
            "revoked_at",
        ]

    @extend_schema_field(
        serializers.ListField(child=serializers.ChoiceField(choices=ApiToken.Scope.choices))
    )
    def get_effective_scopes(self, token: ApiToken) -> list[str]:
        if token.effective_scopes is None:
            effective_scopes([token], workspace=token.workspace)
        return list(token.effective_scopes or [])

    @extend_schema_field(serializers.BooleanField())
    def get_is_current(self, token: ApiToken) -> bool:
        request = self.context.get("request")
        return bool(request is not None and getattr(request.auth, "pk", None) == token.pk)


class TokenCreatedSerializer(TokenSerializer):
    """A new token, with its secret: shown this once, stored nowhere."""

    token = serializers.SerializerMethodField(
        help_text="The secret. Shown only in this response (null in an Idempotency-Key replay)."
    )

    class Meta(TokenSerializer.Meta):
        fields = [*TokenSerializer.Meta.fields, "token"]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_token(self, token: ApiToken) -> str:
        return self.context["clear"]


class TokenCreateSerializer(StrictSerializer):
    """POST /tokens. A token can only grant scopes it holds itself."""

    name = TextField(max_length=100)
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=ApiToken.Scope.choices),
        allow_empty=False,
        min_length=1,
        max_length=len(ApiToken.Scope.values) * 2,
    )
