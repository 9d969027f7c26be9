from django.contrib import admin
from django.http import HttpRequest

from apps.audit.actions import LABELS
from apps.audit.models import AuditEvent
from apps.common.admin_paging import BoundedCountPaginator, values_filter


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: the log is append-only (only the retention prune removes rows)."""

    list_display = ("created_at", "action", "actor_label", "target_label", "organization", "ip")
    # The actions the log knows, not a DISTINCT over the whole log.
    list_filter = (values_filter("action", "action", lambda: sorted(LABELS)), "target_type")
    search_fields = ("actor_label", "target_label", "organization__name", "ip")
    list_select_related = ("organization",)
    show_full_result_count = False
    paginator = BoundedCountPaginator
    readonly_fields = [f.name for f in AuditEvent._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return False
