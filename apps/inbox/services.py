"""What a member does in the inbox: mark a comment done (or open again), assign it, reply
(see replies.py), hide or delete it on the platform where the platform allows it, and the
workspace's inbox settings."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User, Workspace, WorkspaceMembership
from apps.accounts.permissions import workspace_role
from apps.common.errors import Conflict, PermissionDenied, ValidationFailed
from apps.jobs.errors import RetryableError
from apps.jobs.models import Job
from apps.jobs.services import job_enqueue
from apps.providers.comment_reading import comment_reader
from apps.providers.errors import RETRYABLE_KINDS, ProviderError

from .connect import connect
from .models import Comment, InboxSettings, Reply
from .replies import reply_create, reply_review

MODERATE_JOB = "inbox.moderate"
ADMIN = WorkspaceMembership.Role.ADMIN
ACTIONS = ("hide", "unhide", "delete")


def inbox_settings(workspace: Workspace) -> InboxSettings:
    found, _ = InboxSettings.objects.get_or_create(workspace=workspace)
    return found


def inbox_settings_update(*, workspace: Workspace, replies_need_approval: bool) -> InboxSettings:
    found = inbox_settings(workspace)
    found.replies_need_approval = replies_need_approval
    found.save(update_fields=["replies_need_approval", "updated_at"])
    return found


def _refuse_deleted(comment: Comment) -> None:
    if comment.is_deleted:
        raise Conflict("The comment is deleted.", code="COMMENT_DELETED")
    if comment.gone_at is not None:  # its author deleted it: the platform would refuse
        raise Conflict(f"The comment was deleted on {comment.platform}.", code="COMMENT_DELETED")


def reply_submit(*, comment: Comment, author: User | None, text: str) -> Reply:
    """A member's reply: sent at once, or held for an admin's approval where the workspace
    asks for it (an admin's own replies, and an operator's, are not held)."""
    offer = comment_reader(comment.platform).offer
    if not offer.reply:
        raise Conflict(
            f"{comment.platform} does not let us reply from the inbox. {offer.note}".strip(),
            code="INBOX_ACTION_UNAVAILABLE",
            details={"action": "reply", "platform": comment.platform},
        )
    _refuse_deleted(comment)
    workspace = Workspace.objects.get(pk=comment.workspace_id)
    needs_approval = (
        inbox_settings(workspace).replies_need_approval
        and author is not None
        and workspace_role(author, workspace) != ADMIN
    )
    return reply_create(comment=comment, author=author, text=text, needs_approval=needs_approval)


def reply_decide(*, reply: Reply, reviewer: User | None, approve: bool) -> Reply:
    """An admin (or an operator, ``reviewer`` None) approves or rejects a held reply."""
    workspace = Workspace.objects.get(pk=reply.workspace_id)
    if (
        reviewer is not None
        and workspace_role(reviewer, workspace) != WorkspaceMembership.Role.ADMIN
    ):
        raise PermissionDenied("Only a workspace admin approves replies.", code="ADMIN_REQUIRED")
    return reply_review(reply=reply, reviewer=reviewer, approve=approve)


def comment_set_state(*, comment: Comment, done: bool) -> Comment:
    comment.state = Comment.State.DONE if done else Comment.State.OPEN
    comment.save(update_fields=["state", "updated_at"])
    return comment


def comment_assign(*, comment: Comment, assignee: User | None) -> Comment:
    """Assign the comment to a member of its workspace (None: nobody)."""
    if assignee is not None and not _is_member(comment.workspace_id, assignee):
        raise ValidationFailed(
            "Only a member of the workspace can be assigned.",
            details={"assignee": ["Not a member of this workspace."]},
        )
    comment.assignee = assignee
    comment.save(update_fields=["assignee", "updated_at"])
    return comment


def _is_member(workspace_id: int, user: User) -> bool:
    return workspace_role(user, Workspace.objects.get(pk=workspace_id)) is not None


def comment_moderate(*, comment: Comment, action: str) -> Job:
    """Hide, unhide or delete the comment on its platform, by a job (each is safe to
    repeat). Refused where the platform does not allow it."""
    if action not in ACTIONS:
        raise ValidationFailed(
            f"Choose one of: {', '.join(ACTIONS)}.", details={"action": ["Unknown action."]}
        )
    offer = comment_reader(comment.platform).offer
    allowed = offer.delete if action == "delete" else offer.hide
    if not allowed:
        raise Conflict(
            f"{comment.platform} does not let us {'delete' if action == 'delete' else 'hide'} "
            f"comments. {offer.note}".strip(),
            code="INBOX_ACTION_UNAVAILABLE",
            details={"action": action, "platform": comment.platform},
        )
    _refuse_deleted(comment)
    with transaction.atomic():
        return job_enqueue(
            type=MODERATE_JOB,
            payload={"comment_id": comment.pk, "action": action},
            organization=None,
            workspace=comment.workspace,
            dedupe_key=f"inbox-moderate:{comment.pk}:{action}",
            lane=comment.platform,
        )


def moderate(job: Job) -> None:
    """Handler of ``inbox.moderate``."""
    comment = (
        Comment.objects.select_related("rendition__social_account")
        .filter(pk=job.payload["comment_id"])
        .first()
    )
    if comment is None or comment.is_deleted:
        return
    action = job.payload["action"]
    try:
        reader, ctx = connect(comment.rendition)
        if action == "delete":
            reader.delete_comment(ctx, comment.platform_id)
        else:
            reader.hide_comment(ctx, comment.platform_id, hidden=action == "hide")
    except ProviderError as err:
        if err.kind in RETRYABLE_KINDS:
            raise RetryableError(err.kind, err.message, retry_at=err.retry_at) from err
        raise
    fields = {"is_deleted": True} if action == "delete" else {"is_hidden": action == "hide"}
    Comment.objects.filter(pk=comment.pk).update(updated_at=timezone.now(), **fields)
