import pytest
from rest_framework.test import APIClient

from apps.accounts import services
from apps.accounts.models import ApiToken, Organization
from apps.common.errors import DomainError


def test_it_stores_only_the_hash_and_prefix(workspace_a):
    issued = services.api_token_create(workspace=workspace_a, name="ci", scopes=["read"])
    token = ApiToken.objects.get(pk=issued.token.pk)
    assert issued.clear.startswith(token.prefix)
    assert token.token_hash == ApiToken.hash_secret(issued.clear)
    # The clear secret appears in no column.
    row = ApiToken.objects.filter(pk=token.pk).values().get()
    assert all(issued.clear not in str(value) for value in row.values())


def test_it_authenticates_a_live_token_and_records_use(workspace_a):
    issued = services.api_token_create(workspace=workspace_a, name="ci", scopes=["read"])
    assert services.api_token_authenticate(issued.clear).pk == issued.token.pk
    issued.token.refresh_from_db()
    assert issued.token.last_used_at is not None


def test_it_refuses_a_wrong_secret_with_a_known_prefix(workspace_a):
    issued = services.api_token_create(workspace=workspace_a, name="ci", scopes=["read"])
    forged = issued.clear[:-4] + ("aaaa" if not issued.clear.endswith("aaaa") else "bbbb")
    assert services.api_token_authenticate(forged) is None


def test_it_refuses_a_revoked_token(workspace_a):
    issued = services.api_token_create(workspace=workspace_a, name="ci", scopes=["read"])
    services.api_token_revoke(token=issued.token)
    assert services.api_token_authenticate(issued.clear) is None


def test_it_rejects_unknown_scopes(workspace_a):
    with pytest.raises(DomainError) as err:
        services.api_token_create(workspace=workspace_a, name="ci", scopes=["read", "root"])
    assert err.value.code == "INVALID_SCOPES"


def _client(clear: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {clear}")
    return client


def test_me_returns_the_tokens_workspace(workspace_a, make_token):
    issued = make_token(workspace_a, scopes=["read"])
    response = _client(issued.clear).get("/api/v1/me")
    assert response.status_code == 200
    assert response.json()["workspace"]["slug"] == "ws-a"
    assert response.json()["token"]["scopes"] == ["read"]


def test_me_without_a_token_is_401_in_the_envelope(db):
    response = APIClient().get("/api/v1/me")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert response.json()["error"]["code"] in {"UNAUTHENTICATED", "NOT_AUTHENTICATED"}


def test_a_revoked_token_is_401(workspace_a, make_token):
    issued = make_token(workspace_a)
    services.api_token_revoke(token=issued.token)
    response = _client(issued.clear).get("/api/v1/me")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "INVALID_TOKEN"


def test_a_malformed_header_is_401(db):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token abc")
    response = client.get("/api/v1/me")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "INVALID_AUTH_HEADER"


def test_a_deleted_organizations_token_is_refused(workspace_a, make_token):
    issued = make_token(workspace_a)
    Organization.objects.filter(pk=workspace_a.organization_id).update(
        state=Organization.State.DELETED
    )
    assert _client(issued.clear).get("/api/v1/me").status_code == 401


def test_it_checks_scopes_with_permission_classes(rf, workspace_a, make_token):
    from rest_framework.request import Request

    from apps.api.permissions import HasWorkspaceToken

    class View:
        required_scopes = {"GET": "read", "POST": "publish"}

    token = make_token(workspace_a, scopes=["read"]).token
    perm = HasWorkspaceToken()
    get = Request(rf.get("/"))
    get.auth = token
    post = Request(rf.post("/"))
    post.auth = token
    assert perm.has_permission(get, View()) is True
    assert perm.has_permission(post, View()) is False
    assert "publish" in perm.message
