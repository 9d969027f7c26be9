from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.common.admin_paging import BoundedCountPaginator
from apps.security import two_factor
from apps.security.models import AuthAttempt, RateCounter, RecoveryCode, TotpDevice


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(AuthAttempt)
class AuthAttemptAdmin(ReadOnlyAdmin):
    """Recent counted attempts; deleting an account's rows lifts its lockout at once."""

    list_display = ["created_at", "action", "scope", "key"]
    list_filter = ["action", "scope"]
    search_fields = ["key"]
    show_full_result_count = False
    paginator = BoundedCountPaginator


@admin.register(RateCounter)
class RateCounterAdmin(ReadOnlyAdmin):
    list_display = ["window_start", "key", "hits"]
    search_fields = ["key"]


@admin.register(TotpDevice)
class TotpDeviceAdmin(ReadOnlyAdmin):
    list_display = ["user", "confirmed_at", "created_at"]
    list_select_related = ["user"]
    search_fields = ["user__email"]
    exclude = ["secret_key_id", "secret_ciphertext", "last_used_step"]
    actions = ["turn_off"]

    @admin.action(description="Turn off two-factor (the person lost their phone and codes)")
    def turn_off(self, request: HttpRequest, queryset: QuerySet[TotpDevice]) -> None:
        devices = list(queryset.select_related("user"))
        for device in devices:
            two_factor.totp_disable(user=device.user)
        self.message_user(request, f"Two-factor turned off for {len(devices)} person(s).")


@admin.register(RecoveryCode)
class RecoveryCodeAdmin(ReadOnlyAdmin):
    list_display = ["user", "used_at", "created_at"]
    list_select_related = ["user"]
    search_fields = ["user__email"]
    exclude = ["code_hash"]
