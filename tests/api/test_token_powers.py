"""What a token may do to tokens, webhooks and accounts, and how long it lives: the admin
scope, revocation down the line of minted tokens, the creator's membership and the cap on
live tokens. Each attack is tried and shown refused in the API's error envelope."""

import pytest

from apps.accounts import membership, services
from apps.accounts.models import ApiToken, OrganizationMembership, WorkspaceMembership
from apps.common.errors import Conflict
from tests.api.helpers import bearer, error

TOKENS = "/api/v1/tokens"
NOT_ADMIN = ["read", "write", "publish", "mcp"]


def _mint(client, scopes=("read",), name="child"):
    return client.post(TOKENS, {"name": name, "scopes": list(scopes)})


def _refused_for_lack_of_admin(response) -> None:
    assert response.status_code == 403, response.content
    err = error(response)
    assert err["code"] == "INSUFFICIENT_SCOPE"
    assert err["details"]["required"] == ["admin"]


# The admin scope


def test_a_write_token_cannot_mint_a_token(workspace_a, make_token):
    response = _mint(bearer(make_token(workspace_a, scopes=NOT_ADMIN).clear))

    _refused_for_lack_of_admin(response)
    assert not ApiToken.objects.filter(name="child").exists()


def test_a_write_token_cannot_revoke_another_token(workspace_a, make_token):
    other = make_token(workspace_a, scopes=["read"], name="other")

    response = bearer(make_token(workspace_a, scopes=NOT_ADMIN).clear).delete(
        f"{TOKENS}/{other.token.pk}"
    )

    _refused_for_lack_of_admin(response)
    other.token.refresh_from_db()
    assert other.token.revoked_at is None


def test_a_write_token_cannot_add_a_webhook(workspace_a, make_token):
    client = bearer(make_token(workspace_a, scopes=NOT_ADMIN).clear)

    response = client.post("/api/v1/webhooks", {"url": "https://93.184.215.14/hook"})

    _refused_for_lack_of_admin(response)
    assert not workspace_a.webhook_endpoints.exists()


def test_a_write_token_cannot_connect_or_disconnect_an_account(workspace_a, make_token, sandbox_a):
    client = bearer(make_token(workspace_a, scopes=NOT_ADMIN).clear)

    _refused_for_lack_of_admin(
        client.post("/api/v1/accounts", {"platform": "sandbox", "handle": "intruder"})
    )
    _refused_for_lack_of_admin(client.delete(f"/api/v1/accounts/{sandbox_a.pk}"))
    assert list(workspace_a.social_accounts.values_list("handle", flat=True)) == ["sandy"]


def test_an_admin_token_mints_only_scopes_it_holds(client_with):
    response = _mint(client_with("read", "admin"), scopes=["read", "write"])

    assert response.status_code == 403
    assert error(response)["code"] == "SCOPE_ESCALATION"


def test_an_admin_token_mints_and_revokes(client_with, workspace_a, make_token):
    admin = client_with("read", "admin")
    other = make_token(workspace_a, scopes=["read"], name="other")

    assert _mint(admin).status_code == 201
    assert admin.delete(f"{TOKENS}/{other.token.pk}").status_code == 200


def test_any_token_may_revoke_itself(workspace_a, make_token):
    issued = make_token(workspace_a, scopes=["read"])
    client = bearer(issued.clear)

    assert client.delete(f"{TOKENS}/{issued.token.pk}").status_code == 200
    assert error(client.get("/api/v1/me"))["code"] == "INVALID_TOKEN"


def test_the_cli_scope_is_no_longer_granted(client_with):
    response = _mint(client_with("read", "admin"), scopes=["read", "cli"])

    assert response.status_code == 400
    assert "scopes.1" in error(response)["details"]


# Parents and their descendants


def test_a_minted_token_records_its_parent(workspace_a, make_token):
    parent = make_token(workspace_a, scopes=["read", "admin"])

    body = _mint(bearer(parent.clear), scopes=["read", "admin"]).json()

    assert body["parent"] == parent.token.pk
    assert ApiToken.objects.get(pk=body["id"]).parent == parent.token


def test_revoking_a_parent_revokes_every_descendant(workspace_a, make_token):
    parent = make_token(workspace_a, scopes=["read", "admin"])
    child = _mint(bearer(parent.clear), scopes=["read", "admin"]).json()
    grandchild = _mint(bearer(child["token"]), scopes=["read"]).json()
    unrelated = make_token(workspace_a, scopes=["read"], name="unrelated")

    response = bearer(parent.clear).delete(f"{TOKENS}/{parent.token.pk}")
    assert response.status_code == 200
    parent.token.refresh_from_db()

    for clear in (parent.clear, child["token"], grandchild["token"]):
        response = bearer(clear).get("/api/v1/me")
        assert response.status_code == 401
        assert error(response)["code"] == "INVALID_TOKEN"
    revoked = ApiToken.objects.filter(pk__in=[child["id"], grandchild["id"]])
    assert all(token.revoked_at == parent.token.revoked_at for token in revoked)
    assert bearer(unrelated.clear).get("/api/v1/me").status_code == 200


def test_revoking_a_child_leaves_its_parent(workspace_a, make_token):
    parent = make_token(workspace_a, scopes=["read", "admin"])
    child = _mint(bearer(parent.clear), scopes=["read"]).json()

    assert bearer(parent.clear).delete(f"{TOKENS}/{child['id']}").status_code == 200

    assert bearer(parent.clear).get("/api/v1/me").status_code == 200


def test_a_revoked_parent_cannot_mint(workspace_a, make_token):
    parent = make_token(workspace_a, scopes=["read", "admin"])
    parent.token.revoked_at = parent.token.created_at
    parent.token.save()

    with pytest.raises(Conflict) as refused:
        services.api_token_create(
            workspace=workspace_a, name="late", scopes=["read"], parent=parent.token
        )
    assert refused.value.code == "TOKEN_REVOKED"


# The creator's membership


@pytest.fixture
def dana_token(workspace_a, make_token):
    """A token made in the web app by Dana, an admin of workspace A, and a child it
    minted through the API (the child carries the same creator)."""
    from tests.factories import UserFactory

    dana = UserFactory(email="dana@example.com")
    membership.workspace_member_set(
        workspace=workspace_a, user=dana, role=WorkspaceMembership.Role.ADMIN
    )
    issued = services.api_token_create(
        workspace=workspace_a, name="dana", scopes=["read", "admin"], created_by=dana
    )
    child = _mint(bearer(issued.clear)).json()["token"]
    return dana, issued.clear, child


def _assert_stopped(clear: str) -> None:
    response = bearer(clear).get("/api/v1/me")
    assert response.status_code == 401
    assert error(response)["code"] == "INVALID_TOKEN"


def test_a_token_works_while_its_creator_is_a_member(dana_token):
    _dana, clear, child = dana_token

    assert bearer(clear).get("/api/v1/me").status_code == 200
    assert bearer(child).get("/api/v1/me").status_code == 200


def test_a_token_stops_when_its_creator_leaves_the_workspace(dana_token, workspace_a):
    dana, clear, child = dana_token

    membership.workspace_member_remove(workspace=workspace_a, user=dana)

    _assert_stopped(clear)
    _assert_stopped(child)


def test_a_token_stops_when_its_creator_leaves_the_organization(
    dana_token, workspace_a, org_a, alice
):
    dana, clear, child = dana_token

    membership.organization_member_remove(organization=org_a, user=dana, removed_by=alice)

    _assert_stopped(clear)
    _assert_stopped(child)


def test_a_token_stops_when_its_creator_is_deactivated(dana_token):
    dana, clear, child = dana_token

    dana.is_active = False
    dana.save()

    _assert_stopped(clear)
    _assert_stopped(child)


def test_a_deleted_creators_tokens_are_gone_not_orphaned(dana_token):
    dana, clear, _child = dana_token

    dana.delete()

    _assert_stopped(clear)
    assert not ApiToken.objects.filter(name="dana").exists()


def test_an_organization_admins_token_works_in_every_workspace_of_it(
    workspace_a, org_a, make_token
):
    from tests.factories import UserFactory

    olga = UserFactory(email="olga@example.com")
    membership.organization_member_set(
        organization=org_a, user=olga, role=OrganizationMembership.Role.ADMIN
    )
    issued = services.api_token_create(
        workspace=workspace_a, name="olga", scopes=["read"], created_by=olga
    )

    assert bearer(issued.clear).get("/api/v1/me").status_code == 200


# The cap on live tokens


def test_minting_past_the_workspace_cap_is_409(settings, workspace_a, make_token):
    settings.API_TOKENS_PER_WORKSPACE = 2
    admin = bearer(make_token(workspace_a, scopes=["read", "admin"]).clear)
    assert _mint(admin, name="second").status_code == 201

    response = _mint(admin, name="third")

    assert response.status_code == 409
    err = error(response)
    assert err["code"] == "TOKEN_LIMIT_REACHED"
    assert err["details"] == {"limit": 2, "live": 2}
    assert not ApiToken.objects.filter(name="third").exists()


def test_revoked_tokens_free_their_place_under_the_cap(settings, workspace_a, make_token):
    settings.API_TOKENS_PER_WORKSPACE = 2
    admin = bearer(make_token(workspace_a, scopes=["read", "admin"]).clear)
    second = _mint(admin, name="second").json()
    assert admin.delete(f"{TOKENS}/{second['id']}").status_code == 200

    assert _mint(admin, name="third").status_code == 201


def test_the_cap_counts_each_workspace_alone(settings, workspace_a, workspace_b, make_token):
    settings.API_TOKENS_PER_WORKSPACE = 1
    make_token(workspace_b)

    assert make_token(workspace_a).token.workspace == workspace_a
