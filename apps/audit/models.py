"""The security audit log: one append-only row per security-relevant action."""

from __future__ import annotations

from django.db import models

from apps.accounts.models import ApiToken, Organization, User, Workspace


class AuditEventQuerySet(models.QuerySet):
    def for_organization(self, organization: Organization) -> AuditEventQuerySet:
        """What the organization's admins see: its own events, and the sign-ins (and
        failed sign-ins) of people who are its members now. Sign-ins belong to no
        organization, so they are matched through the member they name."""
        member_ids = organization.memberships.annotate(
            user_key=models.functions.Cast("user_id", models.CharField())
        ).values("user_key")
        return self.filter(
            models.Q(organization=organization)
            | models.Q(
                organization__isnull=True,
                target_type=AuditEvent.Target.USER,
                target_id__in=member_ids,
            )
        )


class AuditEvent(models.Model):
    """Who did what to whom, from where. Written by the audit app's subscribers, never
    edited or deleted except by the retention prune (AUDIT_RETENTION_DAYS).

    ``organization`` is empty for a person's own events (signing in), which belong to no
    organization; the actor is empty when nobody signed in acted (a failed sign-in, an
    operator's command). A token acting records the token and the person who created it.
    Labels keep the target readable after it is deleted.
    """

    class Target(models.TextChoices):
        USER = "user"
        INVITATION = "invitation"
        TOKEN = "token"
        ACCOUNT = "account"
        WEBHOOK = "webhook"
        RENDITION = "rendition"
        PUBLICATION = "publication"
        WORKSPACE = "workspace"

    organization = models.ForeignKey(
        Organization, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_user = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_token = models.ForeignKey(
        ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_label = models.CharField(max_length=255, blank=True)
    action = models.CharField(max_length=64)
    target_type = models.CharField(max_length=32, choices=Target.choices, blank=True)
    target_id = models.CharField(max_length=64, blank=True)
    target_label = models.CharField(max_length=255, blank=True)
    ip = models.GenericIPAddressField(
        null=True, blank=True, help_text="The client, resolved through the trusted proxies."
    )
    peer_ip = models.GenericIPAddressField(
        null=True, blank=True, help_text="The connection's peer: the proxy, behind one."
    )
    user_agent = models.CharField(max_length=255, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        indexes = [
            # The organization's security log, newest first (paged).
            models.Index(fields=["organization", "-created_at"], name="audit_event_org_recent"),
            # Sign-ins of an organization's members (organization is empty on those rows).
            models.Index(
                fields=["target_type", "target_id", "-created_at"],
                condition=models.Q(organization__isnull=True),
                name="audit_event_personal",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.action} by {self.actor_label or 'nobody signed in'} at {self.created_at}"

    @property
    def details(self) -> list[str]:
        """The metadata as short "Key: value" phrases, for people to read."""
        phrases = []
        for key, value in (self.metadata or {}).items():
            if value is None or value == "" or value == []:
                continue
            shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            phrases.append(f"{key.replace('_', ' ').capitalize()}: {shown}")
        return phrases
