"""Telling a workspace's admins that one of its webhook endpoints was switched off."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail

from apps.accounts.recipients import workspace_admin_emails
from apps.webhooks.models import WebhookEndpoint

logger = logging.getLogger(__name__)


def notify_disabled(endpoint_id: int) -> None:
    """Tell the workspace's admins (after the commit; a mail failure is only logged)."""
    endpoint = WebhookEndpoint.objects.select_related("workspace").filter(pk=endpoint_id).first()
    if endpoint is None:
        return
    recipients = workspace_admin_emails(endpoint.workspace)
    if not recipients:
        return
    body = (
        f"The webhook endpoint {endpoint.url} of the workspace {endpoint.workspace.name} "
        f"was switched off.\n\n{endpoint.disabled_reason}\n\nIts events are kept (for "
        f"{settings.WEBHOOK_RETENTION_DAYS:g} days) and sent when it is switched on again. "
        "Failed deliveries can be redelivered from the webhook's delivery log.\n"
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
