"""The composer and the accounts page show a platform with a current live validation as
supported."""

from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import PublicationFactory, RenditionFactory, SocialAccountFactory
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


def test_a_post_page_shows_its_destinations_readiness_as_of_today(as_alice, workspace_a):
    masto = SocialAccountFactory(workspace=workspace_a, platform="mastodon", handle="masto")
    on_x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="exx")
    publication = PublicationFactory(workspace=workspace_a)
    RenditionFactory(publication=publication, social_account=masto)
    x_rendition = RenditionFactory(publication=publication, social_account=on_x)
    _recent("mastodon")

    page = as_alice.get(f"/w/ws-a/posts/{publication.pk}/").content.decode()
    card = as_alice.get(f"/w/ws-a/posts/{publication.pk}/destinations/{x_rendition.pk}/")

    assert page.count("readiness-supported") == 1  # Mastodon
    assert page.count("readiness-experimental") == 1  # X
    assert "readiness-experimental" in card.content.decode()
