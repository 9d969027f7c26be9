"""While maintenance is on, every page of the web app shows the operators' message, so a
person reads it before writing something that would be refused."""

import pytest

from apps.ops import services

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_maintenance_cache():
    services.maintenance_cache_clear()
    yield
    services.maintenance_cache_clear()


@pytest.mark.parametrize("path", ["/w/ws-a/", "/w/ws-a/posts/", "/w/ws-a/compose/", "/settings/"])
def test_every_page_shows_the_operators_message_while_maintenance_is_on(as_bob, path):
    services.maintenance_set(is_enabled=True, message="Upgrading the database until 14:00 UTC.")

    response = as_bob.get(path, follow=True)

    body = response.content.decode()
    assert response.status_code == 200
    assert "Upgrading the database until 14:00 UTC." in body
    assert "maintenance-banner" in body


def test_the_setting_shows_the_standard_message(as_bob, settings):
    settings.MAINTENANCE_MODE = True

    body = as_bob.get("/w/ws-a/").content.decode()

    assert services.DEFAULT_MESSAGE[:40] in body


def test_no_banner_when_maintenance_is_off(as_bob):
    services.maintenance_set(is_enabled=False, message="An old message.")

    body = as_bob.get("/w/ws-a/").content.decode()

    assert "maintenance-banner" not in body
    assert "An old message." not in body
