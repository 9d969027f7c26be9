"""Endpoints a workspace registers: create, update (the URL checked again), switch off and
on, delete, and their signing secrets (shown once, stored encrypted, rotated; re-encrypted
when the key ring rotates).

A rotation keeps the secret it replaces for WEBHOOK_SECRET_OVERLAP_HOURS: attempts made in
that window carry a signature by each (Standard Webhooks takes several, space-separated),
so a receiver that has not switched yet, or a delivery queued before the rotation, still
verifies. Both secrets and the window's end are sealed together in the endpoint's one
ciphertext: ``{"secret", "previous", "previous_until"}``."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from apps.accounts import crypto
from apps.accounts.models import User, Workspace
from apps.common import events
from apps.common.db_clock import db_now
from apps.common.errors import Conflict, ValidationFailed
from apps.jobs.services import job_cancel
from apps.webhooks import network, signing
from apps.webhooks.constants import EVENT_TYPES
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from apps.webhooks.outbox import webhook_deliveries_release

MAX_ENDPOINTS_PER_WORKSPACE = 20
_UNSET: Any = object()


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


def _store_secrets(endpoint: WebhookEndpoint, secrets: dict[str, str]) -> None:
    sealed = crypto.seal(secrets, aad=endpoint.secret_aad())
    endpoint.secret_key_id = sealed.key_id
    endpoint.secret_ciphertext = sealed.ciphertext
    endpoint.save(update_fields=["secret_key_id", "secret_ciphertext", "updated_at"])


def _secrets(endpoint: WebhookEndpoint) -> dict[str, str]:
    """The sealed secrets in clear; raises crypto.CredentialsError when unreadable."""
    sealed = crypto.Sealed(endpoint.secret_key_id, bytes(endpoint.secret_ciphertext or b""))
    return crypto.unseal(sealed, aad=endpoint.secret_aad())


def webhook_endpoint_secret(endpoint: WebhookEndpoint) -> str:
    """The clear signing secret; raises crypto.CredentialsError when it cannot be read."""
    return _secrets(endpoint)["secret"]


def webhook_endpoint_previous_secret_until(endpoint: WebhookEndpoint) -> datetime | None:
    """When the secret the last rotation replaced stops signing (None: it does not)."""
    until = _secrets(endpoint).get("previous_until")
    return datetime.fromisoformat(until) if until else None


def webhook_endpoint_signing_secrets(endpoint: WebhookEndpoint, *, at: datetime) -> list[str]:
    """The secrets an attempt made at ``at`` (on the database clock) is signed with: the
    current one, then the one a rotation replaced while its overlap lasts. Raises
    crypto.CredentialsError when they cannot be read."""
    secrets = _secrets(endpoint)
    until = secrets.get("previous_until")
    if until and at < datetime.fromisoformat(until):
        return [secrets["secret"], secrets["previous"]]
    return [secrets["secret"]]


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
    _store_secrets(endpoint, {"secret": secret})
    events.emit(events.WEBHOOK_CREATED, endpoint=endpoint)
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
    off and on. Switched off, it keeps its events (held); switching it on again clears the
    disabling, starts a new failure streak and sends what was held, oldest first."""
    # Checking a URL resolves its host, which may take seconds: done before the row lock,
    # so deliveries to this endpoint never wait on a DNS answer.
    new_url = _clean_url(url) if url is not _UNSET else None
    checked = new_url
    if is_active is True and checked is None:
        now = WebhookEndpoint.objects.values("url", "is_active").get(pk=endpoint.pk)
        if not now["is_active"]:  # switching it on checks where it points
            checked = network.check_url(now["url"])
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    if new_url is not None:
        endpoint.url = new_url
    if event_types is not _UNSET:
        endpoint.event_types = _clean_event_types(event_types)
    if description is not _UNSET:
        endpoint.description = (description or "").strip()
    switched_on = False
    if is_active is not _UNSET:
        if not isinstance(is_active, bool):
            raise ValidationFailed("is_active must be true or false.")
        if is_active and not endpoint.is_active:
            switched_on = True
            if endpoint.url != checked:  # changed since the check (rare): check it again
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
    if switched_on:
        webhook_deliveries_release(endpoint)
    given = {
        "url": url,
        "event_types": event_types,
        "description": description,
        "is_active": is_active,
    }
    events.emit(
        events.WEBHOOK_UPDATED,
        endpoint=endpoint,
        changes=sorted(k for k, v in given.items() if v is not _UNSET),
    )
    return endpoint


@transaction.atomic
def webhook_endpoint_rotate_secret(*, endpoint: WebhookEndpoint) -> str:
    """A new signing secret, shown only now; attempts from now on are signed with it and,
    for WEBHOOK_SECRET_OVERLAP_HOURS, with the one it replaces (an older one is dropped).
    A replaced secret that cannot be read is not kept."""
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    secret = signing.new_secret()
    secrets = {"secret": secret}
    overlap = timedelta(hours=settings.WEBHOOK_SECRET_OVERLAP_HOURS)
    if overlap > timedelta(0):
        try:
            secrets["previous"] = webhook_endpoint_secret(endpoint)
        except crypto.CredentialsError:
            pass
        else:
            # The worker compares it with the database clock, as any process would.
            secrets["previous_until"] = (db_now() + overlap).isoformat()
    _store_secrets(endpoint, secrets)
    events.emit(events.WEBHOOK_SECRET_ROTATED, endpoint=endpoint)
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
    events.emit(events.WEBHOOK_DELETED, endpoint=locked)
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
                _store_secrets(endpoint, _secrets(endpoint))
                changed += 1
    return changed
