"""Managing endpoints: the secret is shown once and kept encrypted, bound to its row;
subscriptions are checked; deleting an endpoint stops what it had queued."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.crypto import CredentialsError
from apps.common.errors import Conflict, ValidationFailed
from apps.jobs.models import Job
from apps.webhooks import endpoints, outbox
from apps.webhooks.constants import EVENT_TYPES
from apps.webhooks.endpoints import (
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_previous_secret_until,
    webhook_endpoint_rotate_secret,
    webhook_endpoint_secret,
    webhook_endpoint_signing_secrets,
    webhook_endpoint_update,
)
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from apps.webhooks.outbox import webhook_emit

pytestmark = pytest.mark.django_db

URL = "https://hooks.example.com/in"


@pytest.fixture(autouse=True)
def _public_dns(fake_dns):
    fake_dns({"hooks.example.com": "93.184.215.14", "new.example.com": "93.184.215.15"})


def test_the_secret_is_returned_once_and_stored_encrypted(workspace_a, alice):
    endpoint, secret = webhook_endpoint_create(
        workspace=workspace_a, url=URL, description=" CRM ", created_by=alice
    )

    endpoint = WebhookEndpoint.objects.get(pk=endpoint.pk)
    assert endpoint.description == "CRM"
    assert endpoint.created_by == alice
    assert endpoint.event_types == list(EVENT_TYPES)  # all by default
    assert secret.encode() not in bytes(endpoint.secret_ciphertext)
    assert secret.split("_", 1)[1].encode() not in bytes(endpoint.secret_ciphertext)
    assert webhook_endpoint_secret(endpoint) == secret


def test_a_secret_copied_to_another_row_does_not_decrypt(workspace_a):
    first, _ = webhook_endpoint_create(workspace=workspace_a, url=URL)
    second, _ = webhook_endpoint_create(workspace=workspace_a, url=URL)
    WebhookEndpoint.objects.filter(pk=second.pk).update(
        secret_ciphertext=first.secret_ciphertext, secret_key_id=first.secret_key_id
    )

    with pytest.raises(CredentialsError):
        webhook_endpoint_secret(WebhookEndpoint.objects.get(pk=second.pk))


def test_rotating_the_secret_replaces_it(workspace_a):
    endpoint, old = webhook_endpoint_create(workspace=workspace_a, url=URL)

    new = webhook_endpoint_rotate_secret(endpoint=endpoint)

    assert new != old
    assert webhook_endpoint_secret(WebhookEndpoint.objects.get(pk=endpoint.pk)) == new


def test_a_rotated_secret_signs_beside_the_new_one_for_the_overlap(workspace_a, settings):
    settings.WEBHOOK_SECRET_OVERLAP_HOURS = 24
    endpoint, first = webhook_endpoint_create(workspace=workspace_a, url=URL)
    assert webhook_endpoint_previous_secret_until(endpoint) is None

    second = webhook_endpoint_rotate_secret(endpoint=endpoint)
    third = webhook_endpoint_rotate_secret(endpoint=endpoint)

    endpoint.refresh_from_db()
    until = webhook_endpoint_previous_secret_until(endpoint)
    assert timedelta(hours=23) < until - timezone.now() <= timedelta(hours=24)
    # Only the secret the last rotation replaced is kept.
    signing_at = webhook_endpoint_signing_secrets
    assert signing_at(endpoint, at=until - timedelta(seconds=1)) == [third, second]
    assert signing_at(endpoint, at=until) == [third]
    assert first not in signing_at(endpoint, at=timezone.now())


def test_a_rotation_without_overlap_keeps_no_old_secret(workspace_a, settings):
    settings.WEBHOOK_SECRET_OVERLAP_HOURS = 0
    endpoint, _ = webhook_endpoint_create(workspace=workspace_a, url=URL)

    new = webhook_endpoint_rotate_secret(endpoint=endpoint)

    endpoint.refresh_from_db()
    assert webhook_endpoint_previous_secret_until(endpoint) is None
    assert webhook_endpoint_signing_secrets(endpoint, at=timezone.now()) == [new]


def test_re_encryption_keeps_the_overlapping_secret(workspace_a, settings):
    endpoint, old = webhook_endpoint_create(workspace=workspace_a, url=URL)
    new = webhook_endpoint_rotate_secret(endpoint=endpoint)
    settings.ENCRYPTION_KEYS = ["k9:" + "A" * 43, *settings.ENCRYPTION_KEYS]

    assert endpoints.webhook_secrets_rotate_keys() == 1

    endpoint.refresh_from_db()
    assert endpoint.secret_key_id == "k9"
    assert webhook_endpoint_signing_secrets(endpoint, at=timezone.now()) == [new, old]


def test_secrets_under_an_older_key_are_re_encrypted(workspace_a, settings):
    endpoint, secret = webhook_endpoint_create(workspace=workspace_a, url=URL)
    settings.ENCRYPTION_KEYS = ["k9:" + "A" * 43, *settings.ENCRYPTION_KEYS]

    assert endpoints.webhook_secrets_rotate_keys() == 1

    endpoint.refresh_from_db()
    assert endpoint.secret_key_id == "k9"
    assert webhook_endpoint_secret(endpoint) == secret


@pytest.mark.parametrize(
    ("event_types", "code"),
    [
        ([], "VALIDATION_ERROR"),
        (["rendition.exploded"], "UNKNOWN_EVENT_TYPE"),
        ("all", "VALIDATION_ERROR"),
    ],
)
def test_event_types_are_checked(workspace_a, event_types, code):
    with pytest.raises(ValidationFailed) as refused:
        webhook_endpoint_create(workspace=workspace_a, url=URL, event_types=event_types)

    assert refused.value.code == code
    assert "event_types" in refused.value.details


def test_subscriptions_keep_catalogue_order_without_duplicates(workspace_a):
    endpoint, _ = webhook_endpoint_create(
        workspace=workspace_a,
        url=URL,
        event_types=["rendition.failed", "publication.scheduled", "rendition.failed"],
    )

    assert endpoint.event_types == ["publication.scheduled", "rendition.failed"]


def test_a_workspace_has_a_bounded_number_of_endpoints(workspace_a, monkeypatch):
    monkeypatch.setattr(endpoints, "MAX_ENDPOINTS_PER_WORKSPACE", 2)
    webhook_endpoint_create(workspace=workspace_a, url=URL)
    webhook_endpoint_create(workspace=workspace_a, url=URL)

    with pytest.raises(Conflict) as refused:
        webhook_endpoint_create(workspace=workspace_a, url=URL)

    assert refused.value.code == "WEBHOOK_ENDPOINT_LIMIT"


def test_updating_the_url_checks_it_again(workspace_a, fake_dns):
    endpoint, _ = webhook_endpoint_create(workspace=workspace_a, url=URL)

    updated = webhook_endpoint_update(endpoint=endpoint, url="https://new.example.com/x")
    assert updated.url == "https://new.example.com/x"

    fake_dns({"new.example.com": "192.168.0.10"})
    with pytest.raises(ValidationFailed) as refused:
        webhook_endpoint_update(endpoint=endpoint, url="https://new.example.com/y")
    assert refused.value.code == "WEBHOOK_URL_FORBIDDEN"
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).url == "https://new.example.com/x"


def test_switching_off_by_hand_records_it(workspace_a):
    endpoint, _ = webhook_endpoint_create(workspace=workspace_a, url=URL)

    updated = webhook_endpoint_update(endpoint=endpoint, is_active=False)

    assert updated.is_active is False
    assert updated.disabled_at is not None
    assert updated.disabled_reason == "Switched off by a person."


def test_deleting_an_endpoint_cancels_its_queued_deliveries(workspace_a):
    endpoint, _ = webhook_endpoint_create(workspace=workspace_a, url=URL)
    webhook_emit(workspace=workspace_a, event="rendition.failed", data={})
    job = Job.objects.get(type="webhooks.deliver")

    webhook_endpoint_delete(endpoint=endpoint)

    assert not WebhookEndpoint.objects.exists()
    job.refresh_from_db()
    assert job.status == "cancelled"


def test_old_finished_events_are_pruned_with_their_log(workspace_a):
    webhook_endpoint_create(workspace=workspace_a, url=URL)
    old = webhook_emit(workspace=workspace_a, event="rendition.failed", data={})
    still_pending = webhook_emit(workspace=workspace_a, event="rendition.failed", data={})
    recent = webhook_emit(workspace=workspace_a, event="rendition.failed", data={})
    WebhookDelivery.objects.filter(event=old).update(status="succeeded")
    WebhookEvent.objects.filter(pk__in=[old.pk, still_pending.pk]).update(
        created_at=timezone.now() - timedelta(days=31)
    )

    assert outbox.webhooks_prune(older_than_days=30) == 1

    assert set(WebhookEvent.objects.values_list("pk", flat=True)) == {still_pending.pk, recent.pk}
    assert not WebhookDelivery.objects.filter(event_id=old.pk).exists()
