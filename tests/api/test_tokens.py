from apps.accounts.models import ApiToken
from tests.api.helpers import bearer, error

URL = "/api/v1/tokens"


def test_it_lists_the_workspaces_tokens_without_secrets(workspace_a, workspace_b, make_token):
    mine = make_token(workspace_a, scopes=["read"])
    other = make_token(workspace_a, scopes=["read", "write"], name="ci")
    make_token(workspace_b)

    response = bearer(mine.clear).get(URL)

    assert response.status_code == 200
    results = response.json()["results"]
    assert [t["id"] for t in results] == [other.token.pk, mine.token.pk]
    assert [t["is_current"] for t in results] == [False, True]
    assert "token_hash" not in results[0]
    assert mine.clear not in response.content.decode()


def test_it_creates_a_token_and_shows_its_secret_once(api_a, workspace_a):
    response = api_a.post(URL, {"name": "deploy", "scopes": ["read", "write"]})

    assert response.status_code == 201
    body = response.json()
    assert body["scopes"] == ["read", "write"]
    token = ApiToken.objects.get(pk=body["id"])
    assert token.workspace == workspace_a
    assert token.matches(body["token"])
    assert bearer(body["token"]).get("/api/v1/me").status_code == 200
    assert "token" not in api_a.get(URL).json()["results"][0]


def test_a_token_cannot_grant_scopes_it_lacks(client_with):
    response = client_with("read", "admin").post(URL, {"name": "x", "scopes": ["publish"]})

    assert response.status_code == 403
    assert error(response)["code"] == "SCOPE_ESCALATION"
    assert error(response)["details"]["scopes"] == ["publish"]
    assert ApiToken.objects.filter(name="x").count() == 0


def test_unknown_scopes_are_a_validation_error(api_a):
    response = api_a.post(URL, {"name": "x", "scopes": ["root"]})
    assert response.status_code == 400
    assert "scopes.0" in error(response)["details"]


def test_revoking_stops_the_token_at_once(api_a, workspace_a, make_token):
    victim = make_token(workspace_a, scopes=["read"])

    response = api_a.delete(f"{URL}/{victim.token.pk}")

    assert response.status_code == 200
    assert response.json()["revoked_at"] is not None
    assert bearer(victim.clear).get("/api/v1/me").status_code == 401


def test_a_token_may_revoke_itself(workspace_a, make_token):
    issued = make_token(workspace_a, scopes=["read", "write"])
    client = bearer(issued.clear)
    assert client.delete(f"{URL}/{issued.token.pk}").status_code == 200
    assert client.get(URL).status_code == 401
