"""The inbox over the token API: filters, the thread, replies (held for approval where the
workspace asks), done and assign. Scopes and other workspaces' ids: test_access.py."""

import pytest
from django.utils import timezone

from apps.accounts import services as account_services
from apps.inbox.models import Comment, Reply
from apps.inbox.services import inbox_settings_update
from apps.jobs.models import Job
from tests.api.helpers import bearer, error
from tests.factories import RenditionFactory, SocialAccountFactory

pytestmark = pytest.mark.django_db


def _as(user, workspace, scopes=("read", "write", "publish")):
    token = account_services.api_token_create(
        workspace=workspace, name=f"t-{user.pk}", scopes=list(scopes), created_by=user
    )
    return bearer(token.clear)


def _comment(workspace, platform="facebook", **fields) -> Comment:
    account = SocialAccountFactory(workspace=workspace, platform=platform)
    rendition = RenditionFactory(
        publication__workspace=workspace,
        social_account=account,
        status="published",
        provider_post_id="p1",
        published_at=timezone.now(),
    )
    values = {
        "platform_id": f"c{rendition.pk}",
        "text": "When do you open?",
        "commented_at": timezone.now(),
        **fields,
    }
    return Comment.objects.create(
        workspace=workspace,
        rendition=rendition,
        social_account=account,
        platform=platform,
        **values,
    )


def test_the_list_filters_by_platform_unanswered_and_assignee(workspace_a, alice, bob):
    mine = _comment(workspace_a, assignee=bob)
    answered = _comment(workspace_a, is_answered=True)
    other_platform = _comment(workspace_a, platform="sandbox")
    _comment(workspace_a, is_ours=True)
    client = _as(bob, workspace_a)

    def ids(query: str) -> set[int]:
        response = client.get(f"/api/v1/comments{query}")
        assert response.status_code == 200, response.content
        return {item["id"] for item in response.json()["results"]}

    assert ids("") == {mine.pk, answered.pk, other_platform.pk}
    assert ids("?platform=facebook&unanswered=true") == {mine.pk}
    assert ids("?assigned=me") == {mine.pk}
    assert ids(f"?account={other_platform.social_account_id}") == {other_platform.pk}
    assert error(client.get("/api/v1/comments?colour=red"))["code"] == "UNKNOWN_FIELD"


def test_the_detail_shows_the_thread_and_what_the_platform_allows(workspace_a, alice):
    comment = _comment(workspace_a)
    Comment.objects.create(
        workspace=workspace_a,
        rendition=comment.rendition,
        social_account=comment.social_account,
        platform="facebook",
        platform_id="ours",
        parent=comment,
        text="At 7",
        commented_at=timezone.now(),
        is_ours=True,
    )

    body = _as(alice, workspace_a).get(f"/api/v1/comments/{comment.pk}").json()

    assert body["allows"] == {
        "reply": True,
        "hide": True,
        "delete": True,
        "note": body["allows"]["note"],
    }
    assert [c["platform_id"] for c in body["thread"]] == [comment.platform_id, "ours"]


def test_an_editors_reply_waits_for_an_admin_where_the_workspace_asks(workspace_a, alice, bob):
    inbox_settings_update(workspace=workspace_a, replies_need_approval=True)
    comment = _comment(workspace_a)

    response = _as(bob, workspace_a).post(
        f"/api/v1/comments/{comment.pk}/reply", {"text": "At 7"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "awaiting_approval"
    assert not Job.objects.filter(type="inbox.reply").exists()
    reply_id = response.json()["id"]

    refused = _as(bob, workspace_a).post(f"/api/v1/replies/{reply_id}/approve")
    assert refused.status_code == 403 and error(refused)["code"] == "ADMIN_REQUIRED"

    approved = _as(alice, workspace_a).post(f"/api/v1/replies/{reply_id}/approve")
    assert approved.status_code == 200 and approved.json()["status"] == "pending"
    assert Job.objects.filter(type="inbox.reply", payload={"reply_id": reply_id}).exists()


def test_a_reply_where_the_platform_takes_none_is_refused(workspace_a, alice):
    comment = _comment(workspace_a, platform="linkedin")

    response = _as(alice, workspace_a).post(
        f"/api/v1/comments/{comment.pk}/reply", {"text": "Hi"}, format="json"
    )

    assert response.status_code == 409
    assert error(response)["code"] == "INBOX_ACTION_UNAVAILABLE"
    assert not Reply.objects.exists()


def test_done_and_assign(workspace_a, alice, bob, charlie):
    comment = _comment(workspace_a)
    client = _as(alice, workspace_a)

    done = client.post(f"/api/v1/comments/{comment.pk}/done", {"done": True}, format="json")
    assigned = client.post(
        f"/api/v1/comments/{comment.pk}/assign", {"assignee": bob.pk}, format="json"
    )
    outsider = client.post(
        f"/api/v1/comments/{comment.pk}/assign", {"assignee": charlie.pk}, format="json"
    )

    assert done.json()["state"] == "done"
    assert assigned.json()["assignee"]["id"] == bob.pk
    assert outsider.status_code == 400 and "assignee" in error(outsider)["details"]


def test_http_delete_on_a_comment_is_not_allowed(workspace_a, alice):
    comment = _comment(workspace_a)

    response = _as(alice, workspace_a).delete(f"/api/v1/comments/{comment.pk}")

    assert response.status_code == 405
    assert not Job.objects.filter(type="inbox.moderate").exists()


def test_an_unknown_reply_is_marked_sent_and_only_an_unknown_one(workspace_a, alice):
    comment = _comment(workspace_a)
    reply = Reply.objects.create(
        workspace=workspace_a, comment=comment, text="Soon", status="unknown"
    )
    client = _as(alice, workspace_a)

    marked = client.post(
        f"/api/v1/replies/{reply.pk}/mark-sent", {"url": "https://x.example/1"}, format="json"
    )
    again = client.post(f"/api/v1/replies/{reply.pk}/mark-sent", {}, format="json")

    assert marked.status_code == 200 and marked.json()["status"] == "sent"
    assert marked.json()["provider_url"] == "https://x.example/1"
    assert again.status_code == 409 and error(again)["code"] == "REPLY_NOT_UNKNOWN"
