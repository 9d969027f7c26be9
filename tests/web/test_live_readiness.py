"""The composer and the accounts page show a platform with a current live validation as
supported."""

from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import SocialAccountFactory
from tests.providers.test_live_readiness import _validation

pytestmark = pytest.mark.django_db


def _recent(platform: str) -> None:
    validation = _validation(platform)
    validation.finished_at = datetime.now(UTC) - timedelta(days=1)
    validation.save(update_fields=["finished_at"])


def test_the_composer_and_the_accounts_page_show_a_validated_platform_as_supported(as_alice, news):
    masto = SocialAccountFactory(workspace=news.workspace, platform="mastodon", handle="masto")
    _recent("mastodon")

    composer = as_alice.get("/w/ws-a/compose/").content.decode()
    accounts = as_alice.get("/w/ws-a/accounts/").content.decode()

    assert f'id="dest-{masto.pk}"' in composer
    assert "readiness-experimental" not in composer  # the sandbox and a validated Mastodon
    assert accounts.count("readiness-experimental") == 10  # every platform but Mastodon
