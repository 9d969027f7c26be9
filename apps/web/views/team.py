"""A workspace's team: who has which role, inviting by email (pending until accepted),
resending and revoking invitations, role changes, removal."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from apps.accounts import invitations, membership
from apps.accounts.models import Invitation, OrganizationMembership, User, WorkspaceMembership
from apps.accounts.permissions import Action
from apps.accounts.token_roles import TokenChange
from apps.accounts.token_roles import describe as token_changes_sentence
from apps.common.errors import DomainError
from apps.web.access import WorkspaceRequest, post_only, workspace_view
from apps.web.forms.tenants import WorkspaceInviteForm, WorkspaceRoleForm


def invite_message(outcome: invitations.InviteOutcome, role: str) -> str:
    if outcome.added is not None:
        return f"Added {outcome.email} as {role}: they are in the organization already."
    return (
        f"Invited {outcome.email} as {role}. They get access once they accept the emailed "
        f"link (valid {invitations.INVITATION_MAX_AGE.days} days)."
    )


def _render(
    request: WorkspaceRequest, *, form: WorkspaceInviteForm | None = None, status: int = 200
) -> HttpResponse:
    workspace = request.workspace
    organization = workspace.organization
    org_admins = (
        OrganizationMembership.objects.filter(
            organization=organization, role__in=membership.MANAGERS
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
        "invitations": (
            Invitation.objects.open()
            .filter(workspace=workspace)
            .select_related("invited_by")
            .order_by("email")
        ),
        "manages_organization": membership.manages(request.user, organization),
        "role_choices": WorkspaceMembership.Role.choices,
        "form": form or WorkspaceInviteForm(),
    }
    return render(request, "web/team/workspace.html", context, status=status)


@workspace_view(Action.VIEW)
@require_GET
def workspace_team(request: WorkspaceRequest) -> HttpResponse:
    return _render(request)


@workspace_view(Action.ADMIN)
@post_only("workspace-team")
def workspace_invite(request: WorkspaceRequest) -> HttpResponse:
    form = WorkspaceInviteForm(request.POST)
    if form.is_valid():
        try:
            outcome = invitations.invitation_create(
                organization=request.workspace.organization,
                email=form.cleaned_data["email"],
                role=form.cleaned_data["role"],
                invited_by=request.user,
                workspace=request.workspace,
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, invite_message(outcome, form.cleaned_data["role"]))
            return redirect("workspace-team", workspace_slug=request.workspace.slug)
    return _render(request, form=form, status=400)


def _invitation(request: WorkspaceRequest, pk: int) -> Invitation:
    return get_object_or_404(Invitation.objects.filter(workspace=request.workspace), pk=pk)


@workspace_view(Action.ADMIN)
@post_only("workspace-team")
def workspace_invitation_resend(request: WorkspaceRequest, pk: int) -> HttpResponse:
    invitation = _invitation(request, pk)
    try:
        invitations.invitation_resend(invitation=invitation, by=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(
            request, f"Sent {invitation.email} a new link; the old one no longer works."
        )
    return redirect("workspace-team", workspace_slug=request.workspace.slug)


@workspace_view(Action.ADMIN)
@post_only("workspace-team")
def workspace_invitation_revoke(request: WorkspaceRequest, pk: int) -> HttpResponse:
    invitation = _invitation(request, pk)
    try:
        invitations.invitation_revoke(invitation=invitation, by=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Withdrew the invitation of {invitation.email}.")
    return redirect("workspace-team", workspace_slug=request.workspace.slug)


def _member(request: WorkspaceRequest, user_id: int) -> User:
    return get_object_or_404(User, pk=user_id, workspace_memberships__workspace=request.workspace)


@workspace_view(Action.ADMIN)
@post_only("workspace-team")
def workspace_member_role(request: WorkspaceRequest, user_id: int) -> HttpResponse:
    member = _member(request, user_id)
    form = WorkspaceRoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose admin, editor or viewer.")
    else:
        try:
            change = membership.workspace_member_change(
                workspace=request.workspace,
                user=member,
                role=form.cleaned_data["role"],
                actor=request.user,
            )
        except DomainError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"{member.email} is now {form.cleaned_data['role']}.")
            tell_token_changes(request, change.tokens)
    return redirect("workspace-team", workspace_slug=request.workspace.slug)


def tell_token_changes(request: HttpRequest, changes: list[TokenChange]) -> None:
    """Name each API token a role change narrowed or revoked, so whoever made the change
    sees what it did beyond the page."""
    if changes:
        messages.warning(request, token_changes_sentence(changes))


@workspace_view(Action.ADMIN)
@post_only("workspace-team")
def workspace_member_remove(request: WorkspaceRequest, user_id: int) -> HttpResponse:
    member = _member(request, user_id)
    tokens = membership.workspace_member_remove(
        workspace=request.workspace, user=member, removed_by=request.user
    )
    messages.success(request, f"Removed {member.email} from {request.workspace.name}.")
    tell_token_changes(request, tokens)
    if member == request.user:
        return redirect("home")
    return redirect("workspace-team", workspace_slug=request.workspace.slug)
