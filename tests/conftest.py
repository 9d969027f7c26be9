"""Personas shared by every test: alice owns workspace A, bob is an editor in A, vera is a
viewer in A, charlie owns workspace B (the outsider)."""

import pytest
from rest_framework.test import APIClient

from apps.accounts import services
from apps.accounts.models import OrganizationMembership, WorkspaceMembership
from tests.factories import (
    OrganizationFactory,
    OrganizationMembershipFactory,
    UserFactory,
    WorkspaceFactory,
    WorkspaceMembershipFactory,
)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_maintenance_cache():
    """The maintenance switch is cached per process: no test sees another's reading."""
    from apps.ops.services import maintenance_cache_clear

    maintenance_cache_clear()
    yield
    maintenance_cache_clear()


@pytest.fixture(autouse=True)
def _sandbox_enabled(settings):
    """The tests drive the sandbox platform, which production leaves off by default."""
    settings.SANDBOX_ENABLED = True


@pytest.fixture
def alice(db):
    return UserFactory(email="alice@example.com")


@pytest.fixture
def bob(db):
    return UserFactory(email="bob@example.com")


@pytest.fixture
def vera(db):
    return UserFactory(email="vera@example.com")


@pytest.fixture
def charlie(db):
    return UserFactory(email="charlie@example.com")


@pytest.fixture
def org_a(alice):
    org = OrganizationFactory(name="Org A", slug="org-a")
    OrganizationMembershipFactory(
        organization=org, user=alice, role=OrganizationMembership.Role.OWNER
    )
    return org


@pytest.fixture
def workspace_a(org_a, bob, vera):
    ws = WorkspaceFactory(organization=org_a, name="Workspace A", slug="ws-a")
    WorkspaceMembershipFactory(workspace=ws, user=bob, role=WorkspaceMembership.Role.EDITOR)
    WorkspaceMembershipFactory(workspace=ws, user=vera, role=WorkspaceMembership.Role.VIEWER)
    return ws


@pytest.fixture
def org_b(charlie):
    org = OrganizationFactory(name="Org B", slug="org-b")
    OrganizationMembershipFactory(
        organization=org, user=charlie, role=OrganizationMembership.Role.OWNER
    )
    return org


@pytest.fixture
def workspace_b(org_b):
    return WorkspaceFactory(organization=org_b, name="Workspace B", slug="ws-b")


ALL_SCOPES = ["read", "write", "publish", "admin", "mcp"]


@pytest.fixture
def make_token():
    def make(workspace, scopes=None, name="test"):
        return services.api_token_create(
            workspace=workspace, name=name, scopes=scopes or ALL_SCOPES
        )

    return make


@pytest.fixture
def api_a(workspace_a, make_token):
    """An API client authenticated with a full-scope token of workspace A."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(workspace_a).clear}")
    return client


@pytest.fixture
def api_b(workspace_b, make_token):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(workspace_b).clear}")
    return client
