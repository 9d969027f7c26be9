"""A workspace's team: who has which role, inviting by email, role changes, removal."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.accounts import membership
from apps.accounts.models import OrganizationMembership, User, WorkspaceMembership
from apps.accounts.permissions import Action
from apps.common.errors import DomainError
from apps.web.access import WorkspaceRequest, workspace_view
from apps.web.forms.tenants import WorkspaceInviteForm, WorkspaceRoleForm


def _render(
    request: WorkspaceRequest, *, form: WorkspaceInviteForm | None = None, status: int = 200
) -> HttpResponse:
    workspace = request.workspace
    organization = workspace.organization
    org_admins = (
        OrganizationMembership.objects.filter(
            organization=organization,
            role__in=[OrganizationMembership.Role.OWNER, OrganizationMembership.Role.ADMIN],
        )
        .select_related("user")
        .order_by("user__email")
    )
    admin_ids = {m.user_id for m in org_admins}
    members = (
        WorkspaceMembership.objects.filter(workspace=workspace)
        .exclude(user_id__in=admin_ids)
        .select_related("user")
        .order_by("user__email")
    )
    context = {
        "workspace": workspace,
        "section": "team",
        "organization_admins": org_admins,
        "members": members,
        "role_choices": WorkspaceMembership.Role.choices,
        "form": form or WorkspaceInviteForm(),
    }
    return render(request, "web/team/workspace.html", context, status=status)


@workspace_view(Action.VIEW)
@require_GET
def workspace_team(request: WorkspaceRequest) -> HttpResponse:
    return _render(request)


@workspace_view(Action.ADMIN)
@require_POST
def workspace_invite(request: WorkspaceRequest) -> HttpResponse:
    form = WorkspaceInviteForm(request.POST)
    if form.is_valid():
        try:
            invitation = membership.member_invite(
                organization=request.workspace.organization,
                email=form.cleaned_data["email"],
                invited_by=request.user,
                site_url=settings.SITE_URL,  # never the Host header
                workspace=request.workspace,
                workspace_role=form.cleaned_data["role"],
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            who = invitation.user.email
            if invitation.is_new_user:
                messages.success(request, f"Invited {who}: they got an email to set a password.")
            else:
                messages.success(request, f"Added {who} as {form.cleaned_data['role']}.")
            return redirect("workspace-team", workspace_slug=request.workspace.slug)
    return _render(request, form=form, status=400)


def _member(request: WorkspaceRequest, user_id: int) -> User:
    return get_object_or_404(User, pk=user_id, workspace_memberships__workspace=request.workspace)


@workspace_view(Action.ADMIN)
@require_POST
def workspace_member_role(request: WorkspaceRequest, user_id: int) -> HttpResponse:
    member = _member(request, user_id)
    form = WorkspaceRoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose admin, editor or viewer.")
    else:
        try:
            membership.workspace_member_set(
                workspace=request.workspace, user=member, role=form.cleaned_data["role"]
            )
        except DomainError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"{member.email} is now {form.cleaned_data['role']}.")
    return redirect("workspace-team", workspace_slug=request.workspace.slug)


@workspace_view(Action.ADMIN)
@require_POST
def workspace_member_remove(request: WorkspaceRequest, user_id: int) -> HttpResponse:
    member = _member(request, user_id)
    membership.workspace_member_remove(workspace=request.workspace, user=member)
    messages.success(request, f"Removed {member.email} from {request.workspace.name}.")
    if member == request.user:
        return redirect("home")
    return redirect("workspace-team", workspace_slug=request.workspace.slug)
