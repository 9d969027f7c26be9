"""The inbox's MCP tools: the faces of /comments, with the API's rules."""

import pytest
from django.utils import timezone

from apps.api.mcp import tools
from apps.inbox.models import Comment, Reply
from tests.factories import RenditionFactory, SocialAccountFactory
from tests.mcp.test_tools import code, context

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _keep_the_test_transaction(monkeypatch):
    monkeypatch.setattr(tools, "close_old_connections", lambda: None)


def _comment(workspace, platform="facebook") -> Comment:
    account = SocialAccountFactory(workspace=workspace, platform=platform)
    rendition = RenditionFactory(
        publication__workspace=workspace,
        social_account=account,
        status="published",
        provider_post_id="p",
        published_at=timezone.now(),
    )
    return Comment.objects.create(
        workspace=workspace,
        rendition=rendition,
        social_account=account,
        platform=platform,
        platform_id=f"c{rendition.pk}",
        text="Open on Sunday?",
        commented_at=timezone.now(),
    )


def test_list_thread_reply_and_update(workspace_a, make_token, bob):
    comment = _comment(workspace_a)
    ctx = context(make_token(workspace_a).token)

    listed = tools.list_comments(ctx, platform="facebook")
    thread = tools.get_comment_thread(ctx, comment_id=comment.pk)
    replied = tools.reply_to_comment(ctx, comment_id=comment.pk, text="Yes, 9 to 1")
    updated = tools.update_comment(ctx, comment_id=comment.pk, done=True, assignee=bob.pk)

    assert [c["id"] for c in listed.structured_content["comments"]] == [comment.pk]
    assert thread.structured_content["allows"]["reply"] is True
    assert replied.structured_content["status"] == "pending"
    assert Reply.objects.get().text == "Yes, 9 to 1"
    assert updated.structured_content["state"] == "done"
    assert updated.structured_content["assignee"]["id"] == bob.pk


def test_scopes_and_other_workspaces(workspace_a, workspace_b, make_token):
    theirs = _comment(workspace_b)
    mine = _comment(workspace_a)
    reader = context(make_token(workspace_a, scopes=["read", "mcp"]).token)
    full = context(make_token(workspace_a).token)

    assert code(tools.reply_to_comment(reader, comment_id=mine.pk, text="x")) == (
        "INSUFFICIENT_SCOPE"
    )
    assert code(tools.get_comment_thread(full, comment_id=theirs.pk)) == "NOT_FOUND"
    assert code(tools.update_comment(full, comment_id=theirs.pk, done=True)) == "NOT_FOUND"
    assert not Reply.objects.exists()


def test_moderation_where_the_platform_allows_it(workspace_a, make_token):
    from apps.jobs.models import Job

    allowed = _comment(workspace_a)
    refused = _comment(workspace_a, platform="mastodon")
    ctx = context(make_token(workspace_a).token)

    hidden = tools.moderate_comment(ctx, comment_id=allowed.pk, action="hide")

    assert not hidden.is_error, hidden
    assert Job.objects.filter(type="inbox.moderate", payload__action="hide").exists()
    assert code(tools.moderate_comment(ctx, comment_id=refused.pk, action="delete")) == (
        "INBOX_ACTION_UNAVAILABLE"
    )
