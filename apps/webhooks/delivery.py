"""Delivering one event to one endpoint: the signed attempt, how its answer is classified,
the retry schedule, and the endpoint's failure streak.

Delivery is at least once: a 2xx settles it; network errors, timeouts, 408, 429 and 5xx are
retried with backoff (a Retry-After is the floor) for at least RETRY_FOR (three days), every
attempt signed anew with the same event id; other answers fail it at once. An endpoint whose
attempts keep failing for long (WEBHOOK_DISABLE_AFTER_FAILURES in a row, over at least
WEBHOOK_DISABLE_AFTER_HOURS) is disabled, and the workspace's admins are told (see
notices.py). A delivery whose endpoint is switched off is held, not failed: switching the
endpoint on again sends it (see endpoints.py).
"""

from __future__ import annotations

import json
import logging
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import TypedDict

import httpx
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from apps.accounts import crypto
from apps.common.db_clock import estimated_db_now
from apps.jobs.errors import LeaseLost
from apps.jobs.models import Job
from apps.jobs.services import holding_lease
from apps.webhooks import network, notices, signing
from apps.webhooks.constants import (
    BACKOFF,
    MAX_RESPONSE_KEPT_CHARS,
    MAX_RETRY_AFTER_S,
    RETRY_FOR,
)
from apps.webhooks.endpoints import webhook_endpoint_signing_secrets
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

logger = logging.getLogger(__name__)

# Error kinds of a failed attempt. The first four are retried.
NETWORK = "network"
TIMEOUT = "timeout"
RECEIVER_UNAVAILABLE = "receiver_unavailable"  # 5xx, 408
RATE_LIMITED = "rate_limited"  # 429
REJECTED = "rejected"  # another 4xx, a 3xx (redirects are not followed), a 1xx
FORBIDDEN_TARGET = "forbidden_target"
ENDPOINT_DISABLED = "endpoint_disabled"
SECRET_UNREADABLE = "secret_unreadable"
RETRY_KINDS = frozenset({NETWORK, TIMEOUT, RECEIVER_UNAVAILABLE, RATE_LIMITED})


def event_body(event: WebhookEvent) -> bytes:
    """The JSON body of every attempt of the event: the same bytes each time."""
    created = event.created_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
    payload = {"id": event.event_id, "type": event.type, "timestamp": created, "data": event.data}
    return json.dumps(payload, cls=DjangoJSONEncoder, separators=(",", ":")).encode()


class _Seen(TypedDict):
    """What an attempt that got a response saw of it (AttemptResult's response fields)."""

    response_status: int
    response_body: str
    latency_ms: int


@dataclass(frozen=True)
class AttemptResult:
    """What one attempt got: a response, or an error kind with a message."""

    ok: bool
    kind: str = ""
    message: str = ""
    retryable: bool = False
    retry_after_s: float = 0.0
    response_status: int | None = None
    response_body: str = ""
    latency_ms: int | None = None


@dataclass(frozen=True)
class AttemptOutcome:
    """What the delivery job should become: done, retried in `retry_in_s`, or failed."""

    status: str  # "succeeded" | "retry" | "failed" | "held" | "gone"
    kind: str = ""
    message: str = ""
    retry_in_s: float | None = None


def retry_delay_s(attempt: int, *, floor_s: float = 0.0) -> float:
    """The wait after the `attempt`-th failed attempt: between half and all of the
    backoff's ceiling (never less than a Retry-After), so retries keep their pace."""
    ceiling = BACKOFF.ceiling(attempt)
    return max(random.uniform(ceiling / 2, ceiling), floor_s)  # noqa: S311 - jitter


def deliver_until(delivery: WebhookDelivery) -> datetime:
    """When a failing delivery is given up (rows from before the field: from creation)."""
    return delivery.deliver_until or delivery.created_at + RETRY_FOR


def _retry_after_s(response: network.Response) -> float:
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return 0.0
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            seconds = (parsedate_to_datetime(value) - timezone.now()).total_seconds()
        except (TypeError, ValueError, OverflowError):
            return 0.0
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)


def classify(response: network.Response) -> AttemptResult:
    """A 2xx succeeds; 408, 429 and 5xx are retried; anything else is a refusal."""
    code = response.status_code
    common: _Seen = {
        "response_status": code,
        "response_body": response.body.decode("utf-8", "replace")[:MAX_RESPONSE_KEPT_CHARS],
        "latency_ms": response.latency_ms,
    }
    if 200 <= code < 300:
        return AttemptResult(ok=True, **common)
    if code == 429:
        kind = RATE_LIMITED
    elif code == 408 or code >= 500:
        kind = RECEIVER_UNAVAILABLE
    else:
        reason = "redirects are not followed" if 300 <= code < 400 else "refused"
        return AttemptResult(
            ok=False, kind=REJECTED, message=f"The receiver answered {code}: {reason}.", **common
        )
    return AttemptResult(
        ok=False,
        kind=kind,
        message=f"The receiver answered {code}.",
        retryable=True,
        retry_after_s=_retry_after_s(response),
        **common,
    )


def _attempt(endpoint: WebhookEndpoint, event: WebhookEvent) -> AttemptResult:
    try:
        secrets = webhook_endpoint_signing_secrets(endpoint, at=estimated_db_now())
    except crypto.CredentialsError as exc:
        return AttemptResult(ok=False, kind=SECRET_UNREADABLE, message=str(exc))
    body = event_body(event)
    headers = signing.headers(
        secrets=secrets, message_id=event.event_id, timestamp=int(time.time()), body=body
    )
    started = time.monotonic()
    try:
        response = network.post(endpoint.url, body=body, headers=headers)
    except network.ForbiddenTarget as exc:
        return AttemptResult(ok=False, kind=FORBIDDEN_TARGET, message=exc.message)
    except httpx.TimeoutException as exc:
        return AttemptResult(
            ok=False,
            kind=TIMEOUT,
            message=f"No answer within {settings.WEBHOOK_TIMEOUT_S:g}s ({type(exc).__name__}).",
            retryable=True,
            latency_ms=int((time.monotonic() - started) * 1000),
        )
    except httpx.HTTPError as exc:
        return AttemptResult(
            ok=False,
            kind=NETWORK,
            message=f"{type(exc).__name__}: {exc}"[:500],
            retryable=True,
            latency_ms=int((time.monotonic() - started) * 1000),
        )
    return classify(response)


def webhook_delivery_attempt(*, job: Job) -> AttemptOutcome:
    """One attempt of the delivery named by the job: send it, log the result on the
    delivery, count it on the endpoint. The result is written only while the job's lease
    holds (a recovered job's stale run writes nothing)."""
    delivery = (
        WebhookDelivery.objects.select_related("endpoint", "event")
        .filter(pk=job.payload["delivery_id"])
        .first()
    )
    if delivery is None or delivery.status != WebhookDelivery.Status.PENDING:
        return AttemptOutcome(status="gone")
    endpoint = delivery.endpoint
    if not endpoint.is_active:
        held = _hold(job, delivery)
        if held is not None:
            return held
        # Switched on since it was read: attempted now.
    return _record(job, delivery, _attempt(endpoint, delivery.event), attempted=True)


def _hold(job: Job, delivery: WebhookDelivery) -> AttemptOutcome | None:
    """The endpoint is switched off: keep the delivery, without a job, until it is switched
    on again (which sends every held delivery). Decided under the endpoint's lock, which
    switching it on takes too, so a delivery is never held by an endpoint that is on: None
    when the endpoint is on by now."""
    with holding_lease(job):
        locked = WebhookEndpoint.objects.select_for_update().filter(pk=delivery.endpoint_id)
        endpoint = locked.first()
        current = WebhookDelivery.objects.select_for_update().filter(pk=delivery.pk).first()
        if endpoint is None or current is None or current.status != WebhookDelivery.Status.PENDING:
            return AttemptOutcome(status="gone")
        if endpoint.is_active:
            return None
        current.status = WebhookDelivery.Status.HELD
        current.next_attempt_at = None
        current.error = {
            "kind": ENDPOINT_DISABLED,
            "message": "Held while the endpoint is switched off; sent when it is switched on.",
        }
        current.save(update_fields=["status", "next_attempt_at", "error", "updated_at"])
    logger.info(
        "webhook delivery %s: held",
        delivery.pk,
        extra={"delivery_id": delivery.pk, "job_id": job.pk, "endpoint_id": endpoint.pk},
    )
    return AttemptOutcome(status="held")


def webhook_delivery_mark_errored(*, job: Job, exc: Exception) -> None:
    """Our own bug stopped an attempt: fail the delivery visibly instead of leaving it
    pending (the job keeps the traceback). Writes nothing once the lease is lost."""
    try:
        with holding_lease(job):
            WebhookDelivery.objects.filter(
                pk=job.payload.get("delivery_id"), status=WebhookDelivery.Status.PENDING
            ).update(
                status=WebhookDelivery.Status.FAILED,
                error={"kind": "internal_error", "message": f"{type(exc).__name__}: {exc}"[:500]},
                next_attempt_at=None,
                finished_at=timezone.now(),
                updated_at=timezone.now(),
            )
    except LeaseLost:
        pass


def _record(
    job: Job, delivery: WebhookDelivery, result: AttemptResult, *, attempted: bool
) -> AttemptOutcome:
    now = timezone.now()
    with holding_lease(job):
        # Lock order: the endpoint, then its delivery (as deleting an endpoint does).
        endpoint = (
            WebhookEndpoint.objects.select_for_update().filter(pk=delivery.endpoint_id).first()
        )
        current = WebhookDelivery.objects.select_for_update().filter(pk=delivery.pk).first()
        if endpoint is None or current is None or current.status != WebhookDelivery.Status.PENDING:
            return AttemptOutcome(status="gone")
        if attempted:
            current.attempts += 1
            current.last_attempt_at = now
            current.response_status = result.response_status
            current.response_body = result.response_body
            current.latency_ms = result.latency_ms
        current.error = None if result.ok else {"kind": result.kind, "message": result.message}
        if result.ok:
            current.status = WebhookDelivery.Status.SUCCEEDED
            current.next_attempt_at = None
            current.finished_at = now
            outcome = AttemptOutcome(status="succeeded")
        elif result.retryable and not job.is_last_attempt and now < deliver_until(current):
            delay = retry_delay_s(job.attempts, floor_s=result.retry_after_s)
            current.next_attempt_at = now + timedelta(seconds=delay)
            outcome = AttemptOutcome(
                status="retry", kind=result.kind, message=result.message, retry_in_s=delay
            )
        else:
            current.status = WebhookDelivery.Status.FAILED
            current.next_attempt_at = None
            current.finished_at = now
            outcome = AttemptOutcome(status="failed", kind=result.kind, message=result.message)
        current.save()
        if attempted:
            _count_on_endpoint(endpoint, ok=result.ok, now=now)
    logger.info(
        "webhook delivery %s: %s",
        delivery.pk,
        outcome.status,
        extra={
            "delivery_id": delivery.pk,
            "job_id": job.pk,
            "endpoint_id": delivery.endpoint_id,
            "event_id": delivery.event.event_id,
            "kind": result.kind,
            "response_status": result.response_status,
            "latency_ms": result.latency_ms,
        },
    )
    return outcome


def _count_on_endpoint(endpoint: WebhookEndpoint, *, ok: bool, now: datetime) -> None:
    """Keep the failure streak; disable the endpoint once it has lasted long enough."""
    if ok:
        endpoint.consecutive_failures = 0
        endpoint.failing_since = None
        endpoint.last_success_at = now
        endpoint.save(
            update_fields=["consecutive_failures", "failing_since", "last_success_at", "updated_at"]
        )
        return
    endpoint.consecutive_failures += 1
    endpoint.failing_since = endpoint.failing_since or now
    endpoint.last_failure_at = now
    fields = ["consecutive_failures", "failing_since", "last_failure_at", "updated_at"]
    threshold = settings.WEBHOOK_DISABLE_AFTER_FAILURES
    window = timedelta(hours=settings.WEBHOOK_DISABLE_AFTER_HOURS)
    if (
        endpoint.is_active
        and endpoint.consecutive_failures >= threshold
        and now - endpoint.failing_since >= window
    ):
        endpoint.is_active = False
        endpoint.disabled_at = now
        endpoint.disabled_reason = (
            f"Disabled after {endpoint.consecutive_failures} failed deliveries in a row since "
            f"{endpoint.failing_since.isoformat(timespec='minutes')}."
        )
        fields += ["is_active", "disabled_at", "disabled_reason"]
        logger.warning(
            "webhook endpoint disabled: %s",
            endpoint.disabled_reason,
            extra={"endpoint_id": endpoint.pk, "workspace_id": endpoint.workspace_id},
        )
        transaction.on_commit(lambda: notices.notify_disabled(endpoint.pk))
    endpoint.save(update_fields=fields)
