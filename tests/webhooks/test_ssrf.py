"""Endpoints that would point the platform at its own network are refused when saved and
again at delivery, after DNS resolution; the connection goes to the address that was
checked, while the request keeps naming the original host."""

import pytest

from apps.common.errors import ValidationFailed
from apps.webhooks import network
from apps.webhooks.endpoints import webhook_endpoint_create
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from apps.webhooks.outbox import webhook_emit
from tests.webhooks.conftest import run_deliveries

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hooks",
        "https://127.8.9.10:8443/hooks",
        "https://10.1.2.3/hooks",
        "https://172.16.0.9/hooks",
        "https://192.168.1.20/hooks",
        "https://169.254.169.254/latest/meta-data/",
        "https://100.100.100.200/",
        "https://[::1]/hooks",
        "https://[::ffff:127.0.0.1]/hooks",
        "https://[fe80::1]/hooks",
        "https://[fd00:ec2::254]/hooks",
        "https://0.0.0.0/hooks",
        "https://224.0.0.1/hooks",
        "https://240.0.0.1/hooks",
    ],
)
def test_it_refuses_private_loopback_link_local_and_metadata_addresses(workspace_a, url):
    with pytest.raises(ValidationFailed) as refused:
        webhook_endpoint_create(workspace=workspace_a, url=url)

    assert refused.value.code == "WEBHOOK_URL_FORBIDDEN"
    assert "url" in refused.value.details
    assert not WebhookEndpoint.objects.exists()


def test_it_refuses_a_host_name_that_resolves_to_loopback(workspace_a, fake_dns):
    fake_dns({"innocent.example.com": "127.0.0.1"})

    with pytest.raises(ValidationFailed) as refused:
        webhook_endpoint_create(workspace=workspace_a, url="https://innocent.example.com/hooks")

    assert refused.value.code == "WEBHOOK_URL_FORBIDDEN"
    assert "127.0.0.1" in refused.value.message


def test_one_private_address_among_public_ones_is_enough_to_refuse(workspace_a, fake_dns):
    fake_dns({"mixed.example.com": ["93.184.215.14", "10.0.0.7"]})

    with pytest.raises(ValidationFailed) as refused:
        webhook_endpoint_create(workspace=workspace_a, url="https://mixed.example.com/hooks")

    assert refused.value.code == "WEBHOOK_URL_FORBIDDEN"


def test_a_public_https_host_is_accepted(workspace_a, fake_dns):
    fake_dns({"hooks.example.com": "93.184.215.14"})

    endpoint, secret = webhook_endpoint_create(
        workspace=workspace_a, url="https://hooks.example.com/in"
    )

    assert endpoint.url == "https://hooks.example.com/in"
    assert secret.startswith("whsec_")


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/in",
        "ftp://hooks.example.com/",
        "https://user:pw@hooks.example.com/",
    ],
)
def test_plain_http_other_schemes_and_credentials_are_refused(workspace_a, fake_dns, url):
    fake_dns({"hooks.example.com": "93.184.215.14"})

    with pytest.raises(ValidationFailed) as refused:
        webhook_endpoint_create(workspace=workspace_a, url=url)

    assert refused.value.code == "WEBHOOK_URL_FORBIDDEN"


def test_plain_http_is_accepted_when_allowed(workspace_a, fake_dns, settings):
    settings.WEBHOOK_ALLOW_HTTP = True
    fake_dns({"hooks.example.com": "93.184.215.14"})

    endpoint, _ = webhook_endpoint_create(workspace=workspace_a, url="http://hooks.example.com/")

    assert endpoint.url == "http://hooks.example.com/"


def test_an_unresolvable_host_is_refused(workspace_a):
    with pytest.raises(ValidationFailed) as refused:
        webhook_endpoint_create(workspace=workspace_a, url="https://no-such-host.invalid/hooks")

    assert refused.value.code == "WEBHOOK_URL_UNRESOLVABLE"


def test_metadata_addresses_stay_refused_when_private_targets_are_allowed(workspace_a, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True

    assert network.check_url("https://10.0.0.1/hooks") == "https://10.0.0.1/hooks"
    assert network.check_url("https://127.0.0.1/hooks") == "https://127.0.0.1/hooks"
    with pytest.raises(ValidationFailed):
        webhook_endpoint_create(workspace=workspace_a, url="https://169.254.169.254/")


def test_delivery_refuses_a_host_that_now_resolves_to_loopback(
    workspace_a, fake_dns, receiver, worker, settings
):
    """DNS rebinding: public when saved, loopback at delivery. Nothing is sent."""
    settings.WEBHOOK_ALLOW_HTTP = True
    fake_dns({"rebind.example.com": "93.184.215.14"})
    endpoint, _ = webhook_endpoint_create(
        workspace=workspace_a, url=f"http://rebind.example.com:{receiver.port}/hooks"
    )
    webhook_emit(workspace=workspace_a, event="rendition.published", data={"n": 1})
    fake_dns({"rebind.example.com": "127.0.0.1"})

    assert run_deliveries(worker) == ["failed"]

    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    assert delivery.status == "failed"
    assert delivery.error["kind"] == "forbidden_target"
    assert "127.0.0.1" in delivery.error["message"]
    assert receiver.requests == []


def test_delivery_connects_to_the_checked_address_and_names_the_original_host(
    workspace_a, fake_dns, receiver, worker, private_targets
):
    fake_dns({"hooks.customer.test": "127.0.0.1"})
    endpoint, _ = webhook_endpoint_create(
        workspace=workspace_a, url=f"http://hooks.customer.test:{receiver.port}/in"
    )
    webhook_emit(workspace=workspace_a, event="rendition.published", data={"n": 1})

    assert run_deliveries(worker) == ["done"]

    [request] = receiver.requests
    assert request.path == "/in"
    assert request.headers["host"] == f"hooks.customer.test:{receiver.port}"
    assert WebhookDelivery.objects.get(endpoint=endpoint).status == "succeeded"
