"""The demoted admin: after an owner demotes a workspace admin, the token they made as an
admin holds no more than their new role, over the REST API and MCP alike. It can no longer
mint an admin token, turn approval off, approve, or schedule past the approval rule."""

import pytest

from apps.accounts import membership, services
from apps.accounts.models import ApiToken, WorkspaceMembership
from apps.api.mcp import auth as mcp_auth
from apps.api.mcp import tools
from apps.approvals.models import ApprovalRule
from apps.publications.models import Publication
from apps.publishing.services import publication_create
from apps.publishing.services.reviews import review_submit
from tests.api.helpers import bearer, error, later
from tests.factories import UserFactory
from tests.mcp.test_tools import code, context

pytestmark = pytest.mark.django_db

ALL = ["read", "write", "publish", "admin", "mcp"]


@pytest.fixture(autouse=True)
def _keep_the_test_transaction(monkeypatch):
    # The MCP tools and the endpoint's authentication close stale connections as
    # Django's request signals do; in a test that would close the test's own.
    monkeypatch.setattr(tools, "close_old_connections", lambda: None)
    monkeypatch.setattr(mcp_auth, "close_old_connections", lambda: None)


@pytest.fixture
def dana(workspace_a):
    person = UserFactory(email="dana@example.com")
    membership.workspace_member_set(workspace=workspace_a, user=person, role="admin")
    return person


@pytest.fixture
def old_token(workspace_a, dana):
    """Dana's token, made while she was an admin, with every scope."""
    return services.api_token_create(
        workspace=workspace_a, name="dana's", scopes=ALL, created_by=dana
    ).clear


@pytest.fixture(params=["through the service", "around the services"])
def demote(request, workspace_a, dana, alice):
    """Make dana `role`: through the membership service (which narrows the token at once)
    or by writing the row alone (authentication's bound must hold by itself)."""

    def to(role: str) -> None:
        if request.param == "through the service":
            membership.workspace_member_set(
                workspace=workspace_a, user=dana, role=role, actor=alice
            )
        else:
            WorkspaceMembership.objects.filter(user=dana).update(role=role)

    return to


def _schedule(client, account):
    return client.post(
        "/api/v1/publications",
        {
            "text": "Past approval?",
            "destinations": [{"account": account.pk}],
            "status": "scheduled",
        },
        format="json",
    )


def test_the_token_works_as_an_admin_before_the_demotion(old_token, sandbox_a):
    client = bearer(old_token)
    minted = client.post("/api/v1/tokens", {"name": "more", "scopes": ["admin"]}, format="json")
    assert minted.status_code == 201, minted.content
    assert _schedule(client, sandbox_a).status_code == 201


def test_a_viewers_old_token_cannot_mint_change_the_rule_or_schedule(
    old_token, demote, workspace_a, sandbox_a
):
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    demote("viewer")
    client = bearer(old_token)

    minted = client.post("/api/v1/tokens", {"name": "escape", "scopes": ["admin"]}, format="json")
    assert minted.status_code == 403 and error(minted)["code"] == "INSUFFICIENT_SCOPE"
    rule_off = client.put("/api/v1/approval-rule", {"required": False}, format="json")
    assert rule_off.status_code == 403 and error(rule_off)["code"] == "INSUFFICIENT_SCOPE"
    scheduled = _schedule(client, sandbox_a)
    assert scheduled.status_code == 403 and error(scheduled)["code"] == "INSUFFICIENT_SCOPE"

    assert client.get("/api/v1/me").json()["token"]["scopes"] == ["read", "mcp"]
    assert not ApiToken.objects.filter(name="escape").exists()
    assert ApprovalRule.objects.get(workspace=workspace_a).required is True
    assert not Publication.objects.exists()


def test_an_editors_old_token_is_held_to_the_approval_rule(
    old_token, demote, workspace_a, sandbox_a, bob
):
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    demote("editor")
    client = bearer(old_token)

    scheduled = _schedule(client, sandbox_a)
    assert scheduled.status_code == 403 and error(scheduled)["code"] == "APPROVAL_REQUIRED"
    minted = client.post("/api/v1/tokens", {"name": "escape", "scopes": ["admin"]}, format="json")
    assert minted.status_code == 403
    rule_off = client.put("/api/v1/approval-rule", {"required": False}, format="json")
    assert rule_off.status_code == 403
    # Approving is an admin's power: the token's creator is not one any more.
    draft = publication_create(
        workspace=workspace_a,
        author=bob,
        segments=[{"text": "Bob's"}],
        destinations=[{"account": sandbox_a.pk}],
        scheduled_at=later(hours=3),
    )
    review_submit(publication=draft, expected_revision=draft.revision, actor=bob)
    approved = client.post(
        f"/api/v1/reviews/{draft.pk}/approve", {"revision": draft.revision}, format="json"
    )
    assert approved.status_code == 403
    draft.refresh_from_db()
    assert draft.status == Publication.Status.DRAFT
    assert ApprovalRule.objects.get(workspace=workspace_a).required is True


def test_through_mcp_the_old_token_holds_the_new_role_too(
    old_token, demote, workspace_a, sandbox_a
):
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    demote("editor")

    token = mcp_auth._authenticate(old_token)  # what the endpoint's middleware calls
    assert token is not None and "admin" not in token.scopes and token.has_scope("mcp")
    ctx = context(token)
    created = tools.create_publication(
        ctx,
        text="Past approval?",
        destinations=[{"account": sandbox_a.pk}],
        status="scheduled",
    )
    assert code(created) == "APPROVAL_REQUIRED"
    assert not Publication.objects.exists()


def test_a_removed_admins_token_stops_on_both_doors(old_token, workspace_a, dana, alice):
    membership.workspace_member_remove(workspace=workspace_a, user=dana, removed_by=alice)

    assert error(bearer(old_token).get("/api/v1/me"))["code"] == "INVALID_TOKEN"
    assert mcp_auth._authenticate(old_token) is None


def test_a_promotion_gives_the_old_token_back_what_it_was_granted(
    old_token, demote, workspace_a, alice
):
    client = bearer(old_token)
    demote("viewer")
    refused = client.post("/api/v1/tokens", {"name": "more", "scopes": ["admin"]}, format="json")
    assert refused.status_code == 403 and error(refused)["code"] == "INSUFFICIENT_SCOPE"
    listed = {t["name"]: t for t in client.get("/api/v1/tokens").json()["results"]}["dana's"]
    assert listed["scopes"] == ALL and listed["effective_scopes"] == ["read", "mcp"]
    me = client.get("/api/v1/me").json()["token"]
    assert me["scopes"] == ["read", "mcp"] and me["granted_scopes"] == ALL

    demote("admin")

    minted = client.post("/api/v1/tokens", {"name": "more", "scopes": ["admin"]}, format="json")
    assert minted.status_code == 201, minted.content
    assert client.get("/api/v1/me").json()["token"]["scopes"] == ALL
    listed = {t["name"]: t for t in client.get("/api/v1/tokens").json()["results"]}["dana's"]
    assert listed["effective_scopes"] == ALL


def test_a_removal_revokes_the_old_token_for_good(old_token, workspace_a, dana, alice):
    membership.workspace_member_set(workspace=workspace_a, user=dana, role="viewer", actor=alice)
    membership.workspace_member_remove(workspace=workspace_a, user=dana, removed_by=alice)

    # Back as an admin, the revoked token stays revoked: make a new one.
    membership.workspace_member_set(workspace=workspace_a, user=dana, role="admin", actor=alice)

    assert error(bearer(old_token).get("/api/v1/me"))["code"] == "INVALID_TOKEN"
    assert ApiToken.objects.get(name="dana's").revoked_at is not None
