"""The base every workspace resource of the API builds on.

A resource is a ``WorkspaceViewSet`` subclass registered on the one router in
``apps/api/urls.py``. The base gives it, in one place:

- **tenant isolation**: ``get_queryset()`` is the class's ``queryset`` narrowed to the
  calling token's workspace (``.for_workspace(workspace)``), so another workspace's id is
  a 404 everywhere, exactly like an id that does not exist. Override ``get_queryset`` only
  to add joins or filters, and always start from ``super().get_queryset()``;
- **scopes**: ``required_scopes`` maps an action (``list``, ``create``, a custom
  ``@action``) or an HTTP method to the scopes it needs, and ``required_object_scopes``
  does the same for rules that depend on the object (see ``apps.api.permissions``);
- **idempotency**: every POST handler runs under the Idempotency-Key protocol
  (``apps.api.idempotency``); secrets a response shows once are listed in
  ``idempotency_redacted_fields`` so they are never stored;
- **pagination**: stable cursor pages (``apps.api.pagination``); ids in URLs are
  integers, anything else is a 404 before the view runs;
- **query parameters**: only those the view reads, others are 400 UNKNOWN_FIELD. ``list``
  takes ``cursor``, ``limit`` and the fields of ``filter_serializer``; a custom action that
  reads parameters overrides ``allowed_query_params()``;
- **thin handlers**: ``parse()`` validates input with a serializer and returns plain data
  for a service call; ``render()`` builds the response with an output serializer.

A new resource looks like::

    class WidgetViewSet(WorkspaceViewSet):
        queryset = Widget.objects.order_by("-id")
        serializer_class = WidgetSerializer
        required_scopes = {"list": "read", "retrieve": "read", "create": "write"}

        def create(self, request: ApiRequest) -> Response:
            data = self.parse(WidgetCreateSerializer)
            widget = widget_create(workspace=self.workspace, **data)
            return self.render(widget, status=201)

Input serializers subclass ``apps.api.serializers.base.StrictSerializer`` (unknown fields
refused) with its JSON-typed fields (``TextField``, ``IntegerField``, ``IdField``...), and
the view is documented with ``extend_schema`` and ``apps.api.schema.errors(...)``.
Endpoints that are not a collection of workspace rows (the catalog, /me) subclass
``WorkspaceAPIView`` instead: same authentication, scopes and throttling.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Model, QuerySet
from rest_framework import serializers, viewsets
from rest_framework.exceptions import ErrorDetail, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.models import ApiToken, Workspace
from apps.api.errors import UNKNOWN_FIELD
from apps.api.idempotency import idempotent
from apps.api.metadata import ApiMetadata
from apps.api.pagination import StableCursorPagination
from apps.api.permissions import HasWorkspaceToken

# Largest id accepted in a URL: anything longer cannot be a bigint and is a 404.
ID_PATTERN = r"[0-9]{1,18}"


class ApiRequest(Request):
    """A request the token authentication accepted: ``auth`` is the ApiToken."""

    auth: ApiToken


class StrictViewMixin(APIView):
    """What every API view does beyond DRF's defaults:

    - refusals carry their details: a scope refusal says which scopes were needed and
      which the token holds (DRF's own refusal keeps only a message);
    - query parameters the endpoint does not read are refused (400 UNKNOWN_FIELD), so a
      misspelt filter never silently returns everything.
    """

    metadata_class = ApiMetadata

    def allowed_query_params(self) -> set[str]:
        """The query parameters this request may carry (none unless a view says so)."""
        return set()

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        unknown = sorted(set(request.query_params) - self.allowed_query_params())
        if unknown:
            raise ValidationError(
                {
                    name: [ErrorDetail("Unknown query parameter.", code=UNKNOWN_FIELD)]
                    for name in unknown
                }
            )

    def check_permissions(self, request: Request) -> None:
        for permission in self.get_permissions():
            if not permission.has_permission(request, self):
                self._deny(request, permission)

    def check_object_permissions(self, request: Request, obj: Model) -> None:
        for permission in self.get_permissions():
            if not permission.has_object_permission(request, self, obj):
                self._deny(request, permission)

    def _deny(self, request: Request, permission: Any) -> None:
        denial = getattr(permission, "denial", None)
        if denial is not None and isinstance(request.auth, ApiToken):
            raise denial
        self.permission_denied(
            request,
            message=getattr(permission, "message", None),
            code=getattr(permission, "code", None),
        )


class WorkspaceAPIView(StrictViewMixin, APIView):
    """For endpoints that are not a collection of workspace rows (the catalog, /me):
    token authentication, scopes from ``required_scopes`` and throttling, as everywhere."""

    permission_classes = [HasWorkspaceToken]
    required_scopes: dict[str, Any] | None = None
    request: ApiRequest


class WorkspaceViewSet(StrictViewMixin, viewsets.GenericViewSet):
    """Scoped, scope-checked, idempotent, paginated base for workspace resources."""

    permission_classes = [HasWorkspaceToken]
    pagination_class = StableCursorPagination
    lookup_value_regex = ID_PATTERN
    required_scopes: dict[str, Any] | None = None
    required_object_scopes: dict[str, Any] | None = None
    # The query filters `list` reads (its fields are the allowed parameters, beside the
    # pagination's cursor and limit).
    filter_serializer: type[serializers.Serializer] | None = None
    # Response fields never stored with an Idempotency-Key (secrets shown once); a replay
    # answers them as null.
    idempotency_redacted_fields: frozenset[str] = frozenset()
    request: ApiRequest

    def allowed_query_params(self) -> set[str]:
        if self.action != "list":
            return set()
        paginator = self.paginator
        params = {paginator.cursor_query_param, paginator.page_size_query_param}
        if self.filter_serializer is not None:
            params |= set(self.filter_serializer().fields)
        return params

    @property
    def token(self) -> ApiToken:
        return self.request.auth

    @property
    def workspace(self) -> Workspace:
        return self.request.auth.workspace

    def get_queryset(self) -> QuerySet:
        """The resource's rows in the caller's workspace, and no others."""
        queryset = super().get_queryset()
        if hasattr(queryset, "for_workspace"):
            return queryset.for_workspace(self.workspace)
        return queryset.filter(workspace=self.workspace)

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        # The router bound this route's POST action to `post` just before dispatch.
        post = getattr(self, "post", None)
        if post is not None:
            self.post = idempotent(post, redact=self.idempotency_redacted_fields)
        return super().dispatch(request, *args, **kwargs)

    # --- thin handlers ------------------------------------------------------------------

    def parse(self, serializer_class: type[serializers.Serializer], data: Any = None) -> dict:
        """The request body (or ``data``) validated by serializer_class, as plain data;
        a ValidationError becomes the 400 envelope with field paths."""
        serializer = serializer_class(
            data=self.request.data if data is None else data,
            context=self.get_serializer_context(),
        )
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def render(
        self,
        instance: Any,
        *,
        status: int = 200,
        serializer_class: type[serializers.Serializer] | None = None,
    ) -> Response:
        serializer_class = serializer_class or self.get_serializer_class()
        data = serializer_class(instance, context=self.get_serializer_context()).data
        return Response(data, status=status)

    def render_page(self, queryset: QuerySet) -> Response:
        page = self.paginate_queryset(queryset)
        serializer = self.get_serializer(page, many=True)
        return self.get_paginated_response(serializer.data)
