"""The Webhooks page: workspace admins register endpoints (secret shown once), switch
them, rotate, delete, and read the delivery log; others get 403, outsiders 404."""

import pytest
from django.test import Client

from apps.webhooks.endpoints import webhook_endpoint_create, webhook_endpoint_secret
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from apps.webhooks.outbox import webhook_emit

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _dns(fake_dns):
    fake_dns({"hooks.example.com": "93.184.215.14", "evil.example.com": "10.0.0.8"})


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def as_alice(alice, workspace_a):
    return login(alice)


@pytest.fixture
def endpoint(workspace_a):
    return webhook_endpoint_create(workspace=workspace_a, url="https://hooks.example.com/in")[0]


def base(workspace) -> str:
    return f"/w/{workspace.slug}/webhooks/"


def test_an_admin_registers_an_endpoint_and_sees_the_secret_once(as_alice, workspace_a):
    response = as_alice.post(
        f"{base(workspace_a)}new/",
        {"url": "https://hooks.example.com/in", "event_types": ["rendition.failed"]},
    )

    assert response.status_code == 201
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.event_types == ["rendition.failed"]
    page = response.content.decode()
    assert webhook_endpoint_secret(endpoint) in page
    assert response["Cache-Control"] == "no-store"
    assert webhook_endpoint_secret(endpoint) not in as_alice.get(base(workspace_a)).content.decode()


def test_a_private_address_is_refused_on_the_form(as_alice, workspace_a):
    response = as_alice.post(
        f"{base(workspace_a)}new/",
        {"url": "https://evil.example.com/in", "event_types": ["rendition.failed"]},
    )

    assert response.status_code == 400
    assert "10.0.0.8" in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_switching_rotating_and_deleting(as_alice, workspace_a, endpoint):
    old = webhook_endpoint_secret(endpoint)
    as_alice.post(f"{base(workspace_a)}{endpoint.pk}/toggle/")
    endpoint.refresh_from_db()
    assert endpoint.is_active is False

    rotated = as_alice.post(f"{base(workspace_a)}{endpoint.pk}/rotate/")
    endpoint.refresh_from_db()
    assert webhook_endpoint_secret(endpoint) != old
    assert webhook_endpoint_secret(endpoint) in rotated.content.decode()

    as_alice.post(f"{base(workspace_a)}{endpoint.pk}/delete/")
    assert not WebhookEndpoint.objects.exists()


def test_the_delivery_log_and_redelivery(as_alice, workspace_a, endpoint):
    event = webhook_emit(workspace=workspace_a, event="rendition.failed", data={})
    delivery = WebhookDelivery.objects.get()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status="failed", response_status=500, latency_ms=42, error={"kind": "x", "message": "boom"}
    )

    page = as_alice.get(f"{base(workspace_a)}{endpoint.pk}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert event.event_id in text
    assert "HTTP 500" in text
    assert "42 ms" in text

    response = as_alice.post(
        f"{base(workspace_a)}{endpoint.pk}/deliveries/{delivery.pk}/redeliver/"
    )
    assert response.status_code == 302
    assert WebhookDelivery.objects.filter(redelivery_of=delivery).count() == 1


def test_editors_may_not_manage_webhooks(bob, workspace_a, endpoint):
    client = login(bob)

    assert client.get(base(workspace_a)).status_code == 403
    assert client.post(f"{base(workspace_a)}{endpoint.pk}/delete/").status_code == 403
    assert WebhookEndpoint.objects.exists()


def test_another_workspaces_endpoint_is_404(charlie, workspace_b, workspace_a, endpoint):
    client = login(charlie)
    theirs = webhook_endpoint_create(workspace=workspace_b, url="https://hooks.example.com/b")[0]

    # charlie's own workspace, alice's endpoint id
    for path in ["", "toggle/", "rotate/", "delete/"]:
        url = f"{base(workspace_b)}{endpoint.pk}/{path}"
        response = client.get(url) if not path else client.post(url)
        assert response.status_code == 404, url
    # alice's workspace, which charlie cannot see
    assert client.get(base(workspace_a)).status_code == 404
    assert WebhookEndpoint.objects.filter(pk=endpoint.pk, is_active=True).exists()
    assert client.get(f"{base(workspace_b)}{theirs.pk}/").status_code == 200
