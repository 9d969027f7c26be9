"""The one place that decides what a user may do in a workspace. Views, the API and the
admin all ask here."""

from enum import StrEnum

from apps.accounts.models import OrganizationMembership, User, Workspace, WorkspaceMembership


class Action(StrEnum):
    VIEW = "view"  # read publications, accounts, status
    EDIT = "edit"  # drafts and edits
    PUBLISH = "publish"  # schedule, publish now, retry, resolve
    ADMIN = "admin"  # members, tokens, social accounts, webhooks


_ALLOWED: dict[str, set[Action]] = {
    WorkspaceMembership.Role.ADMIN: set(Action),
    WorkspaceMembership.Role.EDITOR: {Action.VIEW, Action.EDIT, Action.PUBLISH},
    WorkspaceMembership.Role.VIEWER: {Action.VIEW},
}


# Organization roles that are workspace admins everywhere in their organization.
_ORGANIZATION_ADMINS = (OrganizationMembership.Role.OWNER, OrganizationMembership.Role.ADMIN)


def workspace_role(user: User, workspace: Workspace) -> str | None:
    """The user's effective role in the workspace: organization owners and admins are
    workspace admins everywhere in their organization; otherwise the workspace membership."""
    if not user.is_authenticated or not user.is_active:
        return None
    org_role = (
        OrganizationMembership.objects.filter(user=user, organization_id=workspace.organization_id)
        .values_list("role", flat=True)
        .first()
    )
    membership_role = None
    if org_role not in _ORGANIZATION_ADMINS:
        membership_role = (
            WorkspaceMembership.objects.filter(user=user, workspace=workspace)
            .values_list("role", flat=True)
            .first()
        )
    return effective_role(user, org_role, membership_role)


def effective_role(user: User, org_role: str | None, membership_role: str | None) -> str | None:
    """``workspace_role`` from roles already read: the user's in the workspace's
    organization and the workspace's own membership (None where the user has none)."""
    if not user.is_active:
        return None
    if org_role in _ORGANIZATION_ADMINS:
        return WorkspaceMembership.Role.ADMIN
    return membership_role


def can(user: User, workspace: Workspace, action: Action | str) -> bool:
    return role_can(workspace_role(user, workspace), action)


def role_can(role: str | None, action: Action | str) -> bool:
    """`can` for a role already read (a page asks about several actions)."""
    return role is not None and Action(action) in _ALLOWED[role]


def workspaces_for(user: User):
    """Every workspace the user can see, directly or through an organization role."""
    from django.db.models import Q

    admin_orgs = OrganizationMembership.objects.filter(
        user=user,
        role__in=[OrganizationMembership.Role.OWNER, OrganizationMembership.Role.ADMIN],
    ).values("organization_id")
    return (
        Workspace.objects.filter(Q(memberships__user=user) | Q(organization_id__in=admin_orgs))
        .distinct()
        .select_related("organization")
        .order_by("organization__name", "name")
    )


# What each token scope lets an API client do.
SCOPE_FOR_ACTION = {
    Action.VIEW: "read",
    Action.EDIT: "write",
    Action.PUBLISH: "publish",
    Action.ADMIN: "admin",
}

# Scopes that name the client a token serves, not a power: any role may hold them.
CLIENT_SCOPES = frozenset({"mcp"})


def scopes_for_role(role: str | None) -> frozenset[str]:
    """The token scopes a person with this workspace role may use: the powers of the role
    (``SCOPE_FOR_ACTION``) and the client scopes; nothing without a role."""
    if role is None:
        return frozenset()
    return frozenset(SCOPE_FOR_ACTION[action] for action in _ALLOWED[role]) | CLIENT_SCOPES


def role_bound_scopes(scopes: list[str], role: str | None) -> list[str]:
    """The scopes of a token that its creator's role still allows, in the token's order.
    A token is never worth more than the person who made it is now."""
    allowed = scopes_for_role(role)
    return [scope for scope in scopes if scope in allowed]


def holds_power(scopes: list[str]) -> bool:
    """The scopes grant something beyond naming a client."""
    return any(scope not in CLIENT_SCOPES for scope in scopes)
