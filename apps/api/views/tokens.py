"""/tokens: the workspace's API tokens, managed with a token."""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import Throttled
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.access import Scopes, check_grantable
from apps.accounts.cli_login import (
    CLI_LOGIN_TTL,
    POLL_INTERVAL_S,
    cli_login_collect,
    cli_login_start,
)
from apps.accounts.models import ApiToken
from apps.accounts.services import api_token_create, api_token_revoke
from apps.accounts.token_roles import effective_scopes
from apps.api.base import ApiRequest, StrictViewMixin, WorkspaceViewSet
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors, replayed
from apps.api.serializers.base import TextField
from apps.api.serializers.tokens import (
    TokenCreatedSerializer,
    TokenCreateSerializer,
    TokenSerializer,
)
from apps.common.errors import Conflict
from apps.security.client_ip import client_ip
from apps.security.ratelimit import rate_hit


class CliLoginStartSerializer(serializers.Serializer):
    client_name = TextField(
        max_length=60,
        required=False,
        default="",
        allow_blank=True,
        help_text="The machine's name, shown in the token's name.",
    )


class CliLoginPollSerializer(serializers.Serializer):
    device_code = serializers.CharField(max_length=100)


class CliLoginStartedSerializer(serializers.Serializer):
    device_code = serializers.CharField()
    user_code = serializers.CharField()
    verification_url = serializers.URLField()
    verification_url_complete = serializers.URLField()
    expires_in = serializers.IntegerField()
    interval = serializers.IntegerField()


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
        page = self.paginate_queryset(self.get_queryset().select_related("created_by"))
        effective_scopes(page or [], workspace=self.workspace)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

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


# --- socialpost login, confirmed in the browser (apps.accounts.cli_login) -----------------

# Logins one address may start in an hour: each is a row until it expires.
CLI_LOGIN_STARTS_PER_HOUR = 20


class _Anonymous(StrictViewMixin, APIView):
    """The two calls a command makes before it has a token."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes: list = []


class CliLoginStartView(_Anonymous):
    @extend_schema(
        summary="Start a command-line login",
        description="For `socialpost login`: answers a secret device code, and a user code "
        "for a person to confirm at verification_url (signed in, choosing the workspace and "
        "scopes). Then poll POST /cli/login/token with the device code. No token needed; "
        f"{CLI_LOGIN_STARTS_PER_HOUR} starts an hour per address (429 RATE_LIMITED).",
        request=CliLoginStartSerializer,
        responses={
            201: CliLoginStartedSerializer,
            **errors(400, 409, 413, 415, 429),
        },
    )
    def post(self, request: Request) -> Response:
        hits, retry_after = rate_hit(
            key=f"cli-login:{client_ip(request._request)}", period_s=3600, now=timezone.now()
        )
        if hits > CLI_LOGIN_STARTS_PER_HOUR:
            raise Throttled(wait=retry_after)
        data = CliLoginStartSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        device_code, login = cli_login_start(client_name=data.validated_data["client_name"])
        link = settings.SITE_URL.rstrip("/") + reverse("cli-login")
        body = {
            "device_code": device_code,
            "user_code": login.user_code,
            "verification_url": link,
            "verification_url_complete": f"{link}?{urlencode({'code': login.user_code})}",
            "expires_in": int(CLI_LOGIN_TTL.total_seconds()),
            "interval": POLL_INTERVAL_S,
        }
        return Response(body, status=201)


class CliLoginTokenView(_Anonymous):
    @extend_schema(
        summary="Collect a command-line login's token",
        description="Poll with the device code: 409 AUTHORIZATION_PENDING until a person "
        "confirms, then 201 with the new token (marked as the command line's; its secret "
        "in this answer only). 404 CLI_LOGIN_UNKNOWN, 410 CLI_LOGIN_EXPIRED, 409 "
        "CLI_LOGIN_USED once collected.",
        request=CliLoginPollSerializer,
        responses={
            201: TokenCreatedSerializer,
            **errors(
                400,
                404,
                409,
                410,
                413,
                415,
                codes={
                    404: ["CLI_LOGIN_UNKNOWN"],
                    409: ["AUTHORIZATION_PENDING", "CLI_LOGIN_USED", "TOKEN_LIMIT_REACHED"],
                    410: ["CLI_LOGIN_EXPIRED"],
                },
            ),
        },
    )
    def post(self, request: Request) -> Response:
        data = CliLoginPollSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        issued = cli_login_collect(device_code=data.validated_data["device_code"])
        if issued is None:
            raise Conflict(
                "Waiting for a person to confirm the code in the browser.",
                code="AUTHORIZATION_PENDING",
            )
        body = TokenCreatedSerializer(issued.token, context={"clear": issued.clear}).data
        response = Response(body, status=201)
        response["Cache-Control"] = "no-store"
        return response
