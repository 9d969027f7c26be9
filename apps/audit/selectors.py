"""Reading the security log."""

from __future__ import annotations

from django.db.models import Q

from apps.accounts.models import Organization, User
from apps.audit.models import AuditEvent


def audit_events_for(*, organization: Organization, action: str = "", person: User | None = None):
    """The organization's events, newest first, optionally one action's or one person's
    (as the actor, or as the member acted upon)."""
    events = AuditEvent.objects.for_organization(organization)
    if action:
        events = events.filter(action=action)
    if person is not None:
        events = events.filter(
            Q(actor_user=person) | Q(target_type=AuditEvent.Target.USER, target_id=str(person.pk))
        )
    return events.select_related("workspace", "actor_token").order_by("-created_at", "-pk")
