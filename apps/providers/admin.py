from django.contrib import admin

from apps.providers.mastodon.models import MastodonApp


@admin.register(MastodonApp)
class MastodonAppAdmin(admin.ModelAdmin):
    """Read-only: rows are written by the connect flow. Deleting one makes the next connect
    on that instance register a fresh app."""

    list_display = ["instance_url", "client_id", "redirect_uri", "updated_at"]
    search_fields = ["instance_url"]
    fields = ["instance_url", "client_id", "redirect_uri", "scopes", "created_at", "updated_at"]
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
