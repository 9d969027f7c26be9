from django.contrib import admin

from apps.providers.live.models import PlatformValidation
from apps.providers.mastodon.models import MastodonApp


@admin.register(MastodonApp)
class MastodonAppAdmin(admin.ModelAdmin):
    """Read-only: rows are written by the connect flow. Deleting one makes the next connect
    on that instance register a fresh app."""

    list_display = ["instance_url", "client_id", "redirect_uri", "updated_at"]
    search_fields = ["instance_url"]
    fields = ("instance_url", "client_id", "redirect_uri", "scopes", "created_at", "updated_at")
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(PlatformValidation)
class PlatformValidationAdmin(admin.ModelAdmin):
    """Read-only: rows are written by `manage.py validate_platform`. A passing one younger
    than 90 days makes its platform `supported` in the catalog."""

    list_display = [
        "platform",
        "passed",
        "api_version",
        "finished_at",
        "account_handle",
        "operator",
    ]
    list_filter = ["platform", "passed"]
    search_fields = ["platform", "account_handle", "operator"]
    date_hierarchy = "finished_at"
    fields = (
        "platform",
        "api_version",
        "passed",
        "steps",
        "leftovers",
        "account",
        "account_handle",
        "operator",
        "started_at",
        "finished_at",
        "created_at",
    )
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
