from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.common.errors import DomainError
from apps.series import occurrences, services
from apps.series.models import Series, SeriesOccurrence


class SeriesOccurrenceInline(admin.TabularInline):
    model = SeriesOccurrence
    extra = 0
    fields = ("local_start", "scheduled_at", "status", "is_late", "publication", "error")
    readonly_fields = fields
    can_delete = False
    ordering = ["-scheduled_at"]
    raw_id_fields = ["publication"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("publication")


@admin.register(Series)
class SeriesAdmin(admin.ModelAdmin):
    """Read-only: series are edited by their workspace; operators can pause, resume or
    materialize one now."""

    list_display = [
        "id",
        "name",
        "workspace",
        "status",
        "rrule",
        "timezone",
        "materialized_through",
    ]
    list_filter = ["status"]
    search_fields = ["name", "workspace__slug"]
    list_select_related = ["workspace__organization"]
    raw_id_fields = ["workspace", "created_by"]
    readonly_fields = [
        "workspace",
        "name",
        "template",
        "rrule",
        "dtstart",
        "timezone",
        "count",
        "until",
        "late_window_minutes",
        "horizon_days",
        "status",
        "materialized_through",
        "paused_at",
        "ended_at",
        "created_by",
        "created_at",
        "updated_at",
    ]
    inlines = [SeriesOccurrenceInline]
    actions = ["pause", "resume", "materialize_now"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def _each(self, request: HttpRequest, queryset: QuerySet, action) -> None:
        for series in queryset:
            try:
                action(series)
            except DomainError as exc:
                self.message_user(request, f"{series}: {exc.message}", messages.ERROR)

    @admin.action(description="Pause (publications already made still go out)")
    def pause(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._each(request, queryset, lambda s: services.series_pause(series=s))

    @admin.action(description="Resume")
    def resume(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._each(request, queryset, lambda s: services.series_resume(series=s))

    @admin.action(description="Materialize now")
    def materialize_now(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._each(request, queryset, lambda s: occurrences.series_materialize(series=s))


@admin.register(SeriesOccurrence)
class SeriesOccurrenceAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "series",
        "local_start",
        "scheduled_at",
        "status",
        "is_late",
        "publication",
    ]
    list_filter = ["status", "is_late"]
    search_fields = ["series__name", "local_start"]
    list_select_related = ["series", "publication"]
    raw_id_fields = ["series", "workspace", "publication"]
    readonly_fields = [
        "series",
        "workspace",
        "local_start",
        "scheduled_at",
        "publication",
        "status",
        "is_late",
        "error",
        "created_at",
        "updated_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
