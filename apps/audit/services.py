"""Writing the audit log, and pruning it past its retention period."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from apps.accounts.models import Organization, Workspace
from apps.audit.context import Actor, current_actor
from apps.audit.models import AuditEvent


def audit_record(
    *,
    action: str,
    organization: Organization | None = None,
    workspace: Workspace | None = None,
    target_type: str = "",
    target_id: object = "",
    target_label: str = "",
    metadata: dict[str, Any] | None = None,
    actor: Actor | None = None,
) -> AuditEvent:
    """Append one event; the actor defaults to whoever is acting now (see context)."""
    actor = actor or current_actor()
    if organization is None and workspace is not None:
        organization = workspace.organization
    return AuditEvent.objects.create(
        organization=organization,
        workspace=workspace,
        actor_user=actor.user,
        actor_token=actor.token,
        actor_label=actor.label[:255],
        action=action,
        target_type=target_type,
        target_id=str(target_id if target_id is not None else "")[:64],
        target_label=target_label[:255],
        ip=actor.ip,
        peer_ip=actor.peer_ip,
        user_agent=actor.user_agent,
        metadata=metadata or {},
    )


def audit_prune(*, older_than_days: float | None = None, chunk: int = 5000) -> int:
    """Delete events older than AUDIT_RETENTION_DAYS, in short chunks so no lock is held
    for long. Returns how many went."""
    days = settings.AUDIT_RETENTION_DAYS if older_than_days is None else older_than_days
    cutoff = timezone.now() - timedelta(days=days)
    deleted = 0
    while True:
        ids = list(
            AuditEvent.objects.filter(created_at__lt=cutoff).values_list("pk", flat=True)[:chunk]
        )
        if not ids:
            return deleted
        AuditEvent.objects.filter(pk__in=ids).delete()
        deleted += len(ids)
