from django.contrib import admin

from apps.planning.models import QueueSchedule, QueueSlot


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
