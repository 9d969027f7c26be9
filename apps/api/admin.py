from django.contrib import admin

from apps.api.models import IdempotencyRecord


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(admin.ModelAdmin):
    """Read-only: what a key's first request answered (support looks here when an
    integrator asks why a retry was replayed or refused)."""

    list_display = ("key", "workspace", "method", "path", "response_status", "created_at")
    list_filter = ("method", "response_status")
    search_fields = ("key", "path", "workspace__slug")
    list_select_related = ("workspace",)
    raw_id_fields = ("workspace",)
    readonly_fields = [f.name for f in IdempotencyRecord._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
