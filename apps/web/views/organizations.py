"""Organizations: creating one (with its first workspace), and for its owners and admins
its usage against the plan, its workspaces, its members, people with workspace access
only, and open invitations."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from apps.accounts import invitations, membership
from apps.accounts.http import AuthenticatedRequest
from apps.accounts.models import (
    Invitation,
    Organization,
    OrganizationMembership,
    User,
    WorkspaceMembership,
)
from apps.accounts.services import organization_create, workspace_create
from apps.common.errors import DomainError
from apps.web.access import organization_for, post_only, read_only_refusal, verified_user_view
from apps.web.forms.tenants import (
    OrganizationCreateForm,
    OrganizationInviteForm,
    OrganizationRoleForm,
    WorkspaceCreateForm,
)
from apps.web.selectors import organization_usage, workspaces_with_counts
from apps.web.views.team import invite_message, tell_token_changes


@verified_user_view
@require_http_methods(["GET", "POST"])
def organization_create_view(request: AuthenticatedRequest) -> HttpResponse:
    form = OrganizationCreateForm(
        request.POST or None, initial={"default_timezone": request.user.display_timezone}
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        with transaction.atomic():
            organization = organization_create(name=data["organization_name"], owner=request.user)
            workspace = workspace_create(
                organization=organization,
                name=data["workspace_name"],
                default_timezone=data["default_timezone"],
                admin=request.user,
            )
        messages.success(
            request, f"{organization.name} is ready. Connect an account to start posting."
        )
        return redirect("workspace-accounts", workspace_slug=workspace.slug)
    status = 400 if form.errors else 200
    return render(request, "web/organizations/create.html", {"form": form}, status=status)


@verified_user_view
@require_http_methods(["GET"])
def organization_detail(request: AuthenticatedRequest, org_slug: str) -> HttpResponse:
    organization = organization_for(request, org_slug)
    return _render_detail(request, organization)


def _workspace_only(organization: Organization) -> list[dict]:
    """People holding a seat through workspace roles alone, with those workspaces."""
    rows = (
        WorkspaceMembership.objects.filter(workspace__organization=organization)
        .exclude(user__organization_memberships__organization=organization)
        .select_related("user", "workspace")
        .order_by("user__email", "workspace__name")
    )
    people: dict[int, dict] = {}
    for row in rows:
        entry = people.setdefault(row.user_id, {"user": row.user, "workspaces": []})
        entry["workspaces"].append((row.workspace, row.role))
    return list(people.values())


def _render_detail(
    request: AuthenticatedRequest,
    organization: Organization,
    *,
    invite_form: OrganizationInviteForm | None = None,
    status: int = 200,
) -> HttpResponse:
    role = membership.organization_role(request.user, organization)
    memberships = organization.memberships.select_related("user").order_by("user__email")
    open_invitations = (
        Invitation.objects.open()
        .filter(organization=organization)
        .select_related("workspace", "invited_by")
        .order_by("email")
    )
    context = {
        "organization": organization,
        "role": role,
        "can_manage": True,  # organization_for lets only owners and admins in
        "is_owner": role == membership.OWNER,
        "usage": organization_usage(organization=organization, now=timezone.now()),
        "seats": membership.seats(organization),
        "workspaces": workspaces_with_counts(organization),
        "memberships": memberships,
        "workspace_only": _workspace_only(organization),
        "invitations": open_invitations,
        "role_choices": OrganizationMembership.Role.choices,  # OrganizationRoleForm's
        "invite_form": invite_form or OrganizationInviteForm(),
    }
    return render(request, "web/organizations/detail.html", context, status=status)


def _writable(
    request: AuthenticatedRequest, org_slug: str
) -> tuple[Organization, HttpResponse | None]:
    organization = organization_for(request, org_slug)
    return organization, read_only_refusal(request, organization)


@verified_user_view
@post_only("organization-detail", "org_slug")
def organization_invite(request: AuthenticatedRequest, org_slug: str) -> HttpResponse:
    organization, refused = _writable(request, org_slug)
    if refused:
        return refused
    form = OrganizationInviteForm(request.POST)
    if form.is_valid():
        try:
            outcome = invitations.invitation_create(
                organization=organization,
                email=form.cleaned_data["email"],
                role=form.cleaned_data["role"],
                invited_by=request.user,
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, invite_message(outcome, form.cleaned_data["role"]))
            return redirect("organization-detail", org_slug=organization.slug)
    return _render_detail(request, organization, invite_form=form, status=400)


def _member(organization: Organization, user_id: int) -> User:
    """A person holding a seat of the organization (a role in it or in a workspace)."""
    return get_object_or_404(membership.seat_holders(organization), pk=user_id)


@verified_user_view
@post_only("organization-detail", "org_slug")
def organization_member_role(
    request: AuthenticatedRequest, org_slug: str, user_id: int
) -> HttpResponse:
    organization, refused = _writable(request, org_slug)
    if refused:
        return refused
    member = get_object_or_404(
        User, pk=user_id, organization_memberships__organization=organization
    )
    form = OrganizationRoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose owner, admin or member.")
    else:
        try:
            change = membership.organization_role_change(
                organization=organization,
                user=member,
                role=form.cleaned_data["role"],
                changed_by=request.user,
            )
        except (DomainError, ValidationError) as exc:
            messages.error(request, getattr(exc, "message", str(exc)))
        else:
            messages.success(request, f"{member.email} is now {form.cleaned_data['role']}.")
            tell_token_changes(request, change.tokens)
    return redirect("organization-detail", org_slug=organization.slug)


@verified_user_view
@post_only("organization-detail", "org_slug")
def organization_member_remove(
    request: AuthenticatedRequest, org_slug: str, user_id: int
) -> HttpResponse:
    organization, refused = _writable(request, org_slug)
    if refused:
        return refused
    member = _member(organization, user_id)
    try:
        tokens = membership.organization_member_remove(
            organization=organization, user=member, removed_by=request.user
        )
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Removed {member.email} from {organization.name}.")
        tell_token_changes(request, tokens)
    if member == request.user:
        return redirect("home")
    return redirect("organization-detail", org_slug=organization.slug)


def _invitation(organization: Organization, pk: int) -> Invitation:
    return get_object_or_404(Invitation.objects.filter(organization=organization), pk=pk)


@verified_user_view
@post_only("organization-detail", "org_slug")
def organization_invitation_resend(
    request: AuthenticatedRequest, org_slug: str, pk: int
) -> HttpResponse:
    organization, refused = _writable(request, org_slug)
    if refused:
        return refused
    invitation = _invitation(organization, pk)
    try:
        invitations.invitation_resend(invitation=invitation, by=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(
            request, f"Sent {invitation.email} a new link; the old one no longer works."
        )
    return redirect("organization-detail", org_slug=organization.slug)


@verified_user_view
@post_only("organization-detail", "org_slug")
def organization_invitation_revoke(
    request: AuthenticatedRequest, org_slug: str, pk: int
) -> HttpResponse:
    organization, refused = _writable(request, org_slug)
    if refused:
        return refused
    invitation = _invitation(organization, pk)
    try:
        invitations.invitation_revoke(invitation=invitation, by=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Withdrew the invitation of {invitation.email}.")
    return redirect("organization-detail", org_slug=organization.slug)


@verified_user_view
@require_http_methods(["GET", "POST"])
def workspace_create_view(request: AuthenticatedRequest, org_slug: str) -> HttpResponse:
    organization, refused = _writable(request, org_slug)
    if refused:
        return refused
    form = WorkspaceCreateForm(
        request.POST or None, initial={"default_timezone": request.user.display_timezone}
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            workspace = workspace_create(
                organization=organization,
                name=data["name"],
                slug=data["slug"] or None,
                default_timezone=data["default_timezone"],
                admin=request.user,
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, f"Workspace {workspace.name} created.")
            return redirect("workspace-home", workspace_slug=workspace.slug)
    status = 400 if form.errors else 200
    context = {"form": form, "organization": organization}
    return render(request, "web/organizations/workspace_create.html", context, status=status)
