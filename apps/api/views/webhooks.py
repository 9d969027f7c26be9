"""/webhooks: the workspace's webhook endpoints, their delivery log, redelivery and a test
event."""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from apps.api.base import ID_PATTERN, ApiRequest, WorkspaceViewSet
from apps.api.schema import IDEMPOTENCY_KEY, errors, post_errors, replayed
from apps.api.serializers.webhooks import (
    WebhookDeliveryFilterSerializer,
    WebhookDeliverySerializer,
    WebhookEndpointCreateSerializer,
    WebhookEndpointSecretSerializer,
    WebhookEndpointSerializer,
    WebhookEndpointUpdateSerializer,
)
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from apps.webhooks.services import (
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_previous_secret_until,
    webhook_endpoint_rotate_secret,
    webhook_endpoint_update,
    webhook_redeliver,
    webhook_send_test,
)

URL_CODES = ["WEBHOOK_URL_FORBIDDEN", "WEBHOOK_URL_UNRESOLVABLE", "UNKNOWN_EVENT_TYPE"]


class WebhookViewSet(WorkspaceViewSet):
    """Endpoints that receive the workspace's events, signed (Standard Webhooks)."""

    queryset = WebhookEndpoint.objects.order_by("-id")
    serializer_class = WebhookEndpointSerializer
    # The signing secret is shown once: never kept in a stored Idempotency-Key replay.
    idempotency_redacted_fields = frozenset({"secret"})
    required_scopes = {
        "list": "read",
        "retrieve": "read",
        "deliveries": "read",
        "create": "admin",
        "partial_update": "admin",
        "destroy": "admin",
        "rotate_secret": "admin",
        "redeliver": "admin",
        "send_test": "admin",
    }

    def allowed_query_params(self) -> set[str]:
        if self.action == "deliveries":
            paginator = self.paginator
            return {
                paginator.cursor_query_param,
                paginator.page_size_query_param,
                *WebhookDeliveryFilterSerializer().fields,
            }
        return super().allowed_query_params()

    def _secret_response(
        self,
        endpoint: WebhookEndpoint,
        secret: str,
        status: int,
        previous_until: datetime | None = None,
    ) -> Response:
        context = {
            **self.get_serializer_context(),
            "secret": secret,
            "previous_secret_signs_until": previous_until,
        }
        return Response(WebhookEndpointSecretSerializer(endpoint, context=context).data, status)

    @extend_schema(
        summary="List webhook endpoints",
        responses={200: WebhookEndpointSerializer(many=True), **errors(400)},
    )
    def list(self, request: ApiRequest) -> Response:
        return self.render_page(self.get_queryset())

    @extend_schema(
        summary="Register a webhook endpoint",
        description="The URL must be https:// on a public address (checked again at every "
        "delivery). The signing secret is in this response only.",
        request=WebhookEndpointCreateSerializer,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            201: WebhookEndpointSecretSerializer,
            **replayed(WebhookEndpointSecretSerializer),
            **post_errors(codes={400: URL_CODES, 409: ["WEBHOOK_ENDPOINT_LIMIT"]}),
        },
    )
    def create(self, request: ApiRequest) -> Response:
        data = self.parse(WebhookEndpointCreateSerializer)
        endpoint, secret = webhook_endpoint_create(
            workspace=self.workspace,
            url=data["url"],
            event_types=data.get("event_types"),
            description=data.get("description", ""),
            created_by=self.token.created_by,
        )
        return self._secret_response(endpoint, secret, 201)

    @extend_schema(
        summary="A webhook endpoint", responses={200: WebhookEndpointSerializer, **errors(404)}
    )
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self.render(self.get_object())

    @extend_schema(
        summary="Change a webhook endpoint",
        description="A new URL is checked again. `is_active: false` switches it off: its "
        "events are still recorded, their deliveries `held`. `is_active: true` switches on "
        "an endpoint that was switched off (by hand or after sustained failure) and sends "
        "what it kept, oldest first (each held delivery becomes `pending`).",
        request=WebhookEndpointUpdateSerializer,
        responses={200: WebhookEndpointSerializer, **errors(400, 404, codes={400: URL_CODES})},
    )
    def partial_update(self, request: ApiRequest, pk: str) -> Response:
        endpoint = self.get_object()
        data = self.parse(WebhookEndpointUpdateSerializer)
        return self.render(webhook_endpoint_update(endpoint=endpoint, **data))

    @extend_schema(
        summary="Delete a webhook endpoint",
        description="Its delivery log goes with it; deliveries not yet made are not sent.",
        responses={204: None, **errors(404)},
    )
    def destroy(self, request: ApiRequest, pk: str) -> Response:
        webhook_endpoint_delete(endpoint=self.get_object())
        return Response(status=204)

    @extend_schema(
        summary="Rotate the signing secret",
        description="Attempts from now on are signed with the new secret, shown in this "
        "response only, and until `previous_secret_signs_until` (WEBHOOK_SECRET_OVERLAP_HOURS, "
        "24 h by default) with the one it replaces as well: `webhook-signature` then holds "
        "two space-separated `v1,` signatures, and a receiver holding either secret "
        "verifies them.",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            200: WebhookEndpointSecretSerializer,
            **post_errors(404),
        },
    )
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request: ApiRequest, pk: str) -> Response:
        endpoint = self.get_object()
        secret = webhook_endpoint_rotate_secret(endpoint=endpoint)
        endpoint.refresh_from_db()
        previous_until = webhook_endpoint_previous_secret_until(endpoint)
        return self._secret_response(endpoint, secret, 200, previous_until)

    def _deliveries(self, endpoint: WebhookEndpoint) -> QuerySet:
        return (
            WebhookDelivery.objects.for_workspace(self.workspace)
            .filter(endpoint=endpoint)
            .select_related("event")
            .order_by("-id")
        )

    @extend_schema(
        summary="The endpoint's delivery log",
        description="Newest first: each event sent, its status, attempts, the latest "
        "response code, latency and the start of the response body. A failing delivery is "
        "retried for at least three days; `held` ones wait for the endpoint to be switched "
        "on.",
        parameters=[
            OpenApiParameter("status", enum=WebhookDelivery.Status.values, required=False, type=str)
        ],
        responses={200: WebhookDeliverySerializer(many=True), **errors(400, 404)},
    )
    @action(detail=True, methods=["get"])
    def deliveries(self, request: ApiRequest, pk: str) -> Response:
        endpoint = self.get_object()
        filters = self.parse(WebhookDeliveryFilterSerializer, data=request.query_params)
        queryset = self._deliveries(endpoint)
        if filters.get("status"):
            queryset = queryset.filter(status=filters["status"])
        page = self.paginate_queryset(queryset)
        data = WebhookDeliverySerializer(page, many=True, context=self.get_serializer_context())
        return self.get_paginated_response(data.data)

    @extend_schema(
        summary="Redeliver an event",
        description="Sends the delivery's event to the endpoint again, as a new delivery "
        "with the same event id (webhook-id), so receivers that had it can drop it. A "
        "delivery still pending or held is refused (DELIVERY_PENDING).",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            202: WebhookDeliverySerializer,
            **post_errors(404, codes={409: ["DELIVERY_PENDING", "WEBHOOK_ENDPOINT_DISABLED"]}),
        },
    )
    @action(
        detail=True,
        methods=["post"],
        url_path=rf"deliveries/(?P<delivery_id>{ID_PATTERN})/redeliver",
    )
    def redeliver(self, request: ApiRequest, pk: str, delivery_id: str) -> Response:
        endpoint = self.get_object()
        delivery = get_object_or_404(self._deliveries(endpoint), pk=int(delivery_id))
        again = webhook_redeliver(delivery=delivery)
        again = self._deliveries(endpoint).get(pk=again.pk)
        return self.render(again, status=202, serializer_class=WebhookDeliverySerializer)

    @extend_schema(
        summary="Send a test event",
        description="Sends a `webhook.test` event to this endpoint only, through the normal "
        "delivery path: signed, retried and recorded in its delivery log, like any event. "
        "The answer is the new delivery (`pending`); its outcome shows in the log. A "
        "switched-off endpoint is refused (WEBHOOK_ENDPOINT_DISABLED).",
        request=None,
        parameters=[IDEMPOTENCY_KEY],
        responses={
            202: WebhookDeliverySerializer,
            **post_errors(404, codes={409: ["WEBHOOK_ENDPOINT_DISABLED"]}),
        },
    )
    @action(detail=True, methods=["post"], url_path="test")
    def send_test(self, request: ApiRequest, pk: str) -> Response:
        endpoint = self.get_object()
        delivery = webhook_send_test(endpoint=endpoint)
        delivery = self._deliveries(endpoint).get(pk=delivery.pk)
        return self.render(delivery, status=202, serializer_class=WebhookDeliverySerializer)
