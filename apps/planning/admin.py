from django.contrib import admin

from apps.planning.models import EvergreenPost, EvergreenShare, QueueSchedule, QueueSlot


class QueueSlotInline(admin.TabularInline):
    model = QueueSlot
    extra = 0
    fields = ["weekday", "time"]


@admin.register(QueueSchedule)
class QueueScheduleAdmin(admin.ModelAdmin):
    """A workspace's default posting slots, or one account's own."""

    list_display = ["id", "workspace", "social_account", "timezone", "updated_at"]
    list_select_related = ["workspace", "social_account"]
    search_fields = ["workspace__slug", "social_account__handle"]
    raw_id_fields = ["workspace", "social_account"]
    inlines = [QueueSlotInline]

    def save_formset(self, request, form, formset, change) -> None:
        # Slots carry their schedule's workspace directly (for scoping).
        for slot in formset.save(commit=False):
            slot.workspace_id = form.instance.workspace_id
            slot.save()
        for slot in formset.deleted_objects:
            slot.delete()


class EvergreenShareInline(admin.TabularInline):
    model = EvergreenShare
    extra = 0
    fields = ["number", "slot_at", "status", "publication", "text", "left_out", "reason"]
    readonly_fields = ["number", "slot_at", "status", "publication", "text", "left_out", "reason"]
    raw_id_fields = ["publication"]
    can_delete = False


@admin.register(EvergreenPost)
class EvergreenPostAdmin(admin.ModelAdmin):
    """Posts the queue shares again, with their turns."""

    list_display = [
        "id",
        "workspace",
        "source",
        "status",
        "every_days",
        "shares_made",
        "next_check_at",
    ]
    list_filter = ["status"]
    list_select_related = ["workspace", "source"]
    search_fields = ["workspace__slug"]
    raw_id_fields = ["workspace", "source", "created_by"]
    readonly_fields = ["shares_made", "note", "paused_at", "ended_at", "created_at"]
    inlines = [EvergreenShareInline]
