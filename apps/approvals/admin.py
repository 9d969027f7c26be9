from django.contrib import admin
from django.http import HttpRequest

from apps.approvals.models import ApprovalRule, PortalLink, Review, ReviewComment


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


@admin.register(PortalLink)
class PortalLinkAdmin(admin.ModelAdmin):
    list_display = ["label", "workspace", "created_by", "expires_at", "revoked_at", "last_used_at"]
    list_filter = ["revoked_at"]
    search_fields = ["label"]
    list_select_related = ["workspace", "created_by"]
    raw_id_fields = ["workspace", "created_by", "revoked_by", "publications"]
    # The secret's hash is of no use to an operator, and a link is revoked, never edited.
    exclude = ["secret_hash"]
    readonly_fields = ["expires_at", "last_used_at", "revoked_at", "revoked_by"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a link is made by a member, who is shown its address once
