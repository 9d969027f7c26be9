"""The data migration that brought the admin scope: existing write tokens keep their admin
powers only where their maker would have them in the web app today, and cli is dropped."""

import importlib

from django.apps import apps as registry
from django.utils import timezone

from apps.accounts import membership
from apps.accounts.models import ApiToken, WorkspaceMembership
from tests.factories import UserFactory

migration = importlib.import_module("apps.accounts.migrations.0006_apitoken_admin_scope")


def _token(workspace, scopes, created_by=None, revoked=False, name="t"):
    # Rows as they were before the migration: scopes the service no longer accepts.
    return ApiToken.objects.create(
        workspace=workspace,
        name=name,
        prefix=f"sp_{name}"[:12],
        token_hash="x",
        scopes=scopes,
        created_by=created_by,
        revoked_at=timezone.now() if revoked else None,
    )


def _migrated(token) -> list[str]:
    migration.forwards(registry, None)
    token.refresh_from_db()
    return token.scopes


def test_a_workspace_admins_write_token_gains_admin(workspace_a):
    dana = UserFactory()
    membership.workspace_member_set(
        workspace=workspace_a, user=dana, role=WorkspaceMembership.Role.ADMIN
    )
    token = _token(workspace_a, ["read", "write", "mcp"], created_by=dana)

    assert _migrated(token) == ["read", "write", "admin", "mcp"]


def test_an_organization_owners_write_token_gains_admin(workspace_a, alice):
    token = _token(workspace_a, ["write"], created_by=alice)

    assert _migrated(token) == ["write", "admin"]


def test_an_operator_token_gains_admin(workspace_a):
    token = _token(workspace_a, ["read", "write", "publish"])

    assert _migrated(token) == ["read", "write", "publish", "admin"]


def test_an_editors_token_does_not_gain_admin(workspace_a, bob):
    token = _token(workspace_a, ["read", "write", "publish"], created_by=bob)

    assert _migrated(token) == ["read", "write", "publish"]


def test_a_token_without_write_does_not_gain_admin(workspace_a):
    token = _token(workspace_a, ["read", "publish"])

    assert _migrated(token) == ["read", "publish"]


def test_a_revoked_token_does_not_gain_admin(workspace_a):
    token = _token(workspace_a, ["write"], revoked=True)

    assert _migrated(token) == ["write"]


def test_cli_is_dropped_from_every_token(workspace_a, bob):
    token = _token(workspace_a, ["read", "cli"], created_by=bob)

    assert _migrated(token) == ["read"]


def test_backwards_takes_admin_away(workspace_a):
    token = _token(workspace_a, ["read", "write", "admin"])

    migration.backwards(registry, None)
    token.refresh_from_db()

    assert token.scopes == ["read", "write"]
