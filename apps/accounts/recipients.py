"""Who is told about a workspace's events by email."""

from __future__ import annotations

from collections.abc import Iterable

from apps.accounts.models import OrganizationMembership, Workspace, WorkspaceMembership


def workspace_admin_emails(workspace: Workspace) -> list[str]:
    """Who administers the workspace: its admins, and its organization's owners and admins."""
    org_admins = OrganizationMembership.objects.filter(
        organization_id=workspace.organization_id,
        role__in=[OrganizationMembership.Role.OWNER, OrganizationMembership.Role.ADMIN],
        user__is_active=True,
    ).values_list("user__email", flat=True)
    ws_admins = WorkspaceMembership.objects.filter(
        workspace=workspace, role=WorkspaceMembership.Role.ADMIN, user__is_active=True
    ).values_list("user__email", flat=True)
    return sorted(set(_emails(org_admins)) | set(_emails(ws_admins)))


def _emails(values: Iterable[str]) -> list[str]:
    return [value for value in values if value]
