"""The approval workflow over the token API: the workspace's rule, scheduling refused to an
editor's token while approval is required, and the review steps with their scope and
approver checks."""

import pytest

from apps.accounts import services as account_services
from apps.approvals.models import ApprovalRule
from apps.publications.models import Publication
from tests.api.helpers import bearer, error, later

pytestmark = pytest.mark.django_db

ALL = ["read", "write", "publish", "admin"]


def _as(user, workspace, scopes=ALL):
    return bearer(
        account_services.api_token_create(
            workspace=workspace, name=f"t-{user.pk}", scopes=scopes, created_by=user
        ).clear
    )


def _draft(client, account) -> dict:
    response = client.post(
        "/api/v1/publications",
        {
            "text": "For review",
            "destinations": [{"account": account.pk}],
            "scheduled_at": later(hours=3),
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()


def test_the_rule_is_read_with_read_and_set_with_admin(client_with, workspace_a):
    assert client_with("read").get("/api/v1/approval-rule").json()["required"] is False
    refused = client_with("read", "write").put(
        "/api/v1/approval-rule", {"required": True}, format="json"
    )
    assert refused.status_code == 403
    answer = client_with("admin").put("/api/v1/approval-rule", {"required": True}, format="json")
    assert answer.status_code == 200 and answer.json()["required"] is True
    assert ApprovalRule.objects.get(workspace=workspace_a).required is True
    bad = client_with("admin").put("/api/v1/approval-rule", {"required": "yes"}, format="json")
    assert bad.status_code == 400


def test_an_editors_token_cannot_schedule_but_can_submit_and_an_admin_approves(
    workspace_a, alice, bob, sandbox_a
):
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    editor, admin = _as(bob, workspace_a), _as(alice, workspace_a)

    refused = editor.post(
        "/api/v1/publications",
        {"text": "Now!", "destinations": [{"account": sandbox_a.pk}], "status": "scheduled"},
        format="json",
    )
    assert refused.status_code == 403 and error(refused)["code"] == "APPROVAL_REQUIRED"

    draft = _draft(editor, sandbox_a)
    submitted = editor.post(
        f"/api/v1/reviews/{draft['id']}/submit", {"revision": draft["revision"]}, format="json"
    )
    assert submitted.status_code == 200, submitted.json()
    assert submitted.json()["state"] == "in_review"
    queue = admin.get("/api/v1/reviews").json()
    assert [item["publication"] for item in queue["results"]] == [draft["id"]]

    own = editor.post(
        f"/api/v1/reviews/{draft['id']}/approve", {"revision": draft["revision"]}, format="json"
    )
    assert own.status_code == 403 and error(own)["code"] == "PERMISSION_DENIED"
    approved = admin.post(
        f"/api/v1/reviews/{draft['id']}/approve",
        {"revision": draft["revision"], "note": "Lovely"},
        format="json",
    )
    assert approved.status_code == 200, approved.json()
    body = approved.json()
    assert body["state"] == "approved" and body["publication_status"] == "scheduled"
    assert body["approved_revision"] == body["revision"] == draft["revision"] + 1
    assert [c["kind"] for c in body["comments"]] == ["submitted", "approved"]
    assert Publication.objects.get(pk=draft["id"]).status == "scheduled"


def test_request_changes_needs_a_note_and_comments_are_listed(workspace_a, alice, bob, sandbox_a):
    editor, admin = _as(bob, workspace_a), _as(alice, workspace_a)
    draft = _draft(editor, sandbox_a)
    editor.post(
        f"/api/v1/reviews/{draft['id']}/submit", {"revision": draft["revision"]}, format="json"
    )
    empty = admin.post(
        f"/api/v1/reviews/{draft['id']}/request-changes",
        {"revision": draft["revision"]},
        format="json",
    )
    assert empty.status_code == 400
    sent_back = admin.post(
        f"/api/v1/reviews/{draft['id']}/request-changes",
        {"revision": draft["revision"], "note": "Add the link"},
        format="json",
    )
    assert sent_back.json()["state"] == "changes_requested"
    comment = editor.post(
        f"/api/v1/reviews/{draft['id']}/comments", {"body": "Done"}, format="json"
    )
    assert comment.status_code == 201
    detail = editor.get(f"/api/v1/reviews/{draft['id']}").json()
    assert [c["body"] for c in detail["comments"]] == ["", "Add the link", "Done"]


def test_an_operators_token_reviews_and_other_workspaces_are_404(
    client_with, workspace_a, workspace_b, charlie, sandbox_a
):
    """A token made without a person (create_api_token) is the operator's: not gated by
    approval, and it may approve."""
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    operator = client_with("read", "write", "publish")
    draft = _draft(operator, sandbox_a)
    submitted = operator.post(
        f"/api/v1/reviews/{draft['id']}/submit", {"revision": draft["revision"]}, format="json"
    )
    assert submitted.status_code == 200
    assert submitted.json()["comments"][0]["author"] is None
    outsider = _as(charlie, workspace_b)
    assert outsider.get(f"/api/v1/reviews/{draft['id']}").status_code == 404
    assert (
        outsider.post(
            f"/api/v1/reviews/{draft['id']}/comments", {"body": "hi"}, format="json"
        ).status_code
        == 404
    )
    approved = operator.post(
        f"/api/v1/reviews/{draft['id']}/approve", {"revision": draft["revision"]}, format="json"
    )
    assert approved.status_code == 200 and approved.json()["state"] == "approved"
