from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from apps.ops import services
from apps.ops.models import MaintenanceSwitch


@admin.register(MaintenanceSwitch)
class MaintenanceSwitchAdmin(admin.ModelAdmin):
    """One row: the changelist opens its form directly."""

    fields = ["is_enabled", "message", "retry_after_s", "created_at", "updated_at"]
    readonly_fields = ["created_at", "updated_at"]

    def changelist_view(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        switch = MaintenanceSwitch.load()
        return HttpResponseRedirect(reverse("admin:ops_maintenanceswitch_change", args=[switch.pk]))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: MaintenanceSwitch, form, change) -> None:
        services.maintenance_switch_save(switch=obj)
