"""Delivering events to a real receiver on 127.0.0.1: signatures a reference verifier
accepts, retries with backoff and the same event id, the delivery log, redelivery, and
switching off an endpoint that keeps failing."""

import logging
from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone
from standardwebhooks import Webhook, WebhookVerificationError

from apps.accounts.models import WorkspaceMembership
from apps.common.errors import Conflict
from apps.jobs.models import Job
from apps.webhooks.constants import MAX_RESPONSE_KEPT_CHARS
from apps.webhooks.endpoints import (
    webhook_endpoint_create,
    webhook_endpoint_rotate_secret,
    webhook_endpoint_update,
)
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from apps.webhooks.outbox import webhook_emit, webhook_redeliver
from tests.factories import UserFactory, WorkspaceMembershipFactory
from tests.webhooks.conftest import Answer, make_due, run_deliveries

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("private_targets")]


@pytest.fixture
def endpoint(workspace_a, receiver):
    endpoint, secret = webhook_endpoint_create(workspace=workspace_a, url=receiver.url)
    endpoint.clear_secret = secret
    return endpoint


def emit(workspace, data=None):
    return webhook_emit(
        workspace=workspace, event="rendition.published", data=data or {"rendition": {"id": 7}}
    )


def test_a_delivery_is_signed_so_a_standard_webhooks_verifier_accepts_it(
    workspace_a, endpoint, receiver, worker
):
    event = emit(workspace_a)

    assert run_deliveries(worker) == ["done"]

    [request] = receiver.requests
    assert request.headers["webhook-id"] == event.event_id
    assert request.headers["content-type"] == "application/json"
    verified = Webhook(endpoint.clear_secret).verify(request.body, request.headers)
    assert verified == {
        "id": event.event_id,
        "type": "rendition.published",
        "timestamp": event.created_at.isoformat().replace("+00:00", "Z"),
        "data": {"rendition": {"id": 7}},
    }
    with pytest.raises(WebhookVerificationError):
        Webhook(endpoint.clear_secret).verify(request.body + b" ", request.headers)
    with pytest.raises(WebhookVerificationError):
        other_secret = webhook_endpoint_create(workspace=workspace_a, url=receiver.url)[1]
        Webhook(other_secret).verify(request.body, request.headers)


def test_the_delivery_log_keeps_the_response_code_latency_and_body(
    workspace_a, endpoint, receiver, worker
):
    receiver.answer(Answer(status=202, body=b"x" * 5000))
    emit(workspace_a)

    run_deliveries(worker)

    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "succeeded"
    assert delivery.attempts == 1
    assert delivery.response_status == 202
    assert delivery.latency_ms is not None and delivery.latency_ms < 2000
    assert delivery.response_body == "x" * MAX_RESPONSE_KEPT_CHARS
    assert delivery.error is None
    assert delivery.finished_at is not None
    endpoint.refresh_from_db()
    assert endpoint.last_success_at is not None
    assert endpoint.consecutive_failures == 0


def test_a_5xx_is_retried_with_backoff_then_succeeds_with_the_same_event_id(
    workspace_a, endpoint, receiver, worker
):
    receiver.answer(Answer(status=503, body=b"down"), Answer(status=500))
    event = emit(workspace_a)

    assert run_deliveries(worker) == ["pending"]
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "pending"
    assert delivery.attempts == 1
    assert delivery.response_status == 503
    assert delivery.error["kind"] == "receiver_unavailable"
    assert delivery.next_attempt_at > timezone.now()
    job = Job.objects.get(dedupe_key=delivery.dedupe_key)
    assert job.status == "pending"
    assert abs((job.run_at - delivery.next_attempt_at).total_seconds()) <= 1.5
    assert run_deliveries(worker) == []  # not due before its time

    make_due(delivery)
    assert run_deliveries(worker) == ["pending"]
    make_due(delivery)
    assert run_deliveries(worker) == ["done"]

    delivery.refresh_from_db()
    assert delivery.status == "succeeded"
    assert delivery.attempts == 3
    assert delivery.response_status == 200
    ids = [r.headers["webhook-id"] for r in receiver.requests]
    assert ids == [event.event_id] * 3
    bodies = {r.body for r in receiver.requests}
    assert len(bodies) == 1  # byte-identical payload on every retry
    for request in receiver.requests:
        Webhook(endpoint.clear_secret).verify(request.body, request.headers)


def test_a_429_is_retried_no_earlier_than_its_retry_after(workspace_a, endpoint, receiver, worker):
    receiver.answer(Answer(status=429, headers={"Retry-After": "120"}))
    emit(workspace_a)
    before = timezone.now()

    run_deliveries(worker)

    delivery = WebhookDelivery.objects.get()
    assert delivery.error["kind"] == "rate_limited"
    assert delivery.next_attempt_at >= before + timedelta(seconds=120)
    job = Job.objects.get(dedupe_key=delivery.dedupe_key)
    assert job.run_at >= before + timedelta(seconds=119)


@pytest.mark.parametrize("status", [400, 401, 404, 410, 301])
def test_a_refusal_fails_the_delivery_at_once(workspace_a, endpoint, receiver, worker, status):
    receiver.answer(Answer(status=status, headers={"Location": "https://elsewhere.example/"}))
    emit(workspace_a)

    assert run_deliveries(worker) == ["failed"]

    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "failed"
    assert delivery.response_status == status
    assert delivery.error["kind"] == "rejected"
    assert len(receiver.requests) == 1
    job = Job.objects.get(dedupe_key=delivery.dedupe_key)
    assert job.status == "failed"
    assert job.last_error["retryable"] is False


@pytest.mark.parametrize("status", [408, 502])
def test_408_and_5xx_are_retried(workspace_a, endpoint, receiver, worker, status):
    receiver.answer(Answer(status=status))
    emit(workspace_a)

    assert run_deliveries(worker) == ["pending"]


def test_a_receiver_that_does_not_answer_in_time_is_retried(
    workspace_a, endpoint, receiver, worker, settings
):
    settings.WEBHOOK_TIMEOUT_S = 0.3
    receiver.answer(Answer(delay_s=1.0))
    emit(workspace_a)

    assert run_deliveries(worker) == ["pending"]

    delivery = WebhookDelivery.objects.get()
    assert delivery.error["kind"] == "timeout"
    assert delivery.response_status is None


def test_a_refused_connection_is_retried(workspace_a, worker, receiver):
    endpoint, _ = webhook_endpoint_create(workspace=workspace_a, url=receiver.url)
    receiver.close()
    emit(workspace_a)

    assert run_deliveries(worker) == ["pending"]

    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    assert delivery.error["kind"] == "network"


def test_the_last_attempt_fails_the_delivery(workspace_a, endpoint, receiver, worker):
    receiver.answer(Answer(status=500), Answer(status=500))
    emit(workspace_a)
    delivery = WebhookDelivery.objects.get()
    Job.objects.filter(dedupe_key=delivery.dedupe_key).update(max_attempts=2)

    assert run_deliveries(worker) == ["pending"]
    make_due(delivery)
    assert run_deliveries(worker) == ["failed"]

    delivery.refresh_from_db()
    assert delivery.status == "failed"
    assert delivery.attempts == 2
    assert delivery.next_attempt_at is None


def test_redelivery_sends_the_same_event_id_again_as_a_new_delivery(
    workspace_a, endpoint, receiver, worker
):
    receiver.answer(Answer(status=404))
    event = emit(workspace_a)
    run_deliveries(worker)
    first = WebhookDelivery.objects.get()
    assert first.status == "failed"

    again = webhook_redeliver(delivery=first)
    assert run_deliveries(worker) == ["done"]

    again.refresh_from_db()
    assert again.status == "succeeded"
    assert again.redelivery_of == first
    assert again.event_id == first.event_id
    assert [r.headers["webhook-id"] for r in receiver.requests] == [event.event_id] * 2
    first.refresh_from_db()
    assert first.status == "failed"  # its own log stays as it was


def test_a_pending_delivery_cannot_be_redelivered(workspace_a, endpoint):
    emit(workspace_a)
    delivery = WebhookDelivery.objects.get()

    with pytest.raises(Conflict) as refused:
        webhook_redeliver(delivery=delivery)

    assert refused.value.code == "DELIVERY_PENDING"


def _fail_once(worker, receiver, workspace):
    receiver.answer(Answer(status=500))
    emit(workspace)
    delivery = WebhookDelivery.objects.order_by("-pk").first()
    Job.objects.filter(dedupe_key=delivery.dedupe_key).update(max_attempts=1)
    assert run_deliveries(worker) == ["failed"]


def test_an_endpoint_failing_long_enough_is_switched_off_and_admins_are_told(
    workspace_a, endpoint, receiver, worker, settings, caplog, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_DISABLE_AFTER_FAILURES = 3
    settings.WEBHOOK_DISABLE_AFTER_HOURS = 24
    ws_admin = UserFactory(email="dana@example.com")
    WorkspaceMembershipFactory(
        workspace=workspace_a, user=ws_admin, role=WorkspaceMembership.Role.ADMIN
    )
    for _ in range(3):
        _fail_once(worker, receiver, workspace_a)
    endpoint.refresh_from_db()
    assert endpoint.is_active  # three failures, but not for 24 hours yet
    assert endpoint.consecutive_failures == 3

    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        failing_since=timezone.now() - timedelta(hours=25)
    )
    with caplog.at_level(logging.WARNING), django_capture_on_commit_callbacks(execute=True):
        _fail_once(worker, receiver, workspace_a)

    endpoint.refresh_from_db()
    assert endpoint.is_active is False
    assert endpoint.disabled_at is not None
    assert "4 failed deliveries in a row" in endpoint.disabled_reason
    assert any("webhook endpoint disabled" in r.getMessage() for r in caplog.records)
    [notice] = mail.outbox
    assert endpoint.url in notice.subject
    assert sorted(notice.to) == ["alice@example.com", "dana@example.com"]
    assert endpoint.disabled_reason in notice.body

    # Its events are still recorded, held (no job, nothing sent), not redeliverable yet.
    sent = len(receiver.requests)
    event = emit(workspace_a)
    assert event is not None
    held = WebhookDelivery.objects.get(event=event)
    assert held.status == "held"
    assert not Job.objects.filter(dedupe_key=held.dedupe_key).exists()
    assert run_deliveries(worker) == []
    with pytest.raises(Conflict):
        webhook_redeliver(delivery=WebhookDelivery.objects.filter(endpoint=endpoint).first())
    assert len(receiver.requests) == sent


def test_a_success_ends_the_failure_streak(workspace_a, endpoint, receiver, worker, settings):
    settings.WEBHOOK_DISABLE_AFTER_FAILURES = 2
    settings.WEBHOOK_DISABLE_AFTER_HOURS = 0
    _fail_once(worker, receiver, workspace_a)
    emit(workspace_a)
    run_deliveries(worker)

    endpoint.refresh_from_db()
    assert endpoint.consecutive_failures == 0
    assert endpoint.failing_since is None
    _fail_once(worker, receiver, workspace_a)
    endpoint.refresh_from_db()
    assert endpoint.is_active


def test_a_delivery_queued_before_the_endpoint_was_switched_off_is_held_then_sent_when_on(
    workspace_a, endpoint, receiver, worker
):
    event = emit(workspace_a)
    webhook_endpoint_update(endpoint=endpoint, is_active=False)

    assert run_deliveries(worker) == ["done"]  # the job ends; the delivery is kept

    delivery = WebhookDelivery.objects.get()
    assert delivery.status == "held"
    assert delivery.error["kind"] == "endpoint_disabled"
    assert delivery.attempts == 0
    assert receiver.requests == []

    webhook_endpoint_update(endpoint=endpoint, is_active=True)
    assert run_deliveries(worker) == ["done"]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("succeeded", 1)
    assert [r.headers["webhook-id"] for r in receiver.requests] == [event.event_id]


def test_switching_an_endpoint_on_again_starts_a_new_streak(workspace_a, endpoint):
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        is_active=False,
        disabled_at=timezone.now(),
        disabled_reason="Disabled after 20 failed deliveries",
        consecutive_failures=20,
        failing_since=timezone.now() - timedelta(days=2),
    )

    webhook_endpoint_update(endpoint=endpoint, is_active=True)

    endpoint.refresh_from_db()
    assert endpoint.is_active
    assert endpoint.disabled_at is None
    assert endpoint.disabled_reason == ""
    assert endpoint.consecutive_failures == 0
    assert endpoint.failing_since is None


def test_a_delivery_whose_lease_was_taken_over_is_not_sent(workspace_a, endpoint, receiver, worker):
    """A worker that lost the job (paused past its lease, another worker took it over)
    must not send: the one holding it now sends, and the receiver would get it twice."""
    import uuid

    emit(workspace_a)
    [job] = worker.claim_batch()
    Job.objects.filter(pk=job.pk).update(lease=uuid.uuid4())  # another worker's claim

    assert worker.run_one(job) == "lost"
    assert receiver.requests == []


def test_after_a_rotation_both_secrets_verify_until_the_overlap_ends(
    workspace_a, endpoint, receiver, worker, settings
):
    """A receiver that still holds the old secret (and answers 401 to what it cannot
    verify) keeps accepting deliveries for the overlap; one holding the new secret accepts
    them at once. After the overlap only the new one verifies."""
    settings.WEBHOOK_SECRET_OVERLAP_HOURS = 24
    old = endpoint.clear_secret
    emit(workspace_a)  # in flight when the secret changes
    new = webhook_endpoint_rotate_secret(endpoint=endpoint)

    assert run_deliveries(worker) == ["done"]

    [during] = receiver.requests
    assert len(during.headers["webhook-signature"].split(" ")) == 2
    for secret in (old, new):
        assert Webhook(secret).verify(during.body, during.headers)["id"]

    emit(workspace_a)
    with time_machine.travel(timezone.now() + timedelta(hours=24, minutes=1)):
        assert run_deliveries(worker) == ["done"]
        after = receiver.requests[1]
        assert Webhook(new).verify(after.body, after.headers)["id"]
        with pytest.raises(WebhookVerificationError):
            Webhook(old).verify(after.body, after.headers)
    assert len(after.headers["webhook-signature"].split(" ")) == 1


def test_without_an_overlap_a_rotation_signs_with_the_new_secret_only(
    workspace_a, endpoint, receiver, worker, settings
):
    settings.WEBHOOK_SECRET_OVERLAP_HOURS = 0
    old = endpoint.clear_secret
    new = webhook_endpoint_rotate_secret(endpoint=endpoint)
    emit(workspace_a)

    assert run_deliveries(worker) == ["done"]

    [request] = receiver.requests
    assert Webhook(new).verify(request.body, request.headers)["id"]
    with pytest.raises(WebhookVerificationError):
        Webhook(old).verify(request.body, request.headers)
