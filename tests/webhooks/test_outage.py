"""A receiver's long outage: deliveries keep trying for at least three days, and an endpoint
switched off (by a person or after sustained failure) keeps its events, sending them when it
is switched on again (API and web)."""

import random
from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.registry import get_job_type
from apps.webhooks.constants import BACKOFF, DELIVER_JOB, MAX_ATTEMPTS, RETRY_FOR
from apps.webhooks.delivery import retry_delay_s
from apps.webhooks.endpoints import webhook_endpoint_create
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from apps.webhooks.outbox import webhook_emit
from tests.webhooks.conftest import Answer, make_due, run_deliveries

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("private_targets")]


@pytest.fixture
def endpoint(workspace_a, receiver):
    return webhook_endpoint_create(workspace=workspace_a, url=receiver.url)[0]


def emit(workspace, n=1):
    return webhook_emit(workspace=workspace, event="rendition.published", data={"n": n})


def test_the_retry_schedule_spans_three_days_before_its_attempts_run_out():
    assert timedelta(days=3) <= RETRY_FOR
    assert get_job_type(DELIVER_JOB).max_attempts == MAX_ATTEMPTS
    # Even if every wait were its shortest, the retries would last RETRY_FOR.
    shortest = sum(BACKOFF.ceiling(n) / 2 for n in range(1, MAX_ATTEMPTS))
    assert shortest >= RETRY_FOR.total_seconds()
    random.seed(7)
    for attempt in range(1, MAX_ATTEMPTS):
        ceiling = BACKOFF.ceiling(attempt)
        for _ in range(20):
            assert ceiling / 2 <= retry_delay_s(attempt) <= ceiling
    assert retry_delay_s(1, floor_s=3600) == 3600  # a Retry-After is a floor


def test_a_failing_delivery_is_retried_until_three_days_have_passed_then_failed(
    workspace_a, endpoint, receiver, worker
):
    receiver.answer(*[Answer(status=503)] * 3)
    started = timezone.now()
    emit(workspace_a)
    delivery = WebhookDelivery.objects.get()
    assert delivery.deliver_until - started >= RETRY_FOR - timedelta(seconds=5)

    assert run_deliveries(worker) == ["pending"]
    # Many attempts in (as after two and a half days of them): still inside the window.
    Job.objects.filter(dedupe_key=delivery.dedupe_key).update(attempts=30)
    make_due(delivery)
    assert run_deliveries(worker) == ["pending"]
    delivery.refresh_from_db()
    assert delivery.status == "pending"

    # The three days are over: the next failure gives it up.
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        deliver_until=timezone.now() - timedelta(seconds=1)
    )
    make_due(delivery)
    assert run_deliveries(worker) == ["failed"]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("failed", 3)


def test_a_delivery_from_before_the_window_field_counts_from_its_creation(
    workspace_a, endpoint, receiver, worker
):
    receiver.answer(Answer(status=500), Answer(status=500))
    emit(workspace_a)
    delivery = WebhookDelivery.objects.get()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        deliver_until=None, created_at=timezone.now() - timedelta(days=2)
    )
    assert run_deliveries(worker) == ["pending"]  # two days old: retried
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        created_at=timezone.now() - RETRY_FOR - timedelta(minutes=1)
    )
    make_due(delivery)
    assert run_deliveries(worker) == ["failed"]


def test_an_endpoint_switched_off_through_the_api_keeps_its_events_and_sends_them_on(
    workspace_a, endpoint, receiver, worker, api_a
):
    url = f"/api/v1/webhooks/{endpoint.pk}"
    assert api_a.patch(url, {"is_active": False}, format="json").status_code == 200
    events = [emit(workspace_a, n) for n in range(3)]

    assert all(event is not None for event in events)  # recorded, not dropped
    held = api_a.get(f"{url}/deliveries", {"status": "held"}).json()["results"]
    assert len(held) == 3
    assert not Job.objects.filter(type=DELIVER_JOB).exists()
    assert run_deliveries(worker) == []
    assert receiver.requests == []

    assert api_a.patch(url, {"is_active": True}, format="json").status_code == 200
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"pending"}
    assert sorted(run_deliveries(worker)) == ["done"] * 3

    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"succeeded"}
    sent = sorted(r.headers["webhook-id"] for r in receiver.requests)
    assert sent == sorted(e.event_id for e in events)
    assert WebhookDelivery.objects.filter(deliver_until__gt=timezone.now()).count() == 3


def test_an_auto_disabled_endpoint_keeps_its_off_periods_events_and_the_web_switch_sends_them(
    workspace_a, endpoint, receiver, worker, settings, alice
):
    settings.WEBHOOK_DISABLE_AFTER_FAILURES = 1
    settings.WEBHOOK_DISABLE_AFTER_HOURS = 0
    receiver.answer(Answer(status=500))
    first = emit(workspace_a, 1)
    assert run_deliveries(worker) == ["pending"]  # failed once, retry planned...
    endpoint.refresh_from_db()
    assert endpoint.is_active is False  # ...and the endpoint switched itself off

    second = emit(workspace_a, 2)  # during the off period: recorded, held
    assert WebhookDelivery.objects.get(event=second).status == "held"
    retry = WebhookDelivery.objects.get(event=first)
    make_due(retry)
    assert run_deliveries(worker) == ["done"]  # its retry is held too, not failed
    retry.refresh_from_db()
    assert retry.status == "held"
    assert len(receiver.requests) == 1

    client = Client()
    client.force_login(alice)
    page = client.get(f"/w/{workspace_a.slug}/webhooks/{endpoint.pk}/")
    assert b"Switch on and send 2 kept events" in page.content
    response = client.post(f"/w/{workspace_a.slug}/webhooks/{endpoint.pk}/toggle/")
    assert response.status_code == 302
    notes = [str(m) for m in get_messages(response.wsgi_request)]
    assert any("Sending the 2 events it kept" in note for note in notes)
    endpoint.refresh_from_db()
    assert endpoint.is_active

    assert sorted(run_deliveries(worker)) == ["done", "done"]
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"succeeded"}
    ids = [r.headers["webhook-id"] for r in receiver.requests]
    assert ids == [first.event_id, first.event_id, second.event_id]  # oldest first


def test_a_held_delivery_waits_for_the_switch_not_a_redelivery(workspace_a, endpoint, api_a):
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(is_active=False)
    emit(workspace_a)
    delivery = WebhookDelivery.objects.get()
    response = api_a.post(f"/api/v1/webhooks/{endpoint.pk}/deliveries/{delivery.pk}/redeliver")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "DELIVERY_PENDING"
