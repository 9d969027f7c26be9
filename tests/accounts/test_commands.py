import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from apps.accounts.models import ApiToken, Organization, Workspace


def _run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_workspace_creates_the_organization_and_owner(db):
    out = _run("create_workspace", "Acme Social", "--owner", "owner@acme.test")
    ws = Workspace.objects.get(slug="acme-social")
    assert "workspace: acme-social" in out
    assert ws.organization.memberships.get().user.email == "owner@acme.test"
    assert ws.organization.memberships.get().role == "owner"


def test_create_workspace_in_an_existing_organization(org_a):
    _run("create_workspace", "Second", "--owner", "x@y.test", "--organization", "org-a")
    assert Workspace.objects.get(slug="second").organization == org_a
    assert Organization.objects.count() == 1


def test_create_workspace_refuses_an_unknown_organization(db):
    with pytest.raises(CommandError, match="No organization"):
        _run("create_workspace", "X", "--owner", "x@y.test", "--organization", "nope")


def test_create_api_token_prints_a_working_token_last(workspace_a):
    out = _run("create_api_token", "--workspace", "ws-a", "--scopes", "read", "publish")
    clear = out.strip().splitlines()[-1]
    assert ApiToken.objects.get().scopes == ["read", "publish"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {clear}")
    assert client.get("/api/v1/me").status_code == 200


def test_create_api_token_accepts_comma_separated_scopes(workspace_a):
    _run("create_api_token", "--workspace", "ws-a", "--scopes", "read,write")
    assert ApiToken.objects.get().scopes == ["read", "write"]


def test_create_api_token_refuses_unknown_scopes(workspace_a):
    with pytest.raises(CommandError, match="Unknown or missing scopes"):
        _run("create_api_token", "--workspace", "ws-a", "--scopes", "root")


def test_create_api_token_no_longer_knows_the_cli_scope(workspace_a):
    with pytest.raises(CommandError, match="Unknown or missing scopes: cli"):
        _run("create_api_token", "--workspace", "ws-a", "--scopes", "read", "cli")


def test_create_api_token_with_the_admin_scope_mints_tokens(workspace_a):
    out = _run("create_api_token", "--workspace", "ws-a", "--scopes", "read", "admin")
    lines = out.strip().splitlines()
    assert lines[0] == "scopes: read admin"  # the output format is a public contract
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {lines[-1]}")
    response = client.post("/api/v1/tokens", {"name": "ci", "scopes": ["read"]}, format="json")
    assert response.status_code == 201


def test_create_api_token_defaults_to_no_admin_scope(workspace_a):
    _run("create_api_token", "--workspace", "ws-a")
    assert ApiToken.objects.get().scopes == ["read", "write", "publish"]


def test_create_api_token_refuses_past_the_workspace_cap(workspace_a, settings):
    settings.API_TOKENS_PER_WORKSPACE = 1
    _run("create_api_token", "--workspace", "ws-a")
    with pytest.raises(CommandError, match="limit is 1"):
        _run("create_api_token", "--workspace", "ws-a")


def test_demo_setup_is_rerunnable_and_its_token_authenticates(db):
    from apps.web.demo import demo_setup

    first = demo_setup()
    second = demo_setup()
    assert first.workspace == second.workspace
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {second.token}")
    assert client.get("/api/v1/me").json()["workspace"]["slug"] == "demo"
    assert client.login(email=first.email, password=first.password)
