"""No network while holding a row lock: changing or re-enabling an endpoint resolves its
host (a DNS answer may take seconds) before locking the endpoint's row, so its deliveries
never wait on it."""

import socket
import threading

import pytest
from django.db import OperationalError, connection

from apps.webhooks.endpoints import webhook_endpoint_create, webhook_endpoint_update

pytestmark = pytest.mark.django_db(transaction=True)


def _row_is_free(endpoint_id: int) -> bool:
    """From another connection: can the endpoint's row be locked right now?"""
    answer = []

    def probe():
        try:
            with connection.cursor() as cursor:
                cursor.execute("BEGIN")
                cursor.execute(
                    "SELECT id FROM webhooks_webhookendpoint WHERE id = %s FOR UPDATE NOWAIT",
                    [endpoint_id],
                )
                cursor.execute("ROLLBACK")
            answer.append(True)
        except OperationalError:
            answer.append(False)
        finally:
            connection.close()

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join(10)
    return answer == [True]


@pytest.fixture
def slow_dns(monkeypatch):
    """Resolve *.example.com to a public address, probing the endpoint's row lock during
    each lookup (where a slow DNS server would make others wait)."""
    probes: list[bool] = []
    watched: list[int] = []
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if not name.endswith(".example.com"):
            return real(host, port, *args, **kwargs)
        if watched:
            probes.append(_row_is_free(watched[0]))
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port or 0))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return watched, probes


def test_a_new_url_is_resolved_before_the_row_is_locked(workspace_a, slow_dns):
    watched, probes = slow_dns
    endpoint, _ = webhook_endpoint_create(workspace=workspace_a, url="https://a.example.com/h")
    watched.append(endpoint.pk)
    webhook_endpoint_update(endpoint=endpoint, url="https://b.example.com/h")
    assert probes and all(probes)


def test_switching_an_endpoint_back_on_resolves_before_the_row_is_locked(workspace_a, slow_dns):
    watched, probes = slow_dns
    endpoint, _ = webhook_endpoint_create(workspace=workspace_a, url="https://a.example.com/h")
    webhook_endpoint_update(endpoint=endpoint, is_active=False)
    watched.append(endpoint.pk)
    updated = webhook_endpoint_update(endpoint=endpoint, is_active=True)
    assert updated.is_active
    assert probes and all(probes)
