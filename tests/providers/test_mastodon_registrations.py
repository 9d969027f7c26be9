"""Registering this site's app on Mastodon servers is capped per person: per day and in
all, with a clear error, counting attempts the server refused, never reusing a cached app."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from apps.common.acting import acting_as
from apps.common.errors import QuotaExceeded
from apps.providers.mastodon.models import MastodonApp, MastodonAppRegistration
from apps.providers.mastodon.services import mastodon_app_get_or_register
from tests.factories import UserFactory
from tests.providers.social_helpers import go_offline

pytestmark = pytest.mark.django_db

REDIRECT = "http://127.0.0.1:8000/connect/mastodon/callback/"


@pytest.fixture(autouse=True)
def offline(monkeypatch, settings):
    go_offline(monkeypatch)
    settings.MASTODON_APP_REGISTRATIONS_PER_USER_DAY = 2
    settings.MASTODON_APP_REGISTRATIONS_PER_USER_TOTAL = 3


@pytest.fixture
def servers(respx_mock):
    route = respx_mock.post(url__regex=r"https://m\d+\.example/api/v1/apps").respond(
        200, json={"client_id": "cid", "client_secret": "cs"}
    )
    return route


@pytest.fixture
def as_alice(alice, workspace_a):
    client = Client()
    client.force_login(alice)
    return client


def connect(client: Client, n: int):
    return client.post("/w/ws-a/connect/mastodon/", {"instance": f"m{n}.example"})


def test_the_connect_form_refuses_past_the_daily_cap_before_calling_the_server(
    as_alice, alice, servers
):
    assert connect(as_alice, 1).status_code == 302
    assert connect(as_alice, 2).status_code == 302
    refused = connect(as_alice, 3)
    assert refused.status_code == 400
    assert "new Mastodon servers today" in refused.content.decode()
    assert servers.call_count == 2  # the third server was never contacted
    assert MastodonAppRegistration.objects.filter(user=alice).count() == 2
    assert not MastodonApp.objects.filter(instance_url="https://m3.example").exists()


def test_a_server_already_registered_costs_nothing(as_alice, alice, servers):
    for _ in range(4):
        assert connect(as_alice, 1).status_code == 302
    assert servers.call_count == 1
    assert MastodonAppRegistration.objects.filter(user=alice).count() == 1


def test_the_daily_cap_is_per_person(as_alice, servers, org_a, workspace_a):
    connect(as_alice, 1), connect(as_alice, 2)
    other = UserFactory()
    with acting_as(user=other):
        mastodon_app_get_or_register(instance_url="https://m9.example", redirect_uri=REDIRECT)
    assert servers.call_count == 3


def test_refused_registrations_count_too(as_alice, alice, respx_mock):
    respx_mock.post(url__regex=r"https://m\d+\.example/api/v1/apps").respond(422, json={})
    connect(as_alice, 1), connect(as_alice, 2)
    refused = connect(as_alice, 3)
    assert refused.status_code == 400
    assert "new Mastodon servers today" in refused.content.decode()
    assert respx_mock.calls.call_count == 2


def test_the_total_cap_holds_across_days(alice, servers):
    old = timezone.now() - timedelta(days=3)
    for n in range(3):
        row = MastodonAppRegistration.objects.create(user=alice, instance_url=f"https://o{n}.x")
        MastodonAppRegistration.objects.filter(pk=row.pk).update(created_at=old)
    with acting_as(user=alice), pytest.raises(QuotaExceeded) as refused:
        mastodon_app_get_or_register(instance_url="https://m1.example", redirect_uri=REDIRECT)
    assert refused.value.code == "MASTODON_REGISTRATIONS_EXHAUSTED"
    assert refused.value.details == {"total": 3, "used": 3}
    assert servers.call_count == 0


def test_yesterdays_registrations_do_not_count_against_today(alice, servers):
    row = MastodonAppRegistration.objects.create(user=alice, instance_url="https://o.x")
    MastodonAppRegistration.objects.filter(pk=row.pk).update(
        created_at=timezone.now() - timedelta(hours=25)
    )
    with acting_as(user=alice):
        for n in (1, 2):
            mastodon_app_get_or_register(
                instance_url=f"https://m{n}.example", redirect_uri=REDIRECT
            )
    assert servers.call_count == 2
