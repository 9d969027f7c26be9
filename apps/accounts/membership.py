"""Who belongs to an organization and its workspaces: roles, removal, seats.

Every client (web, admin, commands) changes memberships through these functions, so the
product's guards hold everywhere: a new person takes one of the organization's seats, the
last owner stays, and only owners grant or revoke ownership.

A person's API tokens follow their role, in the same transaction
(``apps.accounts.token_roles``): a smaller role narrows what they may do, a larger one
gives it back (up to what each was granted), losing the workspace revokes them. Each
``*_change`` and removal returns which tokens changed, and the audit log records them with
the role change.

Two ways to belong: an organization membership (owner, admin, member), given only by an
organization invitation or an operator, and a workspace membership (admin, editor, viewer)
in one workspace, which gives that workspace and nothing else of the organization. Each
person holding either takes one seat. Invitations themselves are ``invitations.py``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Q

from apps.accounts.models import (
    Invitation,
    Organization,
    OrganizationMembership,
    User,
    Workspace,
    WorkspaceMembership,
)
from apps.accounts.token_roles import TokenChange, token_powers, tokens_fit_role
from apps.common import events
from apps.common.errors import Conflict, PermissionDenied, QuotaExceeded

OWNER = OrganizationMembership.Role.OWNER
MANAGERS = (OrganizationMembership.Role.OWNER, OrganizationMembership.Role.ADMIN)


@dataclass(frozen=True)
class Seats:
    """An organization's seats: people holding one, and open invitations reserving one."""

    members: int
    pending: int
    total: int

    @property
    def used(self) -> int:
        return self.members + self.pending

    @property
    def free(self) -> int:
        return max(0, self.total - self.used)


@dataclass(frozen=True)
class RoleChange:
    """A membership as it is after a change, and what the change did to the person's
    API tokens (empty when it narrowed none)."""

    membership: OrganizationMembership | WorkspaceMembership
    tokens: list[TokenChange] = field(default_factory=list)


def lock_organization(organization: Organization) -> Organization:
    # Seats and the last-owner guard count rows: the organization's row lock serializes
    # concurrent invites, acceptances and removals so two cannot both take the last seat.
    return Organization.objects.select_for_update().get(pk=organization.pk)


def seat_holders(organization: Organization):
    """The people holding a seat: a role in the organization or in one of its workspaces."""
    return User.objects.filter(
        Q(organization_memberships__organization=organization)
        | Q(workspace_memberships__workspace__organization=organization)
    ).distinct()


def holds_seat(organization: Organization, user: User | None) -> bool:
    return user is not None and seat_holders(organization).filter(pk=user.pk).exists()


def seats(organization: Organization, *, excluding: Invitation | None = None) -> Seats:
    """Seats taken by members, and reserved by unexpired open invitations of addresses
    that hold none yet (``excluding`` one invitation, when it is the one being counted)."""
    holders = seat_holders(organization)
    pending = (
        Invitation.objects.pending()
        .filter(organization=organization)
        .exclude(email__in=holders.values("email"))
    )
    if excluding is not None:
        pending = pending.exclude(email=excluding.email)
    return Seats(
        members=holders.count(),
        pending=pending.values("email").distinct().count(),
        total=organization.seats,
    )


def ensure_seat(
    organization: Organization,
    *,
    user: User | None = None,
    email: str | None = None,
    count_pending: bool = False,
    excluding: Invitation | None = None,
) -> None:
    """Refuse a new person when every seat is taken (QuotaExceeded SEATS_EXHAUSTED); someone
    already holding a seat needs none. ``count_pending`` counts the seats open invitations
    reserve (inviting someone new), else only members (someone joining now)."""
    if holds_seat(organization, user):
        return
    if email and seat_holders(organization).filter(email__iexact=email).exists():
        return
    taken = seats(organization, excluding=excluding)
    used = taken.used if count_pending else taken.members
    if used >= organization.seats:
        detail = (
            f" ({taken.pending} by pending invitations)" if count_pending and taken.pending else ""
        )
        raise QuotaExceeded(
            f"All {organization.seats} seats of {organization.name} are taken{detail}. Remove "
            "a member, revoke an invitation or raise the plan's seats first.",
            code="SEATS_EXHAUSTED",
            details={"seats": organization.seats, "used": used, "pending": taken.pending},
        )


@transaction.atomic
def organization_member_set(
    *, organization: Organization, user: User, role: str, actor: User | None = None
) -> OrganizationMembership:
    """Give the user this organization role, taking a seat when they held none.

    Errors: QuotaExceeded SEATS_EXHAUSTED. Role guards (ownership, last owner) are
    ``organization_role_set``'s; this is the operator's and an accepted invitation's way in.
    """
    organization = lock_organization(organization)
    ensure_seat(organization, user=user)
    membership = organization.memberships.filter(user=user).first()
    previous = membership.role if membership else None
    before = token_powers(user=user, organization=organization)
    membership = membership or OrganizationMembership(organization=organization, user=user)
    membership.role = role
    membership.full_clean()
    membership.save()
    _emit_set(organization, None, user, previous, role, actor, before)
    return membership


@transaction.atomic
def workspace_member_change(
    *, workspace: Workspace, user: User, role: str, actor: User | None = None
) -> RoleChange:
    """Give the user this workspace role (and no role in the organization). Someone holding
    no seat of the organization takes one (QuotaExceeded SEATS_EXHAUSTED when none is free).
    Returns the membership and the tokens the new role narrowed or revoked."""
    organization = lock_organization(workspace.organization)
    ensure_seat(organization, user=user)
    membership = WorkspaceMembership.objects.filter(workspace=workspace, user=user).first()
    previous = membership.role if membership else None
    before = token_powers(user=user, organization=organization)
    membership = membership or WorkspaceMembership(workspace=workspace, user=user)
    membership.role = role
    membership.full_clean()
    membership.save()
    tokens = _emit_set(organization, workspace, user, previous, role, actor, before)
    return RoleChange(membership=membership, tokens=tokens)


def workspace_member_set(
    *, workspace: Workspace, user: User, role: str, actor: User | None = None
) -> WorkspaceMembership:
    """``workspace_member_change``, answering the membership alone."""
    change = workspace_member_change(workspace=workspace, user=user, role=role, actor=actor)
    assert isinstance(change.membership, WorkspaceMembership)
    return change.membership


def _emit_set(
    organization: Organization,
    workspace: Workspace | None,
    user: User,
    previous: str | None,
    role: str,
    actor: User | None,
    before: dict[int, tuple[str, ...]],
) -> list[TokenChange]:
    """Announce the membership (added, or its role changed) and fit the person's tokens
    to a changed role (``before``: their powers before it); returns what that did."""
    if previous is None:
        events.emit(
            events.MEMBER_ADDED,
            organization=organization,
            workspace=workspace,
            user=user,
            role=role,
            actor=actor,
        )
        return []
    if previous == role:
        return []
    tokens = tokens_fit_role(user=user, organization=organization, before=before)
    events.emit(
        events.MEMBER_ROLE_CHANGED,
        organization=organization,
        workspace=workspace,
        user=user,
        previous=previous,
        role=role,
        actor=actor,
        tokens=[change.as_record() for change in tokens],
    )
    return tokens


@transaction.atomic
def workspace_member_remove(
    *, workspace: Workspace, user: User, removed_by: User | None = None
) -> list[TokenChange]:
    """Take the person out of one workspace. Organization owners and admins keep their
    access through the organization (remove them there); someone left with no role in the
    organization frees their seat. Returns the tokens this revoked or narrowed."""
    before = token_powers(user=user, organization=workspace.organization)
    deleted, _ = WorkspaceMembership.objects.filter(workspace=workspace, user=user).delete()
    if not deleted:
        return []
    tokens = tokens_fit_role(user=user, organization=workspace.organization, before=before)
    events.emit(
        events.MEMBER_REMOVED,
        organization=workspace.organization,
        workspace=workspace,
        user=user,
        actor=removed_by,
        tokens=[change.as_record() for change in tokens],
    )
    return tokens


def require_owner(organization: Organization, user: User | None) -> None:
    if user is None:  # the operator
        return
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
def organization_role_change(
    *, organization: Organization, user: User, role: str, changed_by: User | None
) -> RoleChange:
    """Change a member's organization role. Granting or revoking ownership takes an
    owner; the last owner keeps the role (Conflict LAST_OWNER). Returns the membership and
    the tokens the new role narrowed or revoked."""
    organization = lock_organization(organization)
    membership = organization.memberships.get(user=user)
    previous = membership.role
    if OWNER in (role, previous):
        require_owner(organization, changed_by)
    if previous == OWNER and role != OWNER:
        _guard_last_owner(organization, user)
    before = token_powers(user=user, organization=organization)
    membership.role = role
    membership.full_clean()
    membership.save(update_fields=["role", "updated_at"])
    tokens = _emit_set(organization, None, user, previous, role, changed_by, before)
    return RoleChange(membership=membership, tokens=tokens)


def organization_role_set(
    *, organization: Organization, user: User, role: str, changed_by: User | None
) -> OrganizationMembership:
    """``organization_role_change``, answering the membership alone."""
    change = organization_role_change(
        organization=organization, user=user, role=role, changed_by=changed_by
    )
    assert isinstance(change.membership, OrganizationMembership)
    return change.membership


@transaction.atomic
def organization_member_remove(
    *, organization: Organization, user: User, removed_by: User | None
) -> list[TokenChange]:
    """Remove the person from the organization and every workspace in it (the seat is
    freed). The last owner cannot be removed; only owners remove owners. Returns the
    tokens this revoked."""
    organization = lock_organization(organization)
    membership = organization.memberships.filter(user=user).first()
    if membership is not None and membership.role == OWNER:
        require_owner(organization, removed_by)
        _guard_last_owner(organization, user)
    before = token_powers(user=user, organization=organization)
    deleted, _ = WorkspaceMembership.objects.filter(
        user=user, workspace__organization=organization
    ).delete()
    if membership is not None:
        membership.delete()
    if not deleted and membership is None:
        return []
    tokens = tokens_fit_role(user=user, organization=organization, before=before)
    events.emit(
        events.MEMBER_REMOVED,
        organization=organization,
        workspace=None,
        user=user,
        actor=removed_by,
        tokens=[change.as_record() for change in tokens],
    )
    return tokens


def organization_role(user: User, organization: Organization) -> str | None:
    """The user's organization role, or None (a workspace-only member has none)."""
    return (
        OrganizationMembership.objects.filter(user=user, organization=organization)
        .values_list("role", flat=True)
        .first()
    )


def manages(user: User, organization: Organization) -> bool:
    """An owner or admin of the organization: they see its page, members and usage."""
    return user.is_authenticated and organization_role(user, organization) in MANAGERS


def is_workspace_member(user: User, workspace: Workspace) -> bool:
    """The user is active and holds a role in the workspace (directly, or as an owner or
    admin of its organization)."""
    from apps.accounts.permissions import workspace_role

    return workspace_role(user, workspace) is not None
