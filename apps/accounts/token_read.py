"""The API token of a request, read with everything authentication checks in one query.

Every API request starts here, so the read is one statement compiled once per process
(apps.common.json_rows): the token, its workspace and organization, its creator, and the
creator's roles in that organization and workspace (``effective_role`` decides from them).
"""

from __future__ import annotations

from django.db.models import OuterRef, Subquery

from apps.accounts.models import (
    ApiToken,
    Organization,
    OrganizationMembership,
    User,
    Workspace,
    WorkspaceMembership,
)
from apps.common.json_rows import JsonQuery, Shape, extra, json_object, load


def _organization_role() -> Subquery:
    return Subquery(
        OrganizationMembership.objects.filter(
            user=OuterRef("created_by"), organization=OuterRef("workspace__organization")
        ).values("role")[:1]
    )


def _membership_role() -> Subquery:
    return Subquery(
        WorkspaceMembership.objects.filter(
            user=OuterRef("created_by"), workspace=OuterRef("workspace")
        ).values("role")[:1]
    )


_TOKEN = Shape(
    ApiToken,
    joined={
        "workspace": Shape(Workspace, joined={"organization": Shape(Organization)}),
        "created_by": Shape(User),
    },
    extra={"organization_role": _organization_role, "membership_role": _membership_role},
)
_TOKEN_QUERY = JsonQuery(
    lambda prefix: (
        ApiToken.objects.filter(prefix=prefix).order_by("pk").values(row=json_object(_TOKEN))[:1]
    ),
    prefix="~token prefix stand-in~",
)


def token_read(prefix: str) -> tuple[ApiToken, str | None, str | None] | None:
    """The token with this prefix (its workspace, organization and creator loaded), with
    its creator's organization role and workspace membership role; None if there is none."""
    rows = _TOKEN_QUERY.rows(prefix=prefix)
    if not rows:
        return None
    token = load(_TOKEN, rows[0])
    assert isinstance(token, ApiToken)
    data = rows[0]
    return token, extra(data, "organization_role"), extra(data, "membership_role")
