"""The admin of a publication's own rows: its media. Publications themselves are shown
with their renditions by ``apps.publishing.admin``."""

from django.contrib import admin
from django.http import HttpRequest

from apps.publications.models import MediaAsset, PublicationSegment


class PublicationSegmentInline(admin.TabularInline):
    model = PublicationSegment
    extra = 0
    fields = ("position", "text")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


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
        # Its default alt text is part of every post that shows it: changed in the media
        # library or the API (``media_alt_text_set``), where the approval rule applies.
        "alt_text",
        "created_at",
        "updated_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # uploads are sniffed and checked by media_asset_create
