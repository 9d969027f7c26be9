"""Marking, assigning, hiding and deleting comments; the inbox's filters."""

from __future__ import annotations

import pytest

from apps.common.errors import Conflict, ValidationFailed
from apps.inbox.models import Comment
from apps.inbox.selectors import CommentFilters, comment_list
from apps.inbox.services import comment_assign, comment_moderate, comment_set_state
from apps.inbox.sync import store_comments, sync_start
from apps.providers.comment_reading import RemoteComment
from apps.sandbox.comments import sandbox_comment_add
from apps.sandbox.models import SandboxPost
from tests.inbox.conftest import live_post, run_due

pytestmark = pytest.mark.django_db


def comments_of(workspace, n: int = 2) -> list[Comment]:
    rendition, post = live_post(workspace)
    remote = [sandbox_comment_add(post=post, handle=f"fan{i}", text=f"c{i}") for i in range(n)]
    items = [
        RemoteComment(platform_id=str(c.pk), text=c.text, created_at=c.created_at) for c in remote
    ]
    return store_comments(sync_start(rendition), items)


def test_assigning_takes_only_members_and_filters_find_it(workspace_a, bob, charlie):
    first, second = comments_of(workspace_a)

    comment_assign(comment=first, assignee=bob)
    with pytest.raises(ValidationFailed):
        comment_assign(comment=second, assignee=charlie)
    comment_set_state(comment=second, done=True)

    mine = comment_list(workspace_a, CommentFilters(assigned_to=bob))
    assert list(mine) == [first]
    assert list(comment_list(workspace_a, CommentFilters())) == [first]
    assert set(comment_list(workspace_a, CommentFilters(state=""))) == {first, second}


def test_another_workspace_sees_none_of_them(workspace_a, workspace_b):
    comments_of(workspace_a)
    assert not comment_list(workspace_b, CommentFilters(state="")).exists()


def test_deleting_goes_through_a_job_and_the_sandbox(sandbox_http, worker, workspace_a):
    first, _second = comments_of(workspace_a)

    comment_moderate(comment=first, action="delete")
    run_due(worker)

    first.refresh_from_db()
    assert first.is_deleted
    assert not SandboxPost.objects.filter(pk=int(first.platform_id)).exists()


def test_hiding_is_refused_where_the_platform_has_no_hidden_comments(workspace_a):
    first, _second = comments_of(workspace_a)
    with pytest.raises(Conflict) as refused:
        comment_moderate(comment=first, action="hide")
    assert refused.value.code == "INBOX_ACTION_UNAVAILABLE"
