from django.contrib import admin
from django.db.models import QuerySet

from apps.providers.errors import ErrorKind
from apps.renditions.models import Rendition, RenditionSegment


class ErrorKindFilter(admin.SimpleListFilter):
    title = "error kind"
    parameter_name = "error_kind"

    def lookups(self, request, model_admin) -> list[tuple[str, str]]:
        return [(kind.value, kind.value.replace("_", " ")) for kind in ErrorKind]

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        if self.value():
            return queryset.filter(last_error__kind=self.value())
        return queryset


class RenditionSegmentInline(admin.TabularInline):
    model = RenditionSegment
    extra = 0
    fields = ["position", "text", "source_segment", "provider_post_id", "provider_url"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Rendition)
class RenditionAdmin(admin.ModelAdmin):
    """Read-only: a rendition's state changes only through its transitions."""

    list_display = [
        "id",
        "publication",
        "platform",
        "social_account",
        "status",
        "ambiguous",
        "attempts",
        "next_retry_at",
        "error_kind",
        "updated_at",
    ]
    list_filter = ["status", "platform", "ambiguous", ErrorKindFilter]
    search_fields = ["provider_post_id", "social_account__handle", "workspace__slug"]
    list_select_related = ["publication", "social_account"]
    raw_id_fields = ["publication", "workspace", "social_account"]
    readonly_fields = [f.name for f in Rendition._meta.fields]
    inlines = [RenditionSegmentInline]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="error kind")
    def error_kind(self, obj: Rendition) -> str:
        return (obj.last_error or {}).get("kind", "")
