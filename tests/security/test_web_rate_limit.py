"""A flood of web app writes from one person or one address is refused with 429 and
Retry-After; reads, the token API and other people are not affected."""

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from apps.security.models import RateCounter

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _rate(settings):
    settings.WEB_RATE_LIMIT = "5/min"


def test_a_signed_in_person_past_the_limit_gets_429_until_the_window_ends(alice):
    client = Client()
    client.force_login(alice)
    start = timezone.now().replace(second=10, microsecond=0)
    with time_machine.travel(start, tick=False) as clock:
        for _ in range(5):
            assert (
                client.post("/settings/", {"name": "A", "display_timezone": "UTC"}).status_code
                == 302
            )
        refused = client.post("/settings/", {"name": "Flood", "display_timezone": "UTC"})
        assert client.get("/settings/").status_code == 200  # reads are not counted

        clock.shift(timedelta(seconds=50))
        again = client.post("/settings/", {"name": "Later", "display_timezone": "UTC"})

    assert refused.status_code == 429
    assert refused["Retry-After"] == "50"
    assert "Too many requests. Try again in 50 seconds." in refused.content.decode()
    alice.refresh_from_db()
    assert again.status_code == 302 and alice.name == "Later"


def test_people_and_addresses_are_counted_apart(alice, bob):
    alice_client, bob_client = Client(), Client()
    alice_client.force_login(alice)
    bob_client.force_login(bob)
    for _ in range(6):
        alice_client.post("/settings/", {"name": "A", "display_timezone": "UTC"})
    assert (
        bob_client.post("/settings/", {"name": "B", "display_timezone": "UTC"}).status_code == 302
    )

    anonymous = Client()
    for _ in range(5):
        anonymous.post(
            "/login/", {"username": "x@example.com", "password": "x"}, REMOTE_ADDR="192.0.2.1"
        )
    assert (
        anonymous.post(
            "/login/", {"username": "x", "password": "x"}, REMOTE_ADDR="192.0.2.1"
        ).status_code
        == 429
    )
    assert (
        anonymous.post(
            "/login/", {"username": "x", "password": "x"}, REMOTE_ADDR="192.0.2.2"
        ).status_code
        == 200
    )


def test_the_token_api_is_not_counted(api_a):
    for _ in range(8):
        response = api_a.post("/api/v1/media", {}, format="multipart")
        assert response.status_code == 400
    assert not RateCounter.objects.exists()


def test_ended_windows_are_deleted(alice):
    client = Client()
    client.force_login(alice)
    with time_machine.travel(timezone.now() - timedelta(minutes=5)):
        client.post("/settings/", {"name": "A", "display_timezone": "UTC"})
    client.post("/settings/", {"name": "A", "display_timezone": "UTC"})
    assert RateCounter.objects.count() == 1
