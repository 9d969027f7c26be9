"""Who belongs to an organization and its workspaces: inviting, roles, removal, seats.

Every client (web, API, admin, commands) changes memberships through these functions, so
the product's guards hold everywhere: a new member of an organization takes one of its
seats, the last owner stays, and only owners grant or revoke ownership. A workspace
member is always a member of its organization (and so holds a seat).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from apps.accounts.models import (
    Organization,
    OrganizationMembership,
    User,
    Workspace,
    WorkspaceMembership,
)
from apps.common import events
from apps.common.errors import Conflict, PermissionDenied, QuotaExceeded

OWNER = OrganizationMembership.Role.OWNER


@dataclass(frozen=True)
class Invitation:
    user: User
    is_new_user: bool


def _lock_organization(organization: Organization) -> Organization:
    # Seats and the last-owner guard count rows: the organization's row lock serializes
    # concurrent invites and removals so two of them cannot both take the last seat.
    return Organization.objects.select_for_update().get(pk=organization.pk)


def _ensure_seat(organization: Organization, user: User | None) -> None:
    """Refuse a new member when every seat is taken (members already in count once)."""
    if user is not None and organization.memberships.filter(user=user).exists():
        return
    used = organization.memberships.count()
    if used >= organization.seats:
        raise QuotaExceeded(
            f"All {organization.seats} seats of {organization.name} are taken. Remove a member "
            "or raise the plan's seats first.",
            code="SEATS_EXHAUSTED",
            details={"seats": organization.seats, "used": used},
        )


@transaction.atomic
def organization_member_set(
    *, organization: Organization, user: User, role: str
) -> OrganizationMembership:
    """Give the user this organization role, taking a seat when they were not a member.

    Errors: QuotaExceeded SEATS_EXHAUSTED. Role guards (ownership, last owner) are
    ``organization_role_set``'s; this is the operator's and the invitation's way in.
    """
    organization = _lock_organization(organization)
    _ensure_seat(organization, user)
    membership, _ = OrganizationMembership.objects.update_or_create(
        organization=organization, user=user, defaults={"role": role}
    )
    return membership


@transaction.atomic
def workspace_member_set(*, workspace: Workspace, user: User, role: str) -> WorkspaceMembership:
    """Give the user this workspace role. Someone outside the organization joins it as a
    member first, taking a seat (QuotaExceeded SEATS_EXHAUSTED when none is free)."""
    organization = _lock_organization(workspace.organization)
    if not organization.memberships.filter(user=user).exists():
        organization_member_set(
            organization=organization, user=user, role=OrganizationMembership.Role.MEMBER
        )
    membership = WorkspaceMembership.objects.filter(
        workspace=workspace, user=user
    ).first() or WorkspaceMembership(workspace=workspace, user=user)
    previous = membership.role if membership.pk else None
    membership.role = role
    membership.full_clean()
    membership.save()
    if previous is not None and previous != role:
        events.emit(
            events.MEMBER_ROLE_CHANGED,
            organization=organization,
            workspace=workspace,
            user=user,
            previous=previous,
            role=role,
        )
    return membership


def workspace_member_remove(*, workspace: Workspace, user: User) -> None:
    """Take the person out of one workspace. Organization owners and admins keep their
    access through the organization (remove them there); the seat stays taken."""
    deleted, _ = WorkspaceMembership.objects.filter(workspace=workspace, user=user).delete()
    if deleted:
        events.emit(
            events.MEMBER_REMOVED,
            organization=workspace.organization,
            workspace=workspace,
            user=user,
        )


@transaction.atomic
def member_invite(
    *,
    organization: Organization,
    email: str,
    invited_by: User,
    site_url: str,
    organization_role: str | None = None,
    workspace: Workspace | None = None,
    workspace_role: str | None = None,
) -> Invitation:
    """Add the person with this email to the organization (and to workspace with
    workspace_role), creating their user when new; they get an email with a link to set
    their password (new users) or to log in. Takes a seat when they were not a member.

    Errors: QuotaExceeded SEATS_EXHAUSTED, PermissionDenied when a non-owner grants
    ownership.
    """
    organization = _lock_organization(organization)
    email = User.objects.normalize_email(email).lower()
    user = User.objects.filter(email__iexact=email).first()
    _ensure_seat(organization, user)
    if organization_role == OWNER:
        _require_owner(organization, invited_by)
    is_new = user is None
    if user is None:
        user = User.objects.create_user(email=email, password=None)  # unusable until set
    current = organization.memberships.filter(user=user).first()
    if current is None:
        organization_member_set(
            organization=organization,
            user=user,
            role=organization_role or OrganizationMembership.Role.MEMBER,
        )
    elif organization_role and organization_role != current.role:
        organization_role_set(
            organization=organization, user=user, role=organization_role, changed_by=invited_by
        )
    if workspace is not None and workspace_role:
        workspace_member_set(workspace=workspace, user=user, role=workspace_role)
    role = (workspace_role if workspace is not None else None) or organization_role or "member"
    events.emit(
        events.MEMBER_INVITED,
        organization=organization,
        workspace=workspace,
        email=email,
        role=role,
    )
    where = workspace.name if workspace is not None else organization.name
    transaction.on_commit(
        lambda: _send_invitation(
            user=user, is_new=is_new, where=where, invited_by=invited_by, site_url=site_url
        )
    )
    return Invitation(user=user, is_new_user=is_new)


def _send_invitation(
    *, user: User, is_new: bool, where: str, invited_by: User, site_url: str
) -> None:
    base = site_url.rstrip("/")
    if is_new:
        uid = urlsafe_base64_encode(force_bytes(user.pk))
        token = default_token_generator.make_token(user)
        link = base + reverse("password_reset_confirm", kwargs={"uidb64": uid, "token": token})
    else:
        link = base + reverse("login")
    context = {"user": user, "is_new": is_new, "where": where, "inviter": invited_by, "link": link}
    send_mail(
        subject=f"You have been added to {where}",
        message=render_to_string("web/emails/invitation.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[user.email],
    )


def _require_owner(organization: Organization, user: User) -> None:
    if not organization.memberships.filter(user=user, role=OWNER).exists():
        raise PermissionDenied(
            "Only an owner can make someone an owner or change an owner's role.",
            details={"role": ["Only owners grant or revoke ownership."]},
        )


def _guard_last_owner(organization: Organization, user: User) -> None:
    owners = organization.memberships.filter(role=OWNER)
    if owners.filter(user=user).exists() and owners.count() == 1:
        raise Conflict(
            "An organization keeps at least one owner. Make someone else an owner first.",
            code="LAST_OWNER",
            details={"user": user.pk},
        )


@transaction.atomic
def organization_role_set(
    *, organization: Organization, user: User, role: str, changed_by: User
) -> OrganizationMembership:
    """Change a member's organization role. Granting or revoking ownership takes an
    owner; the last owner keeps the role (Conflict LAST_OWNER)."""
    organization = _lock_organization(organization)
    membership = organization.memberships.get(user=user)
    if OWNER in (role, membership.role):
        _require_owner(organization, changed_by)
    if membership.role == OWNER and role != OWNER:
        _guard_last_owner(organization, user)
    previous, membership.role = membership.role, role
    membership.full_clean()
    membership.save(update_fields=["role", "updated_at"])
    if previous != role:
        events.emit(
            events.MEMBER_ROLE_CHANGED,
            organization=organization,
            workspace=None,
            user=user,
            previous=previous,
            role=role,
        )
    return membership


@transaction.atomic
def organization_member_remove(*, organization: Organization, user: User, removed_by: User) -> None:
    """Remove the person from the organization and every workspace in it (the seat is
    freed). The last owner cannot be removed; only owners remove owners."""
    organization = _lock_organization(organization)
    membership = organization.memberships.filter(user=user).first()
    if membership is not None and membership.role == OWNER:
        _require_owner(organization, removed_by)
        _guard_last_owner(organization, user)
    WorkspaceMembership.objects.filter(user=user, workspace__organization=organization).delete()
    if membership is not None:
        membership.delete()
        events.emit(events.MEMBER_REMOVED, organization=organization, workspace=None, user=user)


def is_workspace_member(user: User, workspace: Workspace) -> bool:
    """The user is active and holds a role in the workspace (directly, or as an owner or
    admin of its organization)."""
    from apps.accounts.permissions import workspace_role

    return workspace_role(user, workspace) is not None
