import pytest
from django.urls import reverse

from apps.webhooks.endpoints import webhook_endpoint_create
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from apps.webhooks.outbox import webhook_emit


@pytest.fixture
def delivery(workspace_a, fake_dns):
    fake_dns({"hooks.example.com": "93.184.215.14"})
    webhook_endpoint_create(workspace=workspace_a, url="https://hooks.example.com/in")
    webhook_emit(workspace=workspace_a, event="rendition.failed", data={"x": 1})
    return WebhookDelivery.objects.get()


@pytest.mark.parametrize(
    "name", ["webhookendpoint", "webhookevent", "webhookdelivery"], ids=lambda n: n
)
@pytest.mark.parametrize("params", [{}, {"q": "hooks"}])
def test_changelists_render(admin_client, delivery, name, params):
    response = admin_client.get(reverse(f"admin:webhooks_{name}_changelist"), params)

    assert response.status_code == 200


def test_change_pages_render_without_the_secret(admin_client, delivery):
    endpoint = delivery.endpoint
    for url in [
        reverse("admin:webhooks_webhookendpoint_change", args=[endpoint.pk]),
        reverse("admin:webhooks_webhookdelivery_change", args=[delivery.pk]),
        reverse("admin:webhooks_webhookevent_change", args=[delivery.event_id]),
    ]:
        response = admin_client.get(url)
        assert response.status_code == 200
        assert b"secret_ciphertext" not in response.content


def test_switch_off_action(admin_client, delivery):
    endpoint = delivery.endpoint
    admin_client.post(
        reverse("admin:webhooks_webhookendpoint_changelist"),
        {"action": "switch_off", "_selected_action": [endpoint.pk]},
    )

    assert WebhookEndpoint.objects.get(pk=endpoint.pk).is_active is False
