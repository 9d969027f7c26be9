"""The audit log records the client's address resolved through the trusted proxies
(TRUSTED_PROXY_COUNT), beside the connection's peer: behind a proxy, not the proxy's."""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts import services
from apps.audit.models import AuditEvent

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.5"


def only(action: str) -> AuditEvent:
    [event] = AuditEvent.objects.filter(action=action)
    return event


def _sign_in(alice, forwarded: str | None):
    alice.set_password("pw-123456789")
    alice.save()
    extra = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    client = Client(REMOTE_ADDR=PROXY, **extra)
    response = client.post("/login/", {"username": alice.email, "password": "pw-123456789"})
    assert response.status_code == 302
    return only("user.login")


def test_behind_a_trusted_proxy_a_sign_in_records_the_client_and_the_proxy(alice, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    # The client forged the left entry; the proxy appended the address it saw.
    event = _sign_in(alice, "6.6.6.6, 203.0.113.9")
    assert (event.ip, event.peer_ip) == ("203.0.113.9", PROXY)


def test_two_trusted_proxies_count_two_hops_back(alice, settings):
    settings.TRUSTED_PROXY_COUNT = 2
    event = _sign_in(alice, "6.6.6.6, 203.0.113.9, 10.0.0.9")
    assert (event.ip, event.peer_ip) == ("203.0.113.9", PROXY)


def test_without_trusted_proxies_x_forwarded_for_is_ignored(alice, settings):
    settings.TRUSTED_PROXY_COUNT = 0
    event = _sign_in(alice, "6.6.6.6")
    assert (event.ip, event.peer_ip) == (PROXY, PROXY)


def test_a_forwarded_entry_that_is_no_address_falls_back_to_the_peer(alice, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    event = _sign_in(alice, "not-an-address")
    assert (event.ip, event.peer_ip) == (PROXY, PROXY)


def test_an_api_call_behind_the_proxy_is_recorded_with_the_client_address(
    workspace_a, alice, settings
):
    settings.TRUSTED_PROXY_COUNT = 1
    token = services.api_token_create(
        workspace=workspace_a, name="deploy", scopes=["read", "write", "admin"], created_by=alice
    )
    AuditEvent.objects.all().delete()
    client = APIClient(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="198.51.100.4")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token.clear}")
    response = client.post("/api/v1/tokens", {"name": "child", "scopes": ["read"]})
    assert response.status_code == 201, response.content
    event = only("token.created")
    assert (event.ip, event.peer_ip) == ("198.51.100.4", PROXY)
