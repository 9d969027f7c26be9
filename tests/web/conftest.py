"""Fixtures of the web app's tests: logged-in clients for each persona, and a sandbox
account in workspace A."""

import pytest
from django.test import Client

from apps.sandbox.services import sandbox_account_create


def _client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def as_alice(alice, workspace_a):
    """Owner of org A: admin in workspace A."""
    return _client_for(alice)


@pytest.fixture
def as_bob(bob, workspace_a):
    """Editor in workspace A."""
    return _client_for(bob)


@pytest.fixture
def as_vera(vera, workspace_a):
    """Viewer in workspace A."""
    return _client_for(vera)


@pytest.fixture
def as_charlie(charlie, workspace_b):
    """Owner of org B: an outsider to workspace A."""
    return _client_for(charlie)


@pytest.fixture
def news(workspace_a):
    """A well-behaved sandbox account of workspace A (text limit 500)."""
    return sandbox_account_create(workspace=workspace_a, handle="news")


@pytest.fixture
def short(workspace_a):
    """A sandbox account of workspace A that takes at most 40 characters."""
    return sandbox_account_create(
        workspace=workspace_a, handle="short", behaviour={"text_limit": 40}
    )
