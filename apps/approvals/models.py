"""Approval of posts: a workspace's rule that editors' posts need an admin's approval, each
publication's review (its state) and the comments on it.

The publication stays a draft while it is in review; approving it schedules it through the
publishing services, so a review never bypasses the scheduling rules."""

from django.conf import settings
from django.db import models

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
        IN_REVIEW = "in_review", "In review"
        CHANGES_REQUESTED = "changes_requested", "Changes requested"
        APPROVED = "approved", "Approved"

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
                condition=models.Q(state__in=["in_review", "changes_requested", "approved"]),
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

    publication = models.ForeignKey(
        "publications.Publication", on_delete=models.CASCADE, related_name="review_comments"
    )
    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.COMMENT)
    body = models.TextField(blank=True, max_length=MAX_COMMENT_LENGTH)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["publication", "created_at"], name="review_comment_pub")]

    def __str__(self) -> str:
        return f"{self.kind} on publication {self.publication_id}"
