"""Organizations: creating one (with its first workspace), its usage against the plan,
its workspaces and its members."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from apps.accounts import membership
from apps.accounts.models import Organization, User
from apps.accounts.services import organization_create, workspace_create
from apps.common.errors import DomainError
from apps.web.access import MANAGERS, organization_for, organization_role, user_view
from apps.web.forms.tenants import (
    OrganizationCreateForm,
    OrganizationInviteForm,
    OrganizationRoleForm,
    WorkspaceCreateForm,
)
from apps.web.selectors import organization_usage, workspaces_with_counts


@user_view
@require_http_methods(["GET", "POST"])
def organization_create_view(request: HttpRequest) -> HttpResponse:
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


@user_view
@require_http_methods(["GET"])
def organization_detail(request: HttpRequest, org_slug: str) -> HttpResponse:
    organization = organization_for(request, org_slug)
    return _render_detail(request, organization)


def _render_detail(
    request: HttpRequest,
    organization: Organization,
    *,
    invite_form: OrganizationInviteForm | None = None,
    status: int = 200,
) -> HttpResponse:
    role = organization_role(request.user, organization)
    memberships = organization.memberships.select_related("user").order_by("user__email")
    context = {
        "organization": organization,
        "role": role,
        "can_manage": role in MANAGERS,
        "is_owner": role == "owner",
        "usage": organization_usage(organization=organization, now=timezone.now()),
        "workspaces": workspaces_with_counts(organization),
        "memberships": memberships,
        "role_choices": OrganizationRoleForm.base_fields["role"].choices,
        "invite_form": invite_form or OrganizationInviteForm(),
    }
    return render(request, "web/organizations/detail.html", context, status=status)


@user_view
@require_POST
def organization_invite(request: HttpRequest, org_slug: str) -> HttpResponse:
    organization = organization_for(request, org_slug, manage=True)
    form = OrganizationInviteForm(request.POST)
    if form.is_valid():
        try:
            invitation = membership.member_invite(
                organization=organization,
                email=form.cleaned_data["email"],
                invited_by=request.user,
                site_url=settings.SITE_URL,  # never the Host header
                organization_role=form.cleaned_data["role"],
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, _invited_message(invitation))
            return redirect("organization-detail", org_slug=organization.slug)
    return _render_detail(request, organization, invite_form=form, status=400)


def _invited_message(invitation: membership.Invitation) -> str:
    if invitation.is_new_user:
        return f"Invited {invitation.user.email}: they got an email to set their password."
    return f"Added {invitation.user.email}: they got an email to let them know."


def _member(organization: Organization, user_id: int) -> User:
    return get_object_or_404(User, pk=user_id, organization_memberships__organization=organization)


@user_view
@require_POST
def organization_member_role(request: HttpRequest, org_slug: str, user_id: int) -> HttpResponse:
    organization = organization_for(request, org_slug, manage=True)
    member = _member(organization, user_id)
    form = OrganizationRoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose owner, admin or member.")
    else:
        try:
            membership.organization_role_set(
                organization=organization,
                user=member,
                role=form.cleaned_data["role"],
                changed_by=request.user,
            )
        except (DomainError, ValidationError) as exc:
            messages.error(request, getattr(exc, "message", str(exc)))
        else:
            messages.success(request, f"{member.email} is now {form.cleaned_data['role']}.")
    return redirect("organization-detail", org_slug=organization.slug)


@user_view
@require_POST
def organization_member_remove(request: HttpRequest, org_slug: str, user_id: int) -> HttpResponse:
    organization = organization_for(request, org_slug, manage=True)
    member = _member(organization, user_id)
    try:
        membership.organization_member_remove(
            organization=organization, user=member, removed_by=request.user
        )
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Removed {member.email} from {organization.name}.")
    if member == request.user:
        return redirect("home")
    return redirect("organization-detail", org_slug=organization.slug)


@user_view
@require_http_methods(["GET", "POST"])
def workspace_create_view(request: HttpRequest, org_slug: str) -> HttpResponse:
    organization = organization_for(request, org_slug, manage=True)
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
