"""Invitations: inviting an address to an organization or a workspace, resending, revoking,
and accepting through the emailed single-use link.

An invitation grants nothing until it is accepted, and only a verified user with the
invited address accepts it: an account someone opened with another person's address
cannot collect that person's invitations. A workspace invitation gives that workspace
only; organization membership comes only from an organization invitation. An open
invitation reserves a seat, so an organization cannot invite more people than it has seats.

One shortcut stays: an organization owner or admin adding someone who is already a verified
member of the organization (an organization role) to one of its workspaces adds them at
once, as before; they get an email saying so.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from apps.accounts import membership
from apps.accounts.models import (
    Invitation,
    Organization,
    OrganizationMembership,
    User,
    Workspace,
    WorkspaceMembership,
)
from apps.accounts.verification import user_mark_email_verified
from apps.common import events
from apps.common.errors import Conflict, PermissionDenied, ValidationFailed

INVITATION_MAX_AGE = timedelta(days=7)


@dataclass(frozen=True)
class InviteOutcome:
    """What inviting an address did: an emailed invitation, or (``added``) a workspace role
    given at once to an organization member."""

    email: str
    invitation: Invitation | None = None
    added: WorkspaceMembership | None = None


def _new_token() -> tuple[str, str]:
    clear = secrets.token_urlsafe(32)
    return clear, Invitation.hash_token(clear)


def invitation_link(clear: str) -> str:
    return settings.SITE_URL.rstrip("/") + reverse("invitation", kwargs={"token": clear})


def _check_role(workspace: Workspace | None, role: str) -> None:
    roles = (
        OrganizationMembership.Role.values if workspace is None else WorkspaceMembership.Role.values
    )
    if role not in roles:
        raise ValidationFailed(
            f"Choose one of {', '.join(roles)}.", details={"role": [f"Unknown role '{role}'."]}
        )


def _refuse_current_members(
    organization: Organization, workspace: Workspace | None, user: User | None
) -> None:
    if user is None:
        return
    org_role = membership.organization_role(user, organization)
    if workspace is None:
        if org_role is not None:
            raise Conflict(
                f"{user.email} is already {org_role} of {organization.name}; change their role "
                "in the members list instead.",
                code="ALREADY_MEMBER",
            )
        return
    if org_role in membership.MANAGERS:
        raise Conflict(
            f"{user.email} is an organization {org_role}: they administer every workspace of "
            f"{organization.name} already.",
            code="ALREADY_MEMBER",
        )
    if WorkspaceMembership.objects.filter(workspace=workspace, user=user).exists():
        raise Conflict(
            f"{user.email} is already in {workspace.name}; change their role in the list instead.",
            code="ALREADY_MEMBER",
        )


@transaction.atomic
def invitation_create(
    *,
    organization: Organization,
    email: str,
    role: str,
    invited_by: User,
    workspace: Workspace | None = None,
) -> InviteOutcome:
    """Invite the address to the organization (no workspace, an organization role) or to
    one of its workspaces (a workspace role), and email it a link (after the commit).
    Inviting an address with an open invitation to the same place renews that invitation
    (its role, a new link, a new expiry) instead of adding another.

    Errors: ValidationFailed for an unknown role; PermissionDenied when a non-owner offers
    ownership; Conflict ALREADY_MEMBER; QuotaExceeded SEATS_EXHAUSTED (open invitations
    count, as they will take a seat).
    """
    if workspace is not None and workspace.organization_id != organization.pk:
        raise ValidationFailed("The workspace is not one of the organization's.")
    _check_role(workspace, role)
    organization = membership.lock_organization(organization)
    email = User.objects.normalize_email(email).strip().lower()
    if role == membership.OWNER:
        membership.require_owner(organization, invited_by)
    user = User.objects.filter(email__iexact=email).first()
    _refuse_current_members(organization, workspace, user)

    if (
        workspace is not None
        and user is not None
        and user.is_active
        and user.is_email_verified
        and membership.organization_role(user, organization) is not None
        and membership.manages(invited_by, organization)
    ):
        added = membership.workspace_member_set(
            workspace=workspace, user=user, role=role, actor=invited_by
        )
        # An invitation still open for the same place would only confuse: it is done.
        Invitation.objects.open().filter(
            organization=organization, workspace=workspace, email=email
        ).update(revoked_at=timezone.now(), updated_at=timezone.now())
        transaction.on_commit(lambda: _send_added(user=user, workspace=workspace, by=invited_by))
        return InviteOutcome(email=email, added=added)

    invitation = (
        Invitation.objects.select_for_update()
        .open()
        .filter(organization=organization, workspace=workspace, email=email)
        .first()
    )
    resent = invitation is not None
    if invitation is None:
        membership.ensure_seat(organization, email=email, count_pending=True)
        invitation = Invitation(organization=organization, workspace=workspace, email=email)
    else:
        membership.ensure_seat(organization, email=email, count_pending=True, excluding=invitation)
    invitation.role = role
    invitation.invited_by = invited_by
    clear = _issue(invitation)
    events.emit(events.MEMBER_INVITED, invitation=invitation, actor=invited_by, resent=resent)
    transaction.on_commit(lambda: _send_invitation(invitation=invitation, clear=clear))
    return InviteOutcome(email=email, invitation=invitation)


def _issue(invitation: Invitation) -> str:
    """Give the invitation a new token and expiry and save it; returns the clear token,
    which only the email carries."""
    clear, invitation.token_hash = _new_token()
    invitation.expires_at = timezone.now() + INVITATION_MAX_AGE
    invitation.full_clean()
    invitation.save()
    return clear


def _lock(invitation: Invitation) -> Invitation:
    return (
        Invitation.objects.select_for_update(of=("self",))
        .select_related("organization", "workspace", "invited_by")
        .get(pk=invitation.pk)
    )


def _refuse_closed(invitation: Invitation) -> None:
    if invitation.accepted_at is not None:
        raise Conflict(
            "This invitation has been used already. Log in to open what it gave access to.",
            code="INVITATION_USED",
        )
    if invitation.revoked_at is not None:
        raise Conflict(
            "This invitation was withdrawn. Ask whoever invited you for a new one.",
            code="INVITATION_REVOKED",
        )


@transaction.atomic
def invitation_resend(*, invitation: Invitation, by: User) -> Invitation:
    """Email a new link for an open invitation (also one that expired); the old link stops
    working. Errors: Conflict INVITATION_USED / INVITATION_REVOKED; QuotaExceeded."""
    membership.lock_organization(invitation.organization)
    invitation = _lock(invitation)
    _refuse_closed(invitation)
    membership.ensure_seat(
        invitation.organization, email=invitation.email, count_pending=True, excluding=invitation
    )
    invitation.invited_by = by
    clear = _issue(invitation)
    events.emit(events.MEMBER_INVITED, invitation=invitation, actor=by, resent=True)
    transaction.on_commit(lambda: _send_invitation(invitation=invitation, clear=clear))
    return invitation


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, by: User | None) -> Invitation:
    """Withdraw an open invitation: its link stops working and its seat is freed."""
    invitation = _lock(invitation)
    _refuse_closed(invitation)
    invitation.revoked_at = timezone.now()
    invitation.save(update_fields=["revoked_at", "updated_at"])
    events.emit(events.MEMBER_INVITE_REVOKED, invitation=invitation, actor=by)
    return invitation


def invitation_for_token(clear: str) -> Invitation | None:
    """The invitation a link's token opens, whatever its state, or None."""
    if not clear:
        return None
    return (
        Invitation.objects.select_related("organization", "workspace", "invited_by")
        .filter(token_hash=Invitation.hash_token(clear))
        .first()
    )


def pending_for(user: User):
    """The unexpired invitations waiting for a verified user's address (none for an
    unverified one: the address is not known to be theirs)."""
    if not user.is_authenticated or not user.is_email_verified:
        return Invitation.objects.none()
    return (
        Invitation.objects.pending()
        .filter(email__iexact=user.email)
        .exclude(organization__state=Organization.State.DELETED)
        .select_related("organization", "workspace", "invited_by")
        .order_by("-created_at")
    )


def refusal(invitation: Invitation, user: User | None) -> Conflict | PermissionDenied | None:
    """Why ``user`` (None: nobody signed in) may not accept the invitation now, or None."""
    try:
        _refuse_closed(invitation)
    except Conflict as exc:
        return exc
    if invitation.expires_at <= timezone.now():
        inviter = invitation.invited_by
        who = (inviter.name or inviter.email) if inviter else "whoever invited you"
        return Conflict(
            f"This invitation expired on {invitation.expires_at:%d %B %Y}. Ask {who} to send "
            "a new one.",
            code="INVITATION_EXPIRED",
        )
    if invitation.organization.state != Organization.State.ACTIVE:
        return PermissionDenied(
            f"{invitation.organization.name} is {invitation.organization.state}: nobody can "
            "join it now.",
            code="ORGANIZATION_SUSPENDED",
        )
    if user is None:
        return None
    if user.email.lower() != invitation.email.lower():
        return PermissionDenied(
            f"This invitation is for {invitation.email}, and you are logged in as "
            f"{user.email}. Log out, then open the link again.",
            code="INVITATION_OTHER_EMAIL",
        )
    if not user.is_active:
        return PermissionDenied("This account is deactivated.", code="ACCOUNT_INACTIVE")
    if not user.is_email_verified:
        return PermissionDenied(
            f"Confirm that {user.email} is yours first: open the link we emailed you when "
            "you signed up (or send a new one), then accept the invitation.",
            code="EMAIL_NOT_VERIFIED",
        )
    return None


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user: User) -> Invitation:
    """Accept the invitation as ``user``: they get its role (a seat when they held none),
    and the invitation is used up.

    Errors (see ``refusal``): Conflict INVITATION_USED / INVITATION_REVOKED /
    INVITATION_EXPIRED; PermissionDenied ORGANIZATION_SUSPENDED / INVITATION_OTHER_EMAIL /
    EMAIL_NOT_VERIFIED; QuotaExceeded SEATS_EXHAUSTED.
    """
    organization = membership.lock_organization(invitation.organization)
    invitation = _lock(invitation)
    invitation.organization = organization
    problem = refusal(invitation, user)
    if problem is not None:
        raise problem
    inviter = invitation.invited_by
    workspace = invitation.workspace
    if workspace is None:
        if membership.organization_role(user, organization) is None:
            membership.organization_member_set(
                organization=organization, user=user, role=invitation.role, actor=inviter
            )
    elif not membership.is_workspace_member(user, workspace):
        membership.workspace_member_set(
            workspace=workspace, user=user, role=invitation.role, actor=inviter
        )
    invitation.accepted_at = timezone.now()
    invitation.accepted_by = user
    invitation.save(update_fields=["accepted_at", "accepted_by", "updated_at"])
    events.emit(events.MEMBER_INVITE_ACCEPTED, invitation=invitation, user=user)
    return invitation


@transaction.atomic
def invitation_sign_up(
    *, invitation: Invitation, password: str, name: str = "", display_timezone: str = "UTC"
) -> User:
    """Open an account for the invited address from the invitation link, and accept the
    invitation with it. The link reached that mailbox, so the address counts as verified.

    Errors: those of ``refusal``; Conflict ACCOUNT_EXISTS when the address has an account
    already (log in to it, or reset its password).
    """
    problem = refusal(invitation, None)
    if problem is not None:
        raise problem
    exists = Conflict(
        f"An account with {invitation.email} exists already. Log in to accept, or reset its "
        "password if you never set one or forgot it.",
        code="ACCOUNT_EXISTS",
    )
    if User.objects.filter(email__iexact=invitation.email).exists():
        raise exists
    try:
        with transaction.atomic():
            user = User.objects.create_user(
                email=invitation.email,
                password=password,
                name=name,
                display_timezone=display_timezone,
            )
    except IntegrityError:  # the same address signed up a moment ago
        raise exists from None
    user_mark_email_verified(user=user, method="invitation")
    invitation_accept(invitation=invitation, user=user)
    return user


def _send_invitation(*, invitation: Invitation, clear: str) -> None:
    inviter = invitation.invited_by
    context = {
        "invitation": invitation,
        "inviter": inviter,
        "where": invitation.place,
        "link": invitation_link(clear),
        "valid_days": INVITATION_MAX_AGE.days,
    }
    send_mail(
        subject=f"You are invited to {invitation.place} on Socialpost",
        message=render_to_string("web/emails/invitation.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[invitation.email],
    )


def _send_added(*, user: User, workspace: Workspace, by: User) -> None:
    link = settings.SITE_URL.rstrip("/") + reverse(
        "workspace-home", kwargs={"workspace_slug": workspace.slug}
    )
    context = {"user": user, "inviter": by, "where": workspace.name, "link": link}
    send_mail(
        subject=f"You have been added to {workspace.name}",
        message=render_to_string("web/emails/added.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[user.email],
    )
