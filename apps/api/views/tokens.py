"""/tokens: the workspace's API tokens, managed with a token."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from apps.accounts.access import Scopes, check_grantable
from apps.accounts.models import ApiToken
from apps.accounts.services import api_token_create, api_token_revoke
from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors, replayed
from apps.api.serializers.tokens import (
    TokenCreatedSerializer,
    TokenCreateSerializer,
    TokenSerializer,
)


def _revoke_scopes(request: ApiRequest, token: ApiToken) -> Scopes:
    # Revoking itself only takes power away (a leaked token can be killed with itself);
    # revoking another token is an admin's act.
    return None if token.pk == request.auth.pk else ApiToken.Scope.ADMIN


class TokenViewSet(WorkspaceViewSet):
    """Tokens of the calling token's workspace (revoked ones included, newest first)."""

    queryset = ApiToken.objects.all()
    serializer_class = TokenSerializer
    required_scopes = {"list": "read", "create": "admin", "destroy": None}
    required_object_scopes = {"destroy": _revoke_scopes}
    # The secret is stored nowhere, not even with an Idempotency-Key's response.
    idempotency_redacted_fields = frozenset({"token"})

    @extend_schema(
        summary="List tokens",
        responses={200: TokenSerializer(many=True), **errors(400, codes={400: ["INVALID_CURSOR"]})},
    )
    def list(self, request: ApiRequest) -> Response:
        return self.render_page(self.get_queryset())

    @extend_schema(
        summary="Create a token",
        description="The secret is in this response only; it is stored hashed (a replay "
        "with the same Idempotency-Key answers it as null). A token can grant only scopes "
        "it holds itself (403 SCOPE_ESCALATION). The new token's parent is the calling "
        "token: revoking the parent revokes it. A workspace holds at most "
        "API_TOKENS_PER_WORKSPACE live tokens (409 TOKEN_LIMIT_REACHED).",
        request=TokenCreateSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            201: TokenCreatedSerializer,
            **replayed(TokenCreatedSerializer),
            **post_errors(codes={403: ["SCOPE_ESCALATION"], 409: ["TOKEN_LIMIT_REACHED"]}),
        },
    )
    def create(self, request: ApiRequest) -> Response:
        data = self.parse(TokenCreateSerializer)
        scopes = list(dict.fromkeys(data["scopes"]))
        check_grantable(self.token, scopes)
        issued = api_token_create(
            workspace=self.workspace,
            name=data["name"],
            scopes=scopes,
            created_by=self.token.created_by,
            parent=self.token,
        )
        context = {**self.get_serializer_context(), "clear": issued.clear}
        return Response(TokenCreatedSerializer(issued.token, context=context).data, status=201)

    @extend_schema(
        summary="Revoke a token",
        description="Needs the admin scope, except for a token revoking itself. It stops "
        "authenticating at once, and so does every token minted from it, down the line. "
        "Answers the token as it is now.",
        responses={200: TokenSerializer, **errors(403, 404)},
    )
    def destroy(self, request: ApiRequest, pk: str) -> Response:
        token = api_token_revoke(token=self.get_object())
        return self.render(token)
