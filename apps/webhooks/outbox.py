"""The outbox: recording that an event happened and queueing one delivery (and its job)
per subscribed endpoint, redelivering a finished delivery, and pruning old events.

``webhook_emit`` runs inside the caller's transaction (a publish outcome, a status change)
and only adds rows: the event and, per subscribed endpoint, a delivery, with its job when
the endpoint is on (held, without one, when it is switched off: switching it on again sends
what was held, ``webhook_deliveries_release``). ``emit_lazy_many`` adds the same rows for
many events of one workspace (a bulk create) with one statement per table.
Everything that can go wrong with a receiver happens later, in that job (see delivery.py),
so a webhook never changes or delays publish state.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Hashable, Sequence
from datetime import timedelta
from typing import TypeVar

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import Workspace
from apps.common.errors import Conflict
from apps.jobs.services import JobSpec, job_enqueue, job_enqueue_many
from apps.webhooks.constants import DELIVER_JOB, EVENT_TYPES, RETRY_FOR, WEBHOOK_TEST
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

logger = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)


def new_event_id() -> str:
    return "evt_" + uuid.uuid4().hex


def webhook_emit(*, workspace: Workspace, event: str, data: dict) -> WebhookEvent | None:
    """Record that `event` happened in the workspace and queue its delivery to every
    endpoint subscribed to it (held for one switched off), in the caller's transaction
    (nothing is sent unless it commits). Returns the event, or None when no endpoint wants
    it (nothing is stored).

    Never raises for a database or data problem of its own: it runs in a savepoint and
    logs, so publish state is never lost to a webhook.
    """
    return emit_lazy(workspace_id=workspace.pk, event=event, build=lambda: data)


def emit_lazy(*, workspace_id: int, event: str, build: Callable[[], dict]) -> WebhookEvent | None:
    """``webhook_emit`` that builds the data only when some endpoint is subscribed (the
    emission points call it on every publish outcome)."""
    if event not in EVENT_TYPES:
        raise ValueError(f"Unknown webhook event type {event!r}.")
    try:
        with transaction.atomic():
            endpoints = list(
                WebhookEndpoint.objects.filter(workspace_id=workspace_id)
                .subscribed_to(event)
                .order_by("pk")
            )
            if not endpoints:
                return None
            workspace = Workspace.objects.select_related("organization").get(pk=workspace_id)
            record = WebhookEvent.objects.create(
                workspace=workspace, event_id=new_event_id(), type=event, data=build()
            )
            for endpoint in endpoints:
                delivery = WebhookDelivery.objects.create(**_new_delivery(endpoint, record))
                if endpoint.is_active:
                    _enqueue(delivery, workspace)
            return record
    except Exception:
        logger.exception(
            "Webhook event %s could not be recorded; it is not delivered.",
            event,
            extra={"workspace_id": workspace_id, "event": event},
        )
        return None


def emit_lazy_many(
    *,
    workspace_id: int,
    events: Sequence[tuple[str, K]],
    build: Callable[[list[K]], dict[K, dict]],
) -> list[WebhookEvent]:
    """``emit_lazy`` for many events of one workspace: the same event, delivery and job
    rows, written with one statement per table. `events` pairs each type with a key;
    `build(keys)` is called once, with the keys of the events some endpoint wants, and
    returns their data by key. Returns the stored events, in order.

    Unlike ``emit_lazy`` it raises: the caller runs it in a savepoint and falls back to
    one ``emit_lazy`` per event (see ``apps.common.events.emit_many``).
    """
    unknown = {event for event, _key in events}.difference(EVENT_TYPES)
    if unknown:
        raise ValueError(f"Unknown webhook event type(s) {sorted(unknown)!r}.")
    endpoints = list(WebhookEndpoint.objects.filter(workspace_id=workspace_id).order_by("pk"))
    # The same endpoints, in the same order, as ``subscribed_to(event)`` finds per event.
    wanted = [
        (event, key, targets)
        for event, key in events
        if (targets := [e for e in endpoints if event in e.event_types])
    ]
    if not wanted:
        return []
    data = build([key for _event, key, _targets in wanted])
    records = WebhookEvent.objects.bulk_create(
        WebhookEvent(workspace_id=workspace_id, event_id=new_event_id(), type=event, data=data[key])
        for event, key, _targets in wanted
    )
    deliveries = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(**_new_delivery(endpoint, record))
        for record, (_event, _key, targets) in zip(records, wanted, strict=True)
        for endpoint in targets
    )
    organization_id = Workspace.objects.values_list("organization_id", flat=True).get(
        pk=workspace_id
    )
    job_enqueue_many(
        JobSpec(
            type=DELIVER_JOB,
            payload={"delivery_id": delivery.pk},
            organization_id=organization_id,
            workspace_id=workspace_id,
            dedupe_key=delivery.dedupe_key,
        )
        for delivery in deliveries
        if delivery.status == WebhookDelivery.Status.PENDING
    )
    return records


def _new_delivery(endpoint: WebhookEndpoint, event: WebhookEvent) -> dict:
    """A new delivery's fields: pending for an endpoint that is on, held for one that is
    switched off (it keeps its events)."""
    if endpoint.is_active:
        return {
            "workspace_id": event.workspace_id,
            "endpoint": endpoint,
            "event": event,
            "deliver_until": timezone.now() + RETRY_FOR,
        }
    return {
        "workspace_id": event.workspace_id,
        "endpoint": endpoint,
        "event": event,
        "status": WebhookDelivery.Status.HELD,
        "error": {
            "kind": "endpoint_disabled",
            "message": "Held while the endpoint is switched off; sent when it is switched on.",
        },
    }


def webhook_deliveries_release(endpoint: WebhookEndpoint) -> int:
    """Send what an endpoint kept while it was switched off: its held deliveries become
    pending, oldest first, each retried for RETRY_FOR from now. Runs in the transaction
    that switches the endpoint on, under its row lock. Returns how many were released."""
    held = WebhookDelivery.objects.filter(endpoint=endpoint, status=WebhookDelivery.Status.HELD)
    ids = list(held.order_by("pk").values_list("pk", flat=True))
    if not ids:
        return 0
    now = timezone.now()
    WebhookDelivery.objects.filter(pk__in=ids).update(
        status=WebhookDelivery.Status.PENDING,
        error=None,
        deliver_until=now + RETRY_FOR,
        next_attempt_at=now,
        updated_at=now,
    )
    organization_id = Workspace.objects.values_list("organization_id", flat=True).get(
        pk=endpoint.workspace_id
    )
    job_enqueue_many(
        JobSpec(
            type=DELIVER_JOB,
            payload={"delivery_id": pk},
            organization_id=organization_id,
            workspace_id=endpoint.workspace_id,
            dedupe_key=WebhookDelivery(pk=pk).dedupe_key,
        )
        for pk in ids
    )
    return len(ids)


def _enqueue(delivery: WebhookDelivery, workspace: Workspace) -> None:
    job_enqueue(
        type=DELIVER_JOB,
        payload={"delivery_id": delivery.pk},
        organization=workspace.organization,
        workspace=workspace,
        dedupe_key=delivery.dedupe_key,
    )


@transaction.atomic
def webhook_redeliver(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a finished delivery's event to its endpoint again, as a new delivery with the
    same event id (receivers that already had it drop it). Errors: Conflict
    DELIVERY_PENDING (still being delivered, or held to be sent when the endpoint is
    switched on), WEBHOOK_ENDPOINT_DISABLED."""
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=delivery.endpoint_id)
    current = WebhookDelivery.objects.select_related("event").get(pk=delivery.pk)
    if current.status in (WebhookDelivery.Status.PENDING, WebhookDelivery.Status.HELD):
        held = current.status == WebhookDelivery.Status.HELD
        raise Conflict(
            "This delivery is held: it is sent when the endpoint is switched on."
            if held
            else "This delivery is still being attempted.",
            code="DELIVERY_PENDING",
            details={"delivery": current.pk},
        )
    if not endpoint.is_active:
        raise Conflict(
            "The endpoint is switched off; switch it on before redelivering.",
            code="WEBHOOK_ENDPOINT_DISABLED",
            details={"endpoint": endpoint.pk, "disabled_reason": endpoint.disabled_reason},
        )
    again = WebhookDelivery.objects.create(
        **_new_delivery(endpoint, current.event), redelivery_of=current
    )
    _enqueue(again, Workspace.objects.select_related("organization").get(pk=current.workspace_id))
    return again


@transaction.atomic
def webhook_send_test(*, endpoint: WebhookEndpoint) -> WebhookDelivery:
    """Send a ``webhook.test`` event to this endpoint only, through the normal delivery
    path (signed, retried, recorded in its delivery log), so an admin can try a receiver.
    Errors: Conflict WEBHOOK_ENDPOINT_DISABLED (a switched-off endpoint sends nothing)."""
    locked = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    if not locked.is_active:
        raise Conflict(
            "The endpoint is switched off; switch it on before sending a test event.",
            code="WEBHOOK_ENDPOINT_DISABLED",
            details={"endpoint": locked.pk, "disabled_reason": locked.disabled_reason},
        )
    workspace = Workspace.objects.select_related("organization").get(pk=locked.workspace_id)
    event = WebhookEvent.objects.create(
        workspace=workspace,
        event_id=new_event_id(),
        type=WEBHOOK_TEST,
        data={
            "endpoint": {"id": locked.pk, "url": locked.url},
            "message": "A test event, sent on request (the endpoint's page, the API or MCP).",
        },
    )
    delivery = WebhookDelivery.objects.create(**_new_delivery(locked, event))
    _enqueue(delivery, workspace)
    return delivery


def webhooks_prune(*, older_than_days: float | None = None, chunk: int = 2000) -> int:
    """Delete events older than WEBHOOK_RETENTION_DAYS whose deliveries are all finished or
    held (their delivery log goes with them), in short chunks: an endpoint switched off
    keeps its events for that long. Returns how many events went."""
    days = settings.WEBHOOK_RETENTION_DAYS if older_than_days is None else older_than_days
    cutoff = timezone.now() - timedelta(days=days)
    old = WebhookEvent.objects.filter(created_at__lt=cutoff).exclude(
        deliveries__status=WebhookDelivery.Status.PENDING
    )
    deleted = 0
    while True:
        ids = list(old.values_list("pk", flat=True)[:chunk])
        if not ids:
            return deleted
        WebhookEvent.objects.filter(pk__in=ids).delete()
        deleted += len(ids)
