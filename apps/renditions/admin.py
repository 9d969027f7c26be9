"""The admin of a rendition's own rows: its delivery attempts and first comment, and the
filters and inlines the rendition admin (``apps.publishing.admin``, which acts through the
services) is built from."""

from django.contrib import admin
from django.db.models import QuerySet

from apps.common.admin_paging import BoundedCountPaginator
from apps.providers.errors import ErrorKind
from apps.renditions.models import DeliveryAttempt, FirstComment, RenditionSegment


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
    fields = ("position", "text", "source_segment", "provider_post_id", "provider_url")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class FirstCommentInline(admin.StackedInline):
    """The comment under the live post; settled by a person through the post's page or
    the API (its lookup rules live in the delivery code, not in a form)."""

    model = FirstComment
    extra = 0
    fields = ("status", "text", "provider_comment_id", "provider_url", "published_at", "last_error")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class DeliveryAttemptInline(admin.TabularInline):
    """The evidence an operator reads before resolving an ambiguous outcome."""

    model = DeliveryAttempt
    extra = 0
    fields = (
        "started_at",
        "kind",
        "segment_position",
        "outcome",
        "worker",
        "idempotency_key",
        "provider_post_id",
        "error",
        "note",
    )
    readonly_fields = fields
    can_delete = False
    ordering = ["started_at", "id"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(DeliveryAttempt)
class DeliveryAttemptAdmin(admin.ModelAdmin):
    """Append-only evidence of every call to a platform."""

    list_display = [
        "id",
        "rendition",
        "kind",
        "segment_position",
        "outcome",
        "worker",
        "started_at",
        "finished_at",
    ]
    list_filter = ["kind", "outcome"]
    search_fields = ["idempotency_key", "provider_post_id", "worker", "rendition__id"]
    list_select_related = ["rendition"]
    show_full_result_count = False
    paginator = BoundedCountPaginator
    raw_id_fields = ["rendition", "workspace"]
    readonly_fields = [f.name for f in DeliveryAttempt._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
