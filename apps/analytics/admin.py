"""Operators see the read schedules (to find a stuck or stopped one) and the budgets."""

from django.contrib import admin

from apps.analytics.models import FollowersSchedule, MetricsSchedule, ReadBudget


@admin.register(MetricsSchedule)
class MetricsScheduleAdmin(admin.ModelAdmin):
    list_display = ("rendition", "platform", "next_sync_at", "last_synced_at", "syncs")
    list_filter = ("platform", "stopped_reason")
    list_select_related = ("rendition",)
    raw_id_fields = ("rendition", "workspace", "social_account")
    readonly_fields = ("published_at", "last_synced_at", "syncs", "last_error", "stopped_reason")


@admin.register(FollowersSchedule)
class FollowersScheduleAdmin(admin.ModelAdmin):
    list_display = ("social_account", "platform", "next_sync_at", "last_synced_at")
    list_select_related = ("social_account",)
    list_filter = ("platform",)
    raw_id_fields = ("social_account", "workspace")
    readonly_fields = ("last_synced_at", "last_error")


@admin.register(ReadBudget)
class ReadBudgetAdmin(admin.ModelAdmin):
    list_display = ("platform", "day", "used")
    list_filter = ("platform",)
    readonly_fields = ("platform", "day", "used")
