"""/accounts: the workspace's destinations; sandbox accounts can be opened here."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from apps.accounts.models import SocialAccount
from apps.accounts.services import social_account_disconnect
from apps.api.base import ApiRequest, WorkspaceViewSet
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors, replayed
from apps.api.serializers.accounts import AccountCreateSerializer, AccountSerializer
from apps.common.errors import NotFound
from apps.sandbox.services import sandbox_account_create


class AccountViewSet(WorkspaceViewSet):
    """Connected social accounts of the token's workspace."""

    queryset = SocialAccount.objects.all()
    serializer_class = AccountSerializer
    required_scopes = {"list": "read", "retrieve": "read", "create": "admin", "destroy": "admin"}

    @extend_schema(
        summary="List accounts",
        responses={
            200: AccountSerializer(many=True),
            **errors(400, codes={400: ["INVALID_CURSOR"]}),
        },
    )
    def list(self, request: ApiRequest) -> Response:
        return self.render_page(self.get_queryset())

    @extend_schema(summary="One account", responses={200: AccountSerializer, **errors(404)})
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self.render(self.get_object())

    @extend_schema(
        summary="Open a sandbox account",
        description="Creates an account on the built-in sandbox platform, connected to "
        "this workspace; `behaviour` tells the sandbox how to misbehave (rate limits, "
        "server errors, rejected content, expired tokens, answers that never come). Real "
        "platforms are connected in the web app.",
        request=AccountCreateSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            201: AccountSerializer,
            **replayed(AccountSerializer),
            **post_errors(404, codes={404: ["SANDBOX_DISABLED"], 409: ["HANDLE_TAKEN"]}),
        },
    )
    def create(self, request: ApiRequest) -> Response:
        data = self.parse(AccountCreateSerializer)
        if not settings.SANDBOX_ENABLED:
            raise NotFound("The sandbox platform is disabled here.", code="SANDBOX_DISABLED")
        account = sandbox_account_create(
            workspace=self.workspace, handle=data["handle"], behaviour=data.get("behaviour")
        )
        return self.render(account, status=201)

    @extend_schema(
        summary="Disconnect an account",
        description="The account's credentials are erased. An account with delivery "
        "history is kept, disabled, and stays listed with that history: the answer is the "
        "account as it is now (200). Destinations still due on it fail with action "
        "`reconnect`. An account no publication names as a destination is removed (204, "
        "no body).",
        responses={200: AccountSerializer, 204: None, **errors(404)},
    )
    def destroy(self, request: ApiRequest, pk: str) -> Response:
        account = social_account_disconnect(account=self.get_object())
        if account is None:
            return Response(status=204)
        return self.render(account)
