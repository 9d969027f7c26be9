"""Who needs approval: in a workspace whose rule requires it, everyone who is not a
workspace admin. Admins (and organization owners and admins) approve, and schedule
directly. Work without a person (a series' occurrences, an operator's token) is not gated;
a series itself is, when it is created, changed or resumed (`apps.series.services`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from apps.accounts.permissions import Action, can
from apps.approvals.models import ApprovalRule
from apps.common.errors import DomainError

if TYPE_CHECKING:
    from apps.accounts.models import User, Workspace


class ApprovalRequired(DomainError):
    code = "APPROVAL_REQUIRED"
    http_status = 403


def approval_required(workspace: Workspace) -> bool:
    return ApprovalRule.objects.filter(workspace=workspace, required=True).exists()


def is_approver(user: User | None, workspace: Workspace) -> bool:
    return user is not None and can(user, workspace, Action.ADMIN)


def needs_approval(workspace: Workspace, user: User | None) -> bool:
    if user is None:
        return False
    return approval_required(workspace) and not is_approver(user, workspace)


def check_may_schedule(workspace: Workspace, user: User | None) -> None:
    """Refuse scheduling by someone whose posts need approval first."""
    if needs_approval(workspace, user):
        raise ApprovalRequired(
            "This workspace needs an admin's approval before a post is scheduled: save it "
            "as a draft and submit it for review.",
            details={"workspace": workspace.slug},
        )
