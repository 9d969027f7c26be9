"""Fixtures for publication tests: accounts on a few platforms, media on a temporary
storage, and a clock frozen at a known instant."""

from datetime import UTC, datetime

import pytest
import time_machine

from apps.accounts.models import SocialAccount
from tests.factories import MediaAssetFactory, SocialAccountFactory

NOW = datetime(2027, 3, 10, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def frozen():
    """The clock stands still at NOW (2027-03-10 12:00 UTC) for the test."""
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def sandbox_a(workspace_a) -> SocialAccount:
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="sandy")


@pytest.fixture
def mastodon_a(workspace_a) -> SocialAccount:
    return SocialAccountFactory(workspace=workspace_a, platform="mastodon", handle="masto")


@pytest.fixture
def instagram_a(workspace_a) -> SocialAccount:
    return SocialAccountFactory(workspace=workspace_a, platform="instagram", handle="insta")


@pytest.fixture
def account_b(workspace_b) -> SocialAccount:
    return SocialAccountFactory(workspace=workspace_b, platform="sandbox", handle="outsider")


@pytest.fixture
def jpeg_a(workspace_a):
    return MediaAssetFactory(
        workspace=workspace_a, mime_type="image/jpeg", original_name="photo.jpg", alt_text="A cat"
    )


@pytest.fixture
def media_b(workspace_b):
    return MediaAssetFactory(workspace=workspace_b)
