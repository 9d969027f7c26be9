"""Fixtures for API tests: clients holding tokens with chosen scopes, accounts and media in
both workspaces, and a clean rate-limit cache."""

import pytest
from django.core.cache import cache

from apps.accounts.models import SocialAccount
from tests.api.helpers import bearer
from tests.factories import MediaAssetFactory, SocialAccountFactory


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def client_with(workspace_a, make_token):
    """An API client of workspace A whose token holds exactly `scopes`."""

    def make(*scopes: str, workspace=None):
        return bearer(make_token(workspace or workspace_a, scopes=list(scopes)).clear)

    return make


@pytest.fixture
def sandbox_a(workspace_a) -> SocialAccount:
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="sandy")


@pytest.fixture
def sandbox_a2(workspace_a) -> SocialAccount:
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="sandra")


@pytest.fixture
def account_b(workspace_b) -> SocialAccount:
    return SocialAccountFactory(workspace=workspace_b, platform="sandbox", handle="outsider")


@pytest.fixture
def media_a(workspace_a):
    return MediaAssetFactory(workspace=workspace_a)


@pytest.fixture
def media_b(workspace_b):
    return MediaAssetFactory(workspace=workspace_b)
