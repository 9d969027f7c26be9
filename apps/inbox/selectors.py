"""The inbox's reads: a workspace's comments by the filters a person or a client picks,
and one comment's thread."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from apps.accounts.models import User, Workspace
from apps.providers.comment_reading import InboxOffer, comment_reader

from .models import Comment, CommentSync, Reply


@dataclass(frozen=True)
class CommentFilters:
    account: int | None = None
    platform: str = ""
    unanswered: bool = False
    assigned_to: User | None = None
    state: str = "open"  # open, done, or "" for both
    include_ours: bool = False


def comment_list(workspace: Workspace, filters: CommentFilters) -> QuerySet[Comment]:
    """Newest first; others' comments only unless ``include_ours``; deleted ones never."""
    comments = (
        Comment.objects.for_workspace(workspace)
        .filter(is_deleted=False)
        .select_related("social_account", "assignee", "rendition")
    )
    if not filters.include_ours:
        comments = comments.filter(is_ours=False)
    if filters.state:
        comments = comments.filter(state=filters.state)
    if filters.account:
        comments = comments.filter(social_account_id=filters.account)
    if filters.platform:
        comments = comments.filter(platform=filters.platform)
    if filters.unanswered:
        comments = comments.filter(is_answered=False)
    if filters.assigned_to is not None:
        comments = comments.filter(assignee=filters.assigned_to)
    return comments.order_by("-commented_at", "-pk")


def comment_thread(comment: Comment) -> list[Comment]:
    """Every comment under the same post, oldest first, with their replies from the inbox:
    the thread a person reads before answering."""
    return list(
        Comment.objects.filter(rendition_id=comment.rendition_id, is_deleted=False)
        .select_related("assignee")
        .prefetch_related(Prefetch("replies", queryset=Reply.objects.order_by("pk")))
        .order_by("commented_at", "pk")
    )


def comment_offer(comment: Comment) -> InboxOffer:
    return comment_reader(comment.platform).offer


def read_state(comment: Comment) -> CommentSync | None:
    return CommentSync.objects.filter(rendition_id=comment.rendition_id).first()
