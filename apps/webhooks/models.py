"""Outgoing webhooks: the endpoints a workspace registers, the events that happened, and
one delivery per (event, endpoint) with the log of its attempts' last result."""

from __future__ import annotations

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from apps.accounts.models import Workspace
from apps.common.querysets import WorkspaceQuerySet


class WebhookEndpointQuerySet(WorkspaceQuerySet):
    def active(self) -> WebhookEndpointQuerySet:
        return self.filter(is_active=True)

    def subscribed_to(self, event: str) -> WebhookEndpointQuerySet:
        return self.filter(event_types__contains=[event])


class WebhookEndpoint(models.Model):
    """A URL of the workspace's that receives signed events.

    The signing secret (``whsec_`` + base64 of 32 random bytes) is shown once, at creation
    or rotation, and stored encrypted with the credentials key ring (AES-256-GCM), bound to
    this row and workspace.

    Active: is_active -> not active (a person switched it off, or sustained failure did,
    with ``disabled_at`` and ``disabled_reason`` set) -> active again (a person re-enables
    it; the failure streak starts over). ``consecutive_failures`` counts failed attempts
    since the last success and ``failing_since`` is when that streak began.
    """

    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="webhook_endpoints"
    )
    url = models.URLField(max_length=2000)
    description = models.CharField(max_length=200, blank=True)
    event_types = models.JSONField(default=list, help_text="Event types sent to this URL.")
    is_active = models.BooleanField(default=True)
    secret_key_id = models.CharField(max_length=32, blank=True)
    secret_ciphertext = models.BinaryField(null=True, blank=True, editable=False)
    consecutive_failures = models.PositiveIntegerField(default=0)
    failing_since = models.DateTimeField(null=True, blank=True)
    last_failure_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=500, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WebhookEndpointQuerySet.as_manager()

    class Meta:
        indexes = [
            # Every emission asks for the workspace's active endpoints.
            models.Index(
                fields=["workspace"],
                condition=models.Q(is_active=True),
                name="webhook_endpoint_ws_active",
            )
        ]

    def __str__(self) -> str:
        return self.url

    def secret_aad(self) -> bytes:
        """Associated data binding the encrypted secret to this row and workspace."""
        if self.pk is None:
            raise ValueError("Save the endpoint before storing its secret.")
        return f"webhook_endpoint:{self.workspace_id}:{self.pk}".encode()


class WebhookEvent(models.Model):
    """Something that happened, once. Every endpoint's delivery of it (and every retry and
    redelivery) carries the same ``event_id``, so receivers can drop duplicates."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    event_id = models.CharField(max_length=40, unique=True)
    type = models.CharField(max_length=64)
    data = models.JSONField(default=dict, encoder=DjangoJSONEncoder)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["workspace", "created_at"], name="webhook_event_ws_time")]

    def __str__(self) -> str:
        return f"{self.type} {self.event_id}"


class WebhookDelivery(models.Model):
    """One event sent to one endpoint, retried with backoff by its own job.

    Status: pending -> succeeded (a 2xx) | failed (a permanent refusal, or still failing
    when ``deliver_until`` has passed: at least RETRY_FOR after it was queued). Both are
    final; a redelivery is a new row (``redelivery_of``) for the same event. An endpoint
    that is switched off keeps its events: their deliveries are ``held`` (recorded, no job)
    and become pending again, with a new ``deliver_until``, when it is switched on. The
    response fields describe the latest attempt.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        HELD = "held"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.ForeignKey(WebhookEvent, on_delete=models.CASCADE, related_name="deliveries")
    redelivery_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    response_body = models.TextField(blank=True, help_text="The start of the latest response.")
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True, help_text="{kind, message} of the latest.")
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    deliver_until = models.DateTimeField(
        null=True, blank=True, help_text="Failures are retried until then (then it fails)."
    )
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["pending", "held", "succeeded", "failed"]),
                name="webhook_delivery_status_valid",
            )
        ]
        indexes = [
            # An endpoint's delivery log, newest first.
            models.Index(fields=["endpoint", "-created_at"], name="webhook_delivery_endpoint"),
            # What an endpoint switched on again has to send.
            models.Index(
                fields=["endpoint", "id"],
                condition=models.Q(status="held"),
                name="webhook_delivery_held",
            ),
        ]

    def __str__(self) -> str:
        return f"Delivery {self.pk} ({self.status})"

    @property
    def dedupe_key(self) -> str:
        """The key of this delivery's one unfinished job."""
        return f"webhook:{self.pk}"
