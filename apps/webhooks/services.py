"""Writes of outgoing webhooks: endpoints, emitting events, delivering and redelivering them.

``webhook_emit`` runs inside the caller's transaction (a publish outcome, a status change)
and only adds rows: the event and, per subscribed active endpoint, a delivery and its job.
Everything that can go wrong with a receiver happens later, in that job, so a webhook never
changes or delays publish state.

Delivery is at least once: a 2xx settles it; network errors, timeouts, 408, 429 and 5xx are
retried with backoff (a Retry-After is the floor), every attempt signed anew with the same
event id; other answers fail it at once. An endpoint whose attempts keep failing for long
(WEBHOOK_DISABLE_AFTER_FAILURES in a row, over at least WEBHOOK_DISABLE_AFTER_HOURS) is
disabled, and the workspace's admins are told.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from apps.accounts import crypto
from apps.accounts.models import (
    OrganizationMembership,
    User,
    Workspace,
    WorkspaceMembership,
)
from apps.common.errors import Conflict, ValidationFailed
from apps.jobs.errors import LeaseLost
from apps.jobs.models import Job
from apps.jobs.services import holding_lease, job_cancel, job_enqueue
from apps.webhooks import network, signing
from apps.webhooks.constants import (
    BACKOFF,
    DELIVER_JOB,
    EVENT_TYPES,
    MAX_RESPONSE_KEPT_CHARS,
    MAX_RETRY_AFTER_S,
)
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

logger = logging.getLogger(__name__)

MAX_ENDPOINTS_PER_WORKSPACE = 20
_UNSET: Any = object()

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


# --- endpoints -------------------------------------------------------------------------------


def _clean_event_types(value: Any) -> list[str]:
    """The subscribed types, known and deduplicated, in catalogue order; None: all."""
    if value is None:
        return list(EVENT_TYPES)
    if not isinstance(value, list | tuple) or not value:
        raise ValidationFailed(
            "Choose at least one event type.",
            details={"event_types": [f"A non-empty list of: {', '.join(EVENT_TYPES)}."]},
        )
    unknown = sorted({str(v) for v in value} - set(EVENT_TYPES))
    if unknown:
        raise ValidationFailed(
            f"Unknown event types: {', '.join(unknown)}.",
            code="UNKNOWN_EVENT_TYPE",
            details={"event_types": [f"Choose from: {', '.join(EVENT_TYPES)}."]},
        )
    return [t for t in EVENT_TYPES if t in value]


def _clean_url(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationFailed("A URL is required.", details={"url": ["This field is required."]})
    url = value.strip()
    if len(url) > 2000:
        raise ValidationFailed(
            "The URL is too long.", details={"url": ["At most 2000 characters."]}
        )
    return network.check_url(url)


def _full_clean(endpoint: WebhookEndpoint) -> None:
    try:
        endpoint.full_clean(exclude=["workspace", "created_by", "secret_ciphertext"])
    except ValidationError as exc:
        raise ValidationFailed(
            "The webhook endpoint is not valid.", details=exc.message_dict
        ) from exc


def _store_secret(endpoint: WebhookEndpoint, secret: str) -> None:
    sealed = crypto.seal({"secret": secret}, aad=endpoint.secret_aad())
    endpoint.secret_key_id = sealed.key_id
    endpoint.secret_ciphertext = sealed.ciphertext
    endpoint.save(update_fields=["secret_key_id", "secret_ciphertext", "updated_at"])


def webhook_endpoint_secret(endpoint: WebhookEndpoint) -> str:
    """The clear signing secret; raises crypto.CredentialsError when it cannot be read."""
    sealed = crypto.Sealed(endpoint.secret_key_id, bytes(endpoint.secret_ciphertext or b""))
    return crypto.unseal(sealed, aad=endpoint.secret_aad())["secret"]


@transaction.atomic
def webhook_endpoint_create(
    *,
    workspace: Workspace,
    url: str,
    event_types: list[str] | None = None,
    description: str = "",
    created_by: User | None = None,
) -> tuple[WebhookEndpoint, str]:
    """Register a URL; returns the endpoint and its signing secret, shown only now.

    event_types: the types to send (default: all). Errors: ValidationFailed
    (WEBHOOK_URL_FORBIDDEN, WEBHOOK_URL_UNRESOLVABLE, UNKNOWN_EVENT_TYPE), Conflict
    WEBHOOK_ENDPOINT_LIMIT.
    """
    url = _clean_url(url)
    types = _clean_event_types(event_types)
    Workspace.objects.select_for_update().filter(pk=workspace.pk).first()  # serializes the count
    if WebhookEndpoint.objects.for_workspace(workspace).count() >= MAX_ENDPOINTS_PER_WORKSPACE:
        raise Conflict(
            f"A workspace can have at most {MAX_ENDPOINTS_PER_WORKSPACE} webhook endpoints.",
            code="WEBHOOK_ENDPOINT_LIMIT",
            details={"limit": MAX_ENDPOINTS_PER_WORKSPACE},
        )
    endpoint = WebhookEndpoint(
        workspace=workspace,
        url=url,
        event_types=types,
        description=(description or "").strip(),
        created_by=created_by,
    )
    _full_clean(endpoint)
    endpoint.save()
    secret = signing.new_secret()
    _store_secret(endpoint, secret)
    return endpoint, secret


@transaction.atomic
def webhook_endpoint_update(
    *,
    endpoint: WebhookEndpoint,
    url: str = _UNSET,
    event_types: list[str] | None = _UNSET,
    description: str = _UNSET,
    is_active: bool = _UNSET,
) -> WebhookEndpoint:
    """Change the URL (checked again), the subscribed types, the description, or switch it
    off and on. Switching it on again clears the disabling and starts a new failure streak."""
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    if url is not _UNSET:
        endpoint.url = _clean_url(url)
    if event_types is not _UNSET:
        endpoint.event_types = _clean_event_types(event_types)
    if description is not _UNSET:
        endpoint.description = (description or "").strip()
    if is_active is not _UNSET:
        if not isinstance(is_active, bool):
            raise ValidationFailed("is_active must be true or false.")
        if is_active and not endpoint.is_active:
            network.check_url(endpoint.url)
            endpoint.consecutive_failures = 0
            endpoint.failing_since = None
            endpoint.disabled_at = None
            endpoint.disabled_reason = ""
        elif not is_active and endpoint.is_active:
            endpoint.disabled_at = timezone.now()
            endpoint.disabled_reason = "Switched off by a person."
        endpoint.is_active = is_active
    _full_clean(endpoint)
    endpoint.save()
    return endpoint


@transaction.atomic
def webhook_endpoint_rotate_secret(*, endpoint: WebhookEndpoint) -> str:
    """A new signing secret, shown only now; attempts from now on are signed with it."""
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    secret = signing.new_secret()
    _store_secret(endpoint, secret)
    return secret


@transaction.atomic
def webhook_endpoint_delete(*, endpoint: WebhookEndpoint) -> None:
    """Delete the endpoint with its delivery log; its pending deliveries are not sent."""
    locked = WebhookEndpoint.objects.select_for_update().filter(pk=endpoint.pk).first()
    if locked is None:
        return
    pending = locked.deliveries.filter(status=WebhookDelivery.Status.PENDING)
    for delivery in pending.only("pk"):
        job_cancel(dedupe_key=delivery.dedupe_key, reason="The webhook endpoint was deleted.")
    locked.delete()


def webhook_secrets_rotate_keys() -> int:
    """Re-encrypt every endpoint secret not under the newest ENCRYPTION_KEYS entry (the
    webhooks' part of a key rotation). Returns how many rows changed."""
    newest = crypto.current_key_id()
    changed = 0
    stale = WebhookEndpoint.objects.exclude(secret_key_id=newest).exclude(
        secret_ciphertext__isnull=True
    )
    for pk in list(stale.values_list("pk", flat=True)):
        with transaction.atomic():
            endpoint = WebhookEndpoint.objects.select_for_update().get(pk=pk)
            if endpoint.secret_key_id != newest:
                _store_secret(endpoint, webhook_endpoint_secret(endpoint))
                changed += 1
    return changed


def webhooks_prune(*, older_than_days: float | None = None, chunk: int = 2000) -> int:
    """Delete events older than WEBHOOK_RETENTION_DAYS whose deliveries are all finished
    (their delivery log goes with them), in short chunks. Returns how many events went."""
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


# --- emitting ----------------------------------------------------------------------------------


def new_event_id() -> str:
    return "evt_" + uuid.uuid4().hex


def webhook_emit(*, workspace: Workspace, event: str, data: dict) -> WebhookEvent | None:
    """Record that `event` happened in the workspace and queue its delivery to every active
    endpoint subscribed to it, in the caller's transaction (nothing is sent unless it
    commits). Returns the event, or None when no endpoint wants it (nothing is stored).

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
                .active()
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
                delivery = WebhookDelivery.objects.create(
                    workspace=workspace, endpoint=endpoint, event=record
                )
                _enqueue(delivery, workspace)
            return record
    except Exception:
        logger.exception(
            "Webhook event %s could not be recorded; it is not delivered.",
            event,
            extra={"workspace_id": workspace_id, "event": event},
        )
        return None


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
    DELIVERY_PENDING (still being delivered), WEBHOOK_ENDPOINT_DISABLED."""
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=delivery.endpoint_id)
    current = WebhookDelivery.objects.select_related("event").get(pk=delivery.pk)
    if current.status == WebhookDelivery.Status.PENDING:
        raise Conflict(
            "This delivery is still being attempted.",
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
        workspace_id=current.workspace_id,
        endpoint=endpoint,
        event=current.event,
        redelivery_of=current,
    )
    _enqueue(again, Workspace.objects.select_related("organization").get(pk=current.workspace_id))
    return again


# --- delivering ----------------------------------------------------------------------------


def event_body(event: WebhookEvent) -> bytes:
    """The JSON body of every attempt of the event: the same bytes each time."""
    created = event.created_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
    payload = {"id": event.event_id, "type": event.type, "timestamp": created, "data": event.data}
    return json.dumps(payload, cls=DjangoJSONEncoder, separators=(",", ":")).encode()


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

    status: str  # "succeeded" | "retry" | "failed" | "gone"
    kind: str = ""
    message: str = ""
    retry_in_s: float | None = None


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
    common = {
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
        secret = webhook_endpoint_secret(endpoint)
    except crypto.CredentialsError as exc:
        return AttemptResult(ok=False, kind=SECRET_UNREADABLE, message=str(exc))
    body = event_body(event)
    headers = signing.headers(
        secret=secret, message_id=event.event_id, timestamp=int(time.time()), body=body
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
        result = AttemptResult(
            ok=False,
            kind=ENDPOINT_DISABLED,
            message="The endpoint was switched off before this attempt.",
        )
        return _record(job, delivery, result, attempted=False)
    return _record(job, delivery, _attempt(endpoint, delivery.event), attempted=True)


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
        endpoint = WebhookEndpoint.objects.select_for_update().filter(pk=delivery.endpoint_id)
        endpoint = endpoint.first()
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
        elif result.retryable and not job.is_last_attempt:
            delay = BACKOFF.delay(job.attempts, floor_s=result.retry_after_s)
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
        transaction.on_commit(lambda: _notify_disabled(endpoint.pk))
    endpoint.save(update_fields=fields)


def workspace_admin_emails(workspace: Workspace) -> list[str]:
    """Who administers the workspace: its admins, and its organization's owners and admins."""
    org_admins = OrganizationMembership.objects.filter(
        organization_id=workspace.organization_id,
        role__in=[OrganizationMembership.Role.OWNER, OrganizationMembership.Role.ADMIN],
        user__is_active=True,
    ).values_list("user__email", flat=True)
    ws_admins = WorkspaceMembership.objects.filter(
        workspace=workspace, role=WorkspaceMembership.Role.ADMIN, user__is_active=True
    ).values_list("user__email", flat=True)
    return sorted(set(_emails(org_admins)) | set(_emails(ws_admins)))


def _emails(values: Iterable[str]) -> list[str]:
    return [value for value in values if value]


def _notify_disabled(endpoint_id: int) -> None:
    """Tell the workspace's admins (after the commit; a mail failure is only logged)."""
    endpoint = WebhookEndpoint.objects.select_related("workspace").filter(pk=endpoint_id).first()
    if endpoint is None:
        return
    recipients = workspace_admin_emails(endpoint.workspace)
    if not recipients:
        return
    body = (
        f"The webhook endpoint {endpoint.url} of the workspace {endpoint.workspace.name} "
        f"was switched off.\n\n{endpoint.disabled_reason}\n\nEvents are not sent to it until "
        "it is switched on again. Failed deliveries can be redelivered from the webhook's "
        "delivery log.\n"
    )
    try:
        send_mail(
            subject=f"Webhook endpoint disabled: {endpoint.url}"[:200],
            message=body,
            from_email=None,
            recipient_list=recipients,
        )
    except Exception:
        logger.exception(
            "Could not send the webhook-disabled notice.", extra={"endpoint_id": endpoint.pk}
        )
