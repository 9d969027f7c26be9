"""/api/v1/webhooks: CRUD, the delivery log and redelivery; scopes, the error envelope and
another workspace's ids (404)."""

from datetime import datetime, timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone
from rest_framework.test import APIClient

from apps.webhooks.endpoints import webhook_endpoint_create, webhook_endpoint_secret
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from apps.webhooks.outbox import webhook_emit
from tests.api.helpers import bearer, error

pytestmark = pytest.mark.django_db

URL = "/api/v1/webhooks"


@pytest.fixture(autouse=True)
def _setup(fake_dns):
    fake_dns({"hooks.example.com": "93.184.215.14", "evil.example.com": "127.0.0.1"})
    cache.clear()  # per-token rate limits


@pytest.fixture
def client_with(workspace_a, make_token):
    def make(*scopes, workspace=None):
        return bearer(make_token(workspace or workspace_a, scopes=list(scopes)).clear)

    return make


@pytest.fixture
def endpoint_a(workspace_a):
    return webhook_endpoint_create(workspace=workspace_a, url="https://hooks.example.com/a")[0]


@pytest.fixture
def endpoint_b(workspace_b):
    return webhook_endpoint_create(workspace=workspace_b, url="https://hooks.example.com/b")[0]


def test_it_creates_an_endpoint_and_shows_its_secret_once(api_a, workspace_a):
    response = api_a.post(
        URL,
        {"url": "https://hooks.example.com/in", "event_types": ["rendition.failed"]},
        format="json",
    )

    assert response.status_code == 201
    body = response.json()
    endpoint = WebhookEndpoint.objects.get(pk=body["id"])
    assert endpoint.workspace == workspace_a
    assert body["event_types"] == ["rendition.failed"]
    assert body["is_active"] is True
    assert webhook_endpoint_secret(endpoint) == body["secret"]
    listed = api_a.get(URL).json()["results"]
    assert [e["id"] for e in listed] == [endpoint.pk]
    assert "secret" not in listed[0]
    assert body["secret"] not in api_a.get(f"{URL}/{endpoint.pk}").content.decode()


@pytest.mark.parametrize(
    ("body", "code", "field"),
    [
        ({"url": "https://evil.example.com/x"}, "WEBHOOK_URL_FORBIDDEN", "url"),
        ({"url": "http://hooks.example.com/x"}, "WEBHOOK_URL_FORBIDDEN", "url"),
        ({"url": "https://hooks.example.com/x", "event_types": ["nope"]}, None, "event_types.0"),
        ({"url": "https://hooks.example.com/x", "secret": "mine"}, None, "secret"),
        ({}, None, "url"),
    ],
)
def test_bad_bodies_get_the_error_envelope(api_a, body, code, field):
    response = api_a.post(URL, body, format="json")

    assert response.status_code == 400
    found = error(response)
    if code:
        assert found["code"] == code
    assert field in found["details"]
    assert not WebhookEndpoint.objects.exists()


def test_it_updates_and_switches_an_endpoint_off_and_on(api_a, endpoint_a):
    response = api_a.patch(
        f"{URL}/{endpoint_a.pk}",
        {"description": "CRM", "is_active": False, "event_types": ["publication.completed"]},
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["is_active"] is False
    assert response.json()["disabled_reason"] == "Switched off by a person."
    assert response.json()["event_types"] == ["publication.completed"]
    again = api_a.patch(f"{URL}/{endpoint_a.pk}", {"is_active": True}, format="json")
    assert again.json()["is_active"] is True
    assert again.json()["disabled_at"] is None


def test_rotating_the_secret_shows_the_new_one(api_a, endpoint_a):
    response = api_a.post(f"{URL}/{endpoint_a.pk}/rotate-secret")

    assert response.status_code == 200
    endpoint_a.refresh_from_db()
    assert webhook_endpoint_secret(endpoint_a) == response.json()["secret"]
    # The replaced secret signs too for WEBHOOK_SECRET_OVERLAP_HOURS (24 by default).
    until = datetime.fromisoformat(response.json()["previous_secret_signs_until"])
    assert timedelta(hours=23) < until - timezone.now() <= timedelta(hours=24)


def test_a_new_endpoint_has_no_previous_secret(api_a):
    response = api_a.post(URL, {"url": "https://hooks.example.com/in"})
    assert response.status_code == 201
    assert response.json()["previous_secret_signs_until"] is None


def test_it_deletes_an_endpoint(api_a, endpoint_a):
    response = api_a.delete(f"{URL}/{endpoint_a.pk}")

    assert response.status_code == 204
    assert not WebhookEndpoint.objects.filter(pk=endpoint_a.pk).exists()


def test_the_delivery_log_and_redelivery(api_a, workspace_a, endpoint_a):
    event = webhook_emit(workspace=workspace_a, event="rendition.failed", data={"x": 1})
    delivery = WebhookDelivery.objects.get()

    listed = api_a.get(f"{URL}/{endpoint_a.pk}/deliveries")
    assert listed.status_code == 200
    [row] = listed.json()["results"]
    assert row["event_id"] == event.event_id
    assert row["event_type"] == "rendition.failed"
    assert row["status"] == "pending"
    assert api_a.get(f"{URL}/{endpoint_a.pk}/deliveries?status=failed").json()["results"] == []

    pending = api_a.post(f"{URL}/{endpoint_a.pk}/deliveries/{delivery.pk}/redeliver")
    assert pending.status_code == 409
    assert error(pending)["code"] == "DELIVERY_PENDING"

    WebhookDelivery.objects.filter(pk=delivery.pk).update(status="failed")
    response = api_a.post(f"{URL}/{endpoint_a.pk}/deliveries/{delivery.pk}/redeliver")
    assert response.status_code == 202
    assert response.json()["event_id"] == event.event_id
    assert response.json()["redelivery_of"] == delivery.pk
    assert response.json()["status"] == "pending"


def test_an_unknown_query_parameter_is_refused(api_a, endpoint_a):
    response = api_a.get(f"{URL}/{endpoint_a.pk}/deliveries?state=failed")

    assert response.status_code == 400


def _calls(endpoint, delivery_pk):
    base = f"{URL}/{endpoint.pk}"
    return [
        ("get", base, None),
        ("patch", base, {"description": "x"}),
        ("delete", base, None),
        ("post", f"{base}/rotate-secret", None),
        ("get", f"{base}/deliveries", None),
        ("post", f"{base}/deliveries/{delivery_pk}/redeliver", None),
    ]


def test_another_workspaces_endpoints_and_deliveries_are_404(
    api_a, workspace_b, endpoint_a, endpoint_b
):
    webhook_emit(workspace=workspace_b, event="rendition.failed", data={})
    theirs = WebhookDelivery.objects.get(endpoint=endpoint_b)
    WebhookDelivery.objects.filter(pk=theirs.pk).update(status="failed")

    for method, path, body in _calls(endpoint_b, theirs.pk):
        response = getattr(api_a, method)(path, body, format="json")
        assert response.status_code == 404, (method, path)
        assert error(response)["code"] == "NOT_FOUND"
    # Their delivery through my endpoint's path is not found either.
    response = api_a.post(f"{URL}/{endpoint_a.pk}/deliveries/{theirs.pk}/redeliver")
    assert response.status_code == 404
    assert WebhookEndpoint.objects.filter(pk=endpoint_b.pk).exists()
    assert WebhookDelivery.objects.filter(endpoint=endpoint_b).count() == 1
    assert [e["id"] for e in api_a.get(URL).json()["results"]] == [endpoint_a.pk]


def test_no_token_is_401_and_a_read_token_cannot_change_anything(client_with, endpoint_a):
    assert APIClient().get(URL).status_code == 401
    reader = client_with("read")
    assert reader.get(URL).status_code == 200
    for method, path, body in _calls(endpoint_a, 1):
        if method == "get":
            continue
        response = getattr(reader, method)(path, body, format="json")
        assert response.status_code == 403, (method, path)
        assert error(response)["code"] == "INSUFFICIENT_SCOPE"
    response = reader.post(URL, {"url": "https://hooks.example.com/x"}, format="json")
    assert response.status_code == 403


def test_an_idempotent_create_never_stores_nor_replays_the_secret(api_a):
    from apps.api.models import IdempotencyRecord

    body = {"url": "https://hooks.example.com/once", "event_types": ["rendition.failed"]}
    first = api_a.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY="hook-once")
    again = api_a.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY="hook-once")

    secret = first.json()["secret"]
    assert secret.startswith("whsec_")
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["secret"] is None
    assert secret not in str(IdempotencyRecord.objects.get(key="hook-once").response_body)


def test_a_test_event_goes_to_that_endpoint_only(workspace_a, client_with, endpoint_a):
    other = webhook_endpoint_create(workspace=workspace_a, url="https://hooks.example.com/o")[0]

    response = client_with("admin").post(f"{URL}/{endpoint_a.pk}/test")

    assert response.status_code == 202
    body = response.json()
    assert (body["event_type"], body["status"]) == ("webhook.test", "pending")
    delivery = WebhookDelivery.objects.get()
    assert (delivery.pk, delivery.endpoint_id) == (body["id"], endpoint_a.pk)
    assert delivery.event.data["endpoint"] == {"id": endpoint_a.pk, "url": endpoint_a.url}
    assert not WebhookDelivery.objects.filter(endpoint=other).exists()
    log = client_with("read").get(f"{URL}/{endpoint_a.pk}/deliveries").json()["results"]
    assert [row["id"] for row in log] == [body["id"]]


def test_a_test_event_needs_admin_an_active_endpoint_and_the_workspaces_own(
    client_with, endpoint_a, endpoint_b
):
    read_write = client_with("read", "write", "publish").post(f"{URL}/{endpoint_a.pk}/test")
    assert read_write.status_code == 403
    assert error(read_write)["code"] == "INSUFFICIENT_SCOPE"
    assert client_with("admin").post(f"{URL}/{endpoint_b.pk}/test").status_code == 404
    WebhookEndpoint.objects.filter(pk=endpoint_a.pk).update(is_active=False)
    switched_off = client_with("admin").post(f"{URL}/{endpoint_a.pk}/test")
    assert switched_off.status_code == 409
    assert error(switched_off)["code"] == "WEBHOOK_ENDPOINT_DISABLED"
    assert not WebhookDelivery.objects.exists()
