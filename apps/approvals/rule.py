"""Who needs approval: in a workspace whose rule requires it, everyone who is not a
workspace admin. Admins (and organization owners and admins) approve, and schedule
directly. Work without a person (a series' occurrences, an operator's token) is not gated;
a series itself is, when it is created, changed or resumed (`apps.series.services`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from apps.accounts.permissions import Action, can
from apps.approvals.models import ApprovalRule
from apps.common import events
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


@transaction.atomic
def approval_rule_set(*, workspace: Workspace, required: bool, actor: User | None) -> ApprovalRule:
    """Switch the workspace's rule on or off. A change is announced (APPROVAL_RULE_CHANGED:
    the audit log records who made it); setting the value it already has changes nothing.
    Who may call this (a workspace admin, a token with the admin scope) is the caller's
    check."""
    rule = ApprovalRule.objects.select_for_update().filter(workspace=workspace).first()
    previous = rule.required if rule is not None else False
    rule = rule or ApprovalRule(workspace=workspace)
    rule.required = required
    rule.updated_by = actor
    rule.save()
    if previous != required:
        events.emit(
            events.APPROVAL_RULE_CHANGED, workspace=workspace, required=required, actor=actor
        )
    return rule
