from django.contrib import admin

from apps.approvals.models import ApprovalRule, Review, ReviewComment


@admin.register(ApprovalRule)
class ApprovalRuleAdmin(admin.ModelAdmin):
    list_display = ["workspace", "required", "updated_by", "updated_at"]
    list_filter = ["required"]
    raw_id_fields = ["workspace", "updated_by"]


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ["publication", "workspace", "state", "requested_by", "requested_at"]
    list_filter = ["state"]
    raw_id_fields = ["publication", "workspace", "requested_by", "decided_by"]
    readonly_fields = ["requested_at", "decided_at"]


@admin.register(ReviewComment)
class ReviewCommentAdmin(admin.ModelAdmin):
    list_display = ["publication", "kind", "author", "created_at"]
    list_filter = ["kind"]
    raw_id_fields = ["publication", "workspace", "author"]
