"""Approval of posts: a workspace's rule that editors' posts need an admin's approval, each
publication's review (its state) and the comments on it, and the links through which
a client without an account reviews posts (``PortalLink``).

The publication stays a draft while it is in review; approving it schedules it through the
publishing services, so a review never bypasses the scheduling rules."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models.functions import Now

from apps.common.querysets import WorkspaceQuerySet

MAX_COMMENT_LENGTH = 5000


class ApprovalRule(models.Model):
    """One per workspace that has ever set it; no row means approval is not required."""

    workspace = models.OneToOneField(
        "accounts.Workspace", on_delete=models.CASCADE, related_name="approval_rule"
    )
    required = models.BooleanField(
        default=False,
        help_text="Editors' posts need an admin's approval before they are scheduled.",
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.workspace}: approval {'required' if self.required else 'optional'}"


class Review(models.Model):
    """A publication's way through approval. An approval is bound to what was approved:
    ``approved_revision`` is the publication's revision once approved and scheduled,
    ``approved_hash`` the digest of its content, media, destinations, first comment and
    times then (``apps.publishing.services.approval``). Someone whose posts need approval
    cannot change any of those on a post that is not a draft; an admin's later edit shows
    as a revision past the approved one."""

    class State(models.TextChoices):
        """in_review -> approved | changes_requested | on_hold;
        approved -> on_hold (before it goes out), or in_review when a client approved it
        and it changed (``apps.publishing.services.approval``);
        on_hold -> approved | changes_requested; changes_requested and on_hold (a draft)
        -> in_review when submitted again."""

        IN_REVIEW = "in_review", "In review"
        CHANGES_REQUESTED = "changes_requested", "Changes requested"
        APPROVED = "approved", "Approved"
        ON_HOLD = "on_hold", "On hold"

    publication = models.OneToOneField(
        "publications.Publication", on_delete=models.CASCADE, related_name="review"
    )
    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=20, choices=State.choices)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    requested_at = models.DateTimeField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_via = models.ForeignKey(
        "approvals.PortalLink",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The client link the decision came through (decided_by is then empty).",
    )
    approved_revision = models.PositiveIntegerField(
        null=True, blank=True, help_text="The publication's revision this approval covers."
    )
    approved_hash = models.CharField(
        max_length=64,
        blank=True,
        help_text="SHA-256 of what was approved: content, media, destinations, first "
        "comment and times.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["workspace", "state", "requested_at"], name="review_queue")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(
                    state__in=["in_review", "changes_requested", "approved", "on_hold"]
                ),
                name="review_state_valid",
            )
        ]

    def __str__(self) -> str:
        return f"Review of publication {self.publication_id}: {self.state}"


class ReviewComment(models.Model):
    """What was said on a post's review: a plain comment, or the note of a step."""

    class Kind(models.TextChoices):
        COMMENT = "comment"
        SUBMITTED = "submitted"
        CHANGES_REQUESTED = "changes_requested", "Changes requested"
        APPROVED = "approved"
        ON_HOLD = "on_hold", "Put on hold"

    publication = models.ForeignKey(
        "publications.Publication", on_delete=models.CASCADE, related_name="review_comments"
    )
    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    portal_link = models.ForeignKey(
        "approvals.PortalLink",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Written by a client through this link (author is then empty).",
    )
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.COMMENT)
    body = models.TextField(blank=True, max_length=MAX_COMMENT_LENGTH)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["publication", "created_at"], name="review_comment_pub")]

    def __str__(self) -> str:
        return f"{self.kind} on publication {self.publication_id}"


class PortalLinkQuerySet(WorkspaceQuerySet["PortalLink"]):
    def usable(self) -> PortalLinkQuerySet:
        """Links that still open: neither revoked nor expired (on the database clock)."""
        return self.filter(revoked_at__isnull=True, expires_at__gt=Now())


class PortalLink(models.Model):
    """A link that lets someone without an account (an agency's client) review posts of
    one workspace: see each post as it will go out and approve it or ask for changes.

    The link carries its id and a secret, signed with the site's key
    (``apps.approvals.portal``); only the secret's SHA-256 is stored, so the link is shown
    once. It opens until ``expires_at`` unless revoked first, and only while the member
    who made it may still approve posts: its decisions are made with that person's
    powers, and recorded as the client's (``Review.decided_via``). It shows posts of its
    workspace that are in review (or were reviewed), only those it names when it names
    some, and only those planned within its period when it has one."""

    workspace = models.ForeignKey(
        "accounts.Workspace", on_delete=models.CASCADE, related_name="portal_links"
    )
    label = models.CharField(max_length=100, help_text="Who the link is for.")
    secret_hash = models.CharField(max_length=64, unique=True)
    publications = models.ManyToManyField(
        "publications.Publication",
        blank=True,
        related_name="+",
        help_text="The posts it shows; none: every post in review.",
    )
    period_start = models.DateTimeField(null=True, blank=True)
    period_end = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    last_used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = PortalLinkQuerySet.as_manager()

    class Meta:
        # The workspace's list of links, newest first.
        indexes = [models.Index(fields=["workspace", "-created_at"], name="portal_link_recent")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(period_start__isnull=True)
                | models.Q(period_end__isnull=True)
                | models.Q(period_end__gt=models.F("period_start")),
                name="portal_link_period_ordered",
            )
        ]

    def __str__(self) -> str:
        return f"Client link {self.label} ({self.workspace})"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    def is_expired(self, now: datetime) -> bool:
        return self.expires_at <= now
