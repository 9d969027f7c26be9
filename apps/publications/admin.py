from django.contrib import admin, messages
from django.db.models import Exists, OuterRef, QuerySet
from django.http import HttpRequest

from apps.publications import services
from apps.publications.models import MediaAsset, Publication, PublicationSegment
from apps.renditions.models import Rendition


class HasAmbiguousRenditionFilter(admin.SimpleListFilter):
    title = "ambiguous rendition"
    parameter_name = "ambiguous"

    def lookups(self, request, model_admin) -> list[tuple[str, str]]:
        return [("yes", "Has an ambiguous rendition"), ("no", "None ambiguous")]

    def queryset(self, request, queryset: QuerySet) -> QuerySet:
        ambiguous = Rendition.objects.filter(publication=OuterRef("pk"), ambiguous=True)
        if self.value() == "yes":
            return queryset.filter(Exists(ambiguous))
        if self.value() == "no":
            return queryset.exclude(Exists(ambiguous))
        return queryset


class PublicationSegmentInline(admin.TabularInline):
    model = PublicationSegment
    extra = 0
    fields = ["position", "text"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class RenditionInline(admin.TabularInline):
    model = Rendition
    extra = 0
    fields = [
        "social_account",
        "platform",
        "status",
        "scheduled_at",
        "attempts",
        "next_retry_at",
        "ambiguous",
        "provider_url",
        "error_summary",
    ]
    readonly_fields = fields
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="error")
    def error_summary(self, obj: Rendition) -> str:
        return _error_summary(obj)


def _error_summary(rendition: Rendition) -> str:
    error = rendition.last_error or {}
    if not error:
        return ""
    return f"{error.get('kind')}: {error.get('message', '')}"[:120]


@admin.register(Publication)
class PublicationAdmin(admin.ModelAdmin):
    """Publications change through the services (revisions, quotas, delivery hooks), so
    the admin shows them and offers the cancel action; it does not edit them."""

    list_display = ["id", "workspace", "status", "scheduled_at", "timezone", "revision", "author"]
    list_filter = ["status", HasAmbiguousRenditionFilter]
    search_fields = ["reference_key", "workspace__slug", "segments__text"]
    list_select_related = ["workspace", "author"]
    date_hierarchy = "created_at"
    fields = [
        "workspace",
        "author",
        "status",
        "scheduled_at",
        "timezone",
        "revision",
        "reference_key",
        "created_at",
        "updated_at",
    ]
    readonly_fields = fields
    inlines = [PublicationSegmentInline, RenditionInline]
    actions = ["cancel"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Cancel what has not gone out")
    def cancel(self, request: HttpRequest, queryset: QuerySet) -> None:
        for publication in queryset:
            services.publication_cancel(publication=publication)
        self.message_user(
            request, f"Cancelled {queryset.count()} publication(s).", messages.SUCCESS
        )


@admin.register(MediaAsset)
class MediaAssetAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "original_name",
        "kind",
        "mime_type",
        "size_bytes",
        "workspace",
        "created_at",
    ]
    list_filter = ["kind", "mime_type"]
    search_fields = ["original_name", "sha256", "workspace__slug"]
    list_select_related = ["workspace"]
    raw_id_fields = ["workspace", "created_by"]
    readonly_fields = [
        "file",
        "kind",
        "mime_type",
        "size_bytes",
        "width",
        "height",
        "duration_s",
        "sha256",
        "created_at",
        "updated_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # uploads are sniffed and checked by media_asset_create
