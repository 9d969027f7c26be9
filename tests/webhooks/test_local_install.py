"""Trying webhooks on a local install: with DEBUG on, an endpoint may be a plain-http
receiver on this machine or its network (never a public address over http), and the
endpoint page's "Send test event" delivers a webhook.test event through the normal path,
recorded in the delivery log."""

import pytest
from django.test import Client

from apps.common.errors import ValidationFailed
from apps.webhooks.endpoints import webhook_endpoint_create, webhook_endpoint_update
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.webhooks.conftest import run_deliveries

pytestmark = pytest.mark.django_db


@pytest.fixture
def local(settings):
    settings.DEBUG = True
    settings.WEBHOOK_ALLOW_HTTP = False
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    settings.WEBHOOK_TIMEOUT_S = 2


@pytest.fixture
def as_alice(alice, workspace_a):
    client = Client()
    client.force_login(alice)
    return client


def test_a_local_install_accepts_a_plain_http_receiver_on_this_machine(
    local, workspace_a, receiver
):
    endpoint, _secret = webhook_endpoint_create(workspace=workspace_a, url=receiver.url)

    assert endpoint.url.startswith("http://127.0.0.1:")


@pytest.mark.parametrize(
    "url", ["https://127.0.0.1/hooks", "https://192.168.1.20/hooks", "http://10.1.2.3/hooks"]
)
def test_a_local_install_reaches_its_own_network(local, workspace_a, url):
    webhook_endpoint_create(workspace=workspace_a, url=url)

    assert WebhookEndpoint.objects.filter(url=url).exists()


def test_plain_http_to_a_public_address_stays_refused_on_a_local_install(local, workspace_a):
    with pytest.raises(ValidationFailed) as refused:
        webhook_endpoint_create(workspace=workspace_a, url="http://93.184.216.34/hooks")

    assert refused.value.code == "WEBHOOK_URL_FORBIDDEN"
    assert "public address" in refused.value.message


def test_without_debug_plain_http_to_loopback_stays_refused(settings, workspace_a, receiver):
    settings.DEBUG = False
    settings.WEBHOOK_ALLOW_HTTP = False
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False

    with pytest.raises(ValidationFailed):
        webhook_endpoint_create(workspace=workspace_a, url=receiver.url)


def test_send_test_event_delivers_a_webhook_test_event_through_the_log(
    local, as_alice, workspace_a, receiver, worker
):
    endpoint, _secret = webhook_endpoint_create(workspace=workspace_a, url=receiver.url)
    page = as_alice.get(f"/w/ws-a/webhooks/{endpoint.pk}/").content.decode()
    assert "Send test event" in page

    response = as_alice.post(f"/w/ws-a/webhooks/{endpoint.pk}/test/")

    assert response.status_code == 302
    assert response["Location"] == f"/w/ws-a/webhooks/{endpoint.pk}/"
    assert run_deliveries(worker) == ["done"]
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    assert delivery.event.type == "webhook.test"
    assert delivery.status == WebhookDelivery.Status.SUCCEEDED
    assert delivery.response_status == 200
    assert [r.json["type"] for r in receiver.requests] == ["webhook.test"]
    assert receiver.requests[0].json["id"] == delivery.event.event_id
    log = as_alice.get(f"/w/ws-a/webhooks/{endpoint.pk}/").content.decode()
    assert "webhook.test" in log


def test_a_switched_off_endpoint_sends_no_test_event(local, as_alice, workspace_a, receiver):
    endpoint, _secret = webhook_endpoint_create(workspace=workspace_a, url=receiver.url)
    webhook_endpoint_update(endpoint=endpoint, is_active=False)

    response = as_alice.post(f"/w/ws-a/webhooks/{endpoint.pk}/test/", follow=True)

    assert "switch it on before sending a test event" in response.content.decode()
    assert not WebhookDelivery.objects.filter(endpoint=endpoint).exists()


def test_an_editor_cannot_send_a_test_event(local, bob, workspace_a, receiver):
    endpoint, _secret = webhook_endpoint_create(workspace=workspace_a, url=receiver.url)
    client = Client()
    client.force_login(bob)

    assert client.post(f"/w/ws-a/webhooks/{endpoint.pk}/test/").status_code == 403
    assert not WebhookDelivery.objects.exists()
