from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.common.admin_paging import BoundedCountPaginator
from apps.common.errors import DomainError
from apps.webhooks import endpoints, outbox
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    """Endpoints are managed by their workspace (API, web app); operators read them and
    can switch them on or off."""

    list_display = [
        "id",
        "url",
        "workspace",
        "is_active",
        "consecutive_failures",
        "last_success_at",
        "disabled_at",
    ]
    list_filter = ["is_active"]
    search_fields = ["url", "description", "workspace__slug"]
    list_select_related = ["workspace__organization"]
    raw_id_fields = ["workspace", "created_by"]
    readonly_fields = [
        "workspace",
        "url",
        "event_types",
        "is_active",
        "secret_key_id",
        "consecutive_failures",
        "failing_since",
        "last_failure_at",
        "last_success_at",
        "disabled_at",
        "disabled_reason",
        "created_by",
        "created_at",
        "updated_at",
    ]
    exclude = ["secret_ciphertext"]
    actions = ["switch_on", "switch_off"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Switch on (clears the failure streak)")
    def switch_on(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._set_active(request, queryset, True)

    @admin.action(description="Switch off")
    def switch_off(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._set_active(request, queryset, False)

    def _set_active(self, request: HttpRequest, queryset: QuerySet, value: bool) -> None:
        for endpoint in queryset:
            try:
                endpoints.webhook_endpoint_update(endpoint=endpoint, is_active=value)
            except DomainError as exc:
                self.message_user(request, f"{endpoint.url}: {exc.message}", messages.ERROR)


@admin.register(WebhookEvent)
class WebhookEventAdmin(admin.ModelAdmin):
    list_display = ["event_id", "type", "workspace", "created_at"]
    list_filter = ["type"]
    search_fields = ["event_id"]
    list_select_related = ["workspace__organization"]
    show_full_result_count = False
    paginator = BoundedCountPaginator
    readonly_fields = ["workspace", "event_id", "type", "data", "created_at", "updated_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    """Read-only log; "redeliver" queues a new delivery of the same event."""

    list_display = [
        "id",
        "event",
        "endpoint",
        "status",
        "attempts",
        "response_status",
        "latency_ms",
        "created_at",
    ]
    list_filter = ["status"]
    search_fields = ["event__event_id", "endpoint__url"]
    list_select_related = ["event", "endpoint"]
    show_full_result_count = False
    paginator = BoundedCountPaginator
    readonly_fields = [
        "workspace",
        "endpoint",
        "event",
        "redelivery_of",
        "status",
        "attempts",
        "response_status",
        "response_body",
        "latency_ms",
        "error",
        "next_attempt_at",
        "last_attempt_at",
        "finished_at",
        "created_at",
        "updated_at",
    ]
    actions = ["redeliver"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Redeliver the event")
    def redeliver(self, request: HttpRequest, queryset: QuerySet) -> None:
        queued = 0
        for delivery in queryset:
            try:
                outbox.webhook_redeliver(delivery=delivery)
                queued += 1
            except DomainError as exc:
                self.message_user(request, f"Delivery {delivery.pk}: {exc.message}", messages.ERROR)
        if queued:
            self.message_user(request, f"{queued} redelivery(ies) queued.", messages.SUCCESS)
