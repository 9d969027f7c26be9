"""Writes the web app needs that the accounts services don't offer yet: inviting and
removing members, role changes with their guards, and disconnecting accounts.

Membership rows are the accounts app's; these functions keep its rules (roles from its
choices, `workspace_member_set`, `social_account_connect`) and add the product's guards:
seats, the last owner, and who may grant ownership.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from apps.accounts.models import (
    Organization,
    OrganizationMembership,
    SocialAccount,
    User,
    Workspace,
    WorkspaceMembership,
)
from apps.accounts.services import organization_member_set, social_account_connect
from apps.accounts.services import workspace_member_set as _workspace_member_set
from apps.common.errors import Conflict, PermissionDenied, QuotaExceeded

OWNER = OrganizationMembership.Role.OWNER


@dataclass(frozen=True)
class Invitation:
    user: User
    is_new_user: bool


def _lock_organization(organization: Organization) -> Organization:
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
        _workspace_member_set(workspace=workspace, user=user, role=workspace_role)
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
    membership.role = role
    membership.full_clean()
    membership.save(update_fields=["role", "updated_at"])
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


def workspace_member_remove(*, workspace: Workspace, user: User) -> None:
    """Take the person out of one workspace. Organization owners and admins keep their
    access through the organization (remove them there)."""
    WorkspaceMembership.objects.filter(workspace=workspace, user=user).delete()


def workspace_member_set(*, workspace: Workspace, user: User, role: str) -> WorkspaceMembership:
    """Change the workspace role of someone who is already a member of its organization."""
    if not workspace.organization.memberships.filter(user=user).exists():
        raise Conflict(
            "Invite the person first: they are not a member of the organization.",
            code="NOT_A_MEMBER",
            details={"user": user.pk},
        )
    return _workspace_member_set(workspace=workspace, user=user, role=role)


@transaction.atomic
def social_account_disconnect(*, account: SocialAccount) -> str:
    """Disconnect an account: its stored credentials are erased. An account with delivery
    history is kept, disabled, so past posts keep their record ("disabled"); one without
    is deleted ("deleted"). Scheduled posts to a disabled account fail with the action
    `reconnect` when they fall due."""
    account = SocialAccount.objects.select_for_update().get(pk=account.pk)
    if not account.renditions.exists():
        account.delete()
        return "deleted"
    account.status = SocialAccount.Status.DISABLED
    account.credentials_ciphertext = None
    account.credentials_key_id = ""
    account.token_expires_at = None
    account.save(
        update_fields=[
            "status",
            "credentials_ciphertext",
            "credentials_key_id",
            "token_expires_at",
            "updated_at",
        ]
    )
    return "disabled"


def sandbox_account_reconnect(*, account: SocialAccount) -> SocialAccount:
    """Reconnect a sandbox account: fetch fresh tokens from the sandbox platform's side
    of the account, as a platform's consent screen would issue them."""
    from apps.sandbox.models import SandboxAccount
    from apps.sandbox.server import ACCESS_TOKEN_TTL

    remote = SandboxAccount.objects.filter(pk=account.remote_id).first()
    if remote is None:
        raise Conflict(
            "This sandbox account no longer exists on the sandbox platform.",
            code="SANDBOX_ACCOUNT_GONE",
            details={"account": account.pk},
        )
    return social_account_connect(
        workspace=account.workspace,
        platform=account.platform,
        remote_id=account.remote_id,
        handle=account.handle,
        display_name=account.display_name,
        credentials={"access_token": remote.access_token, "refresh_token": remote.refresh_token},
        token_expires_at=timezone.now() + ACCESS_TOKEN_TTL,
        settings=account.settings,
    )
