"""Telling a workspace's admins that one of its webhook endpoints was switched off."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.core.mail import send_mail

from apps.accounts.models import OrganizationMembership, Workspace, WorkspaceMembership
from apps.webhooks.models import WebhookEndpoint

logger = logging.getLogger(__name__)


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
