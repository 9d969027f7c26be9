"""Operators' view of the inbox: comments as read, replies with their attempts, and each
post's read schedule. Read-only; a reply whose outcome is unknown is settled by a member
from the thread (they check the platform), not here."""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.inbox.models import Comment, CommentSync, Reply, ReplyAttempt


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Comment)
class CommentAdmin(_ReadOnly):
    list_display = [
        "id",
        "platform",
        "author_handle",
        "workspace",
        "state",
        "is_ours",
        "commented_at",
    ]
    list_filter = ["platform", "state", "is_ours"]
    search_fields = ["platform_id", "author_handle", "text"]
    list_select_related = ["workspace"]
    raw_id_fields = ["rendition", "social_account", "parent", "assignee", "workspace"]
    show_full_result_count = False


class ReplyAttemptInline(admin.TabularInline):
    model = ReplyAttempt
    extra = 0
    fields = ("kind", "outcome", "job_id", "provider_reply_id", "error", "started_at")
    readonly_fields = fields
    can_delete = False


@admin.register(Reply)
class ReplyAdmin(_ReadOnly):
    list_display = ["id", "comment", "workspace", "status", "sent_at", "created_at"]
    list_filter = ["status"]
    search_fields = ["text", "provider_reply_id"]
    list_select_related = ["workspace", "comment"]
    raw_id_fields = ["comment", "author", "approved_by", "workspace"]
    inlines = [ReplyAttemptInline]


@admin.register(CommentSync)
class CommentSyncAdmin(_ReadOnly):
    list_display = ["rendition", "platform", "workspace", "next_read_at", "last_read_at", "reads"]
    list_filter = ["platform"]
    search_fields = ["unavailable"]
    list_select_related = ["workspace"]
    raw_id_fields = ["rendition", "workspace"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).order_by("next_read_at")
