from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from apps.accounts import invitations, services, verification
from apps.accounts.models import (
    ApiToken,
    CliLogin,
    Invitation,
    Organization,
    OrganizationMembership,
    SocialAccount,
    User,
    Workspace,
    WorkspaceMembership,
)


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ["email"]
    list_display = ["email", "name", "email_verified_at", "is_staff", "is_active", "created_at"]
    list_filter = ["is_staff", "is_superuser", "is_active", "email_verified_at"]
    search_fields = ["email", "name"]
    readonly_fields = ["last_login", "email_verified_at", "created_at", "updated_at"]
    fieldsets = [
        (None, {"fields": ["email", "password"]}),
        ("Profile", {"fields": ["name", "display_timezone"]}),
        ("Permissions", {"fields": ["is_active", "is_staff", "is_superuser", "groups"]}),
        ("Dates", {"fields": ["last_login", "email_verified_at", "created_at", "updated_at"]}),
    ]
    add_fieldsets = [(None, {"classes": ["wide"], "fields": ["email", "password1", "password2"]})]
    actions = ["mark_email_verified"]

    @admin.action(description="Mark the email address verified (you checked it yourself)")
    def mark_email_verified(self, request, queryset) -> None:
        n = sum(
            verification.user_mark_email_verified(user=user, method="operator") for user in queryset
        )
        self.message_user(request, f"Marked {n} address(es) verified.", messages.SUCCESS)


class WorkspaceInline(admin.TabularInline):
    model = Workspace
    extra = 0
    fields = ["name", "slug", "default_timezone"]
    show_change_link = True


class OrganizationMembershipInline(admin.TabularInline):
    model = OrganizationMembership
    extra = 0
    raw_id_fields = ["user"]


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "slug",
        "state",
        "monthly_post_quota",
        "inflight_cap",
        "webhook_inflight_cap",
        "seats",
    ]
    list_filter = ["state"]
    search_fields = ["name", "slug"]
    readonly_fields = ["created_at", "updated_at"]
    inlines = [WorkspaceInline, OrganizationMembershipInline]
    actions = ["suspend", "reactivate"]

    @admin.action(description="Suspend (their jobs wait, nothing is failed)")
    def suspend(self, request, queryset) -> None:
        n = queryset.update(state=Organization.State.SUSPENDED)
        self.message_user(request, f"Suspended {n} organization(s).", messages.SUCCESS)

    @admin.action(description="Reactivate")
    def reactivate(self, request, queryset) -> None:
        n = queryset.update(state=Organization.State.ACTIVE)
        self.message_user(request, f"Reactivated {n} organization(s).", messages.SUCCESS)


class WorkspaceMembershipInline(admin.TabularInline):
    model = WorkspaceMembership
    extra = 0
    raw_id_fields = ["user"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "organization", "default_timezone", "created_at"]
    list_filter = ["organization__state"]
    search_fields = ["name", "slug", "organization__name", "organization__slug"]
    list_select_related = ["organization"]
    raw_id_fields = ["organization"]
    readonly_fields = ["created_at", "updated_at"]
    inlines = [WorkspaceMembershipInline]


@admin.register(OrganizationMembership)
class OrganizationMembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "organization", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["user__email", "organization__name", "organization__slug"]
    list_select_related = ["user", "organization"]
    raw_id_fields = ["user", "organization"]


@admin.register(WorkspaceMembership)
class WorkspaceMembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "workspace", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["user__email", "workspace__name", "workspace__slug"]
    list_select_related = ["user", "workspace"]
    raw_id_fields = ["user", "workspace"]


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ["email", "organization", "workspace", "role", "expires_at", "status_label"]
    list_filter = ["role"]
    search_fields = ["email", "organization__slug", "workspace__slug"]
    list_select_related = ["organization", "workspace"]
    # The token's hash is never shown; invitations are made from the organization and team
    # pages, where the link is emailed.
    fields = (
        "email",
        "organization",
        "workspace",
        "role",
        "invited_by",
        "expires_at",
        "accepted_at",
        "accepted_by",
        "revoked_at",
        "created_at",
    )
    readonly_fields = fields
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(description="Status")
    def status_label(self, invitation: Invitation) -> str:
        return invitation.status

    @admin.action(description="Revoke (the link stops working)")
    def revoke(self, request, queryset) -> None:
        n = 0
        for invitation in queryset.open():
            invitations.invitation_revoke(invitation=invitation, by=None)
            n += 1
        self.message_user(request, f"Revoked {n} invitation(s).", messages.SUCCESS)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "prefix",
        "workspace",
        "client",
        "scopes",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["client", "revoked_at"]
    search_fields = ["name", "prefix", "workspace__slug"]
    list_select_related = ["workspace"]
    # The hash is never shown; tokens are created through the app, API or command.
    fields = (
        "name",
        "prefix",
        "workspace",
        "scopes",
        "client",
        "created_by",
        "parent",
        "last_used_at",
        "revoked_at",
    )
    readonly_fields = fields
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description="Revoke (and the tokens minted from them)")
    def revoke(self, request, queryset) -> None:
        for token in queryset:
            services.api_token_revoke(token=token)
        self.message_user(request, f"Revoked {queryset.count()} token(s).", messages.SUCCESS)


@admin.register(SocialAccount)
class SocialAccountAdmin(admin.ModelAdmin):
    list_display = ["handle", "platform", "workspace", "status", "token_expires_at"]
    list_filter = ["platform", "status"]
    search_fields = ["handle", "remote_id", "workspace__slug"]
    list_select_related = ["workspace"]
    raw_id_fields = ["workspace"]
    # Credentials never appear here: only which key sealed them.
    fields = [
        "workspace",
        "platform",
        "remote_id",
        "handle",
        "display_name",
        "status",
        "token_expires_at",
        "settings",
        "credentials_key_id",
        "created_at",
        "updated_at",
    ]
    readonly_fields = ["credentials_key_id", "created_at", "updated_at"]


@admin.register(CliLogin)
class CliLoginAdmin(admin.ModelAdmin):
    """Command-line logins waiting or done, read-only (the device code is kept hashed)."""

    list_display = ["user_code", "client_name", "confirmed_by", "workspace", "expires_at", "token"]
    list_filter = ["confirmed_at"]
    search_fields = ["user_code", "client_name", "confirmed_by__email"]
    list_select_related = ["confirmed_by", "workspace", "token"]
    fields = (
        "user_code",
        "client_name",
        "expires_at",
        "confirmed_by",
        "workspace",
        "scopes",
        "confirmed_at",
        "token",
        "created_at",
    )
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
