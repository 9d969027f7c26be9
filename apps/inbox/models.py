"""The inbox's rows: comments read from the platforms under our posts, the replies a team
sends from the inbox with their delivery attempts, each post's read schedule, and each
workspace's inbox settings."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from apps.accounts.models import SocialAccount, Workspace
from apps.common.querysets import WorkspaceQuerySet


class InboxSettings(models.Model):
    """A workspace's inbox rules: whether an editor's reply waits for an admin's approval."""

    workspace = models.OneToOneField(
        Workspace, on_delete=models.CASCADE, related_name="inbox_settings"
    )
    replies_need_approval = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    def __str__(self) -> str:
        return f"Inbox settings of workspace {self.workspace_id}"


class Comment(models.Model):
    """A comment (or a reply in its thread) under one of our published posts, as the
    platform showed it at the last read. ``is_ours``: made by the account itself (its
    first comment, a reply sent from the inbox or from the platform's own app).

    State: open -> done (a person marked it handled); done -> open when reopened. Hidden
    and deleted are the platform's state as far as we changed or saw it.
    """

    class State(models.TextChoices):
        OPEN = "open"
        DONE = "done"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    rendition = models.ForeignKey(
        "renditions.Rendition", on_delete=models.CASCADE, related_name="inbox_comments"
    )
    social_account = models.ForeignKey(SocialAccount, on_delete=models.CASCADE, related_name="+")
    platform = models.CharField(max_length=32)
    platform_id = models.CharField(max_length=255)
    # The comment it answers; null for a comment directly under the post. The platform's
    # id is kept too, for a parent read later than its child.
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children"
    )
    parent_platform_id = models.CharField(max_length=255, blank=True)
    author_name = models.CharField(max_length=255, blank=True)
    author_handle = models.CharField(max_length=255, blank=True)
    author_id = models.CharField(max_length=255, blank=True)
    text = models.TextField(blank=True)
    commented_at = models.DateTimeField()
    url = models.URLField(max_length=1000, blank=True)
    is_ours = models.BooleanField(default=False)
    state = models.CharField(max_length=8, choices=State.choices, default=State.OPEN)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    is_hidden = models.BooleanField(default=False)
    is_deleted = models.BooleanField(default=False)
    # When a complete read of the post first no longer listed it: deleted by its author
    # (or removed by the platform). Kept and shown, never dropped; cleared if it is read again.
    gone_at = models.DateTimeField(null=True, blank=True)
    # Whether one of our replies answers it (sent from the inbox or found by a read).
    is_answered = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        ordering = ["-commented_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["rendition", "platform_id"], name="inbox_comment_once_per_post"
            )
        ]
        indexes = [
            # The inbox page: a workspace's open comments, newest first.
            models.Index(
                fields=["workspace", "state", "-commented_at"], name="inbox_comment_queue"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.platform} comment {self.platform_id} by @{self.author_handle}"

    def event_data(self) -> dict:
        """What a webhook receiver is told about the comment."""
        return {
            "comment": {
                "id": self.pk,
                "platform": self.platform,
                "platform_id": self.platform_id,
                "rendition": self.rendition_id,
                "account": self.social_account_id,
                "parent": self.parent_id,
                "author": {"name": self.author_name, "handle": self.author_handle},
                "text": self.text,
                "commented_at": self.commented_at.isoformat(),
                "url": self.url,
                "is_ours": self.is_ours,
            }
        }


class Reply(models.Model):
    """A reply a member sends to a comment from the inbox.

    Status: awaiting_approval (the workspace wants an admin's approval first) -> pending
    | rejected; pending (its job will send it) -> sent | failed | unknown (sent without an
    answer, and the platform cannot be asked: a person checks). failed and unknown go back
    to pending when a person retries (unknown only after they found no reply).
    """

    class Status(models.TextChoices):
        AWAITING_APPROVAL = "awaiting_approval"
        PENDING = "pending"
        SENT = "sent"
        FAILED = "failed"
        UNKNOWN = "unknown"
        REJECTED = "rejected"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="replies")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    text = models.TextField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    provider_reply_id = models.CharField(max_length=255, blank=True)
    provider_url = models.URLField(max_length=1000, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(status="sent") | ~models.Q(provider_reply_id=""),
                name="inbox_reply_sent_has_id",
            )
        ]
        indexes = [
            # The inbox sweep's jobless replies (`WHERE status = 'pending' ORDER BY id`):
            # pending replies only, so its size follows the replies on their way.
            models.Index(
                fields=["id"],
                condition=models.Q(status="pending"),
                name="inbox_reply_pending",
            )
        ]

    def __str__(self) -> str:
        return f"Reply {self.pk} to comment {self.comment_id} ({self.status})"

    def event_data(self) -> dict:
        """What a webhook receiver is told about the reply, with the comment it answers."""
        data = self.comment.event_data()
        data["reply"] = {
            "id": self.pk,
            "text": self.text,
            "status": self.status,
            "provider_reply_id": self.provider_reply_id,
            "provider_url": self.provider_url,
            "sent_at": self.sent_at.isoformat() if self.sent_at else None,
        }
        return data

    @property
    def idempotency_key(self) -> str:
        """Stable across attempts: sent where the platform honours a handle, and how a
        lookup recognises the reply."""
        return f"inbox-reply-{self.pk}"

    def move(self, from_statuses: set[str], status: str, **fields: object) -> bool:
        """Write `status` (and `fields`) if the row is still in one of `from_statuses`;
        False when another writer moved it first."""
        values = {"status": status, "updated_at": timezone.now(), **fields}
        moved = Reply.objects.filter(pk=self.pk, status__in=from_statuses).update(**values)
        if moved:
            for name, value in values.items():
                setattr(self, name, value)
        return bool(moved)


class ReplyAttempt(models.Model):
    """One request about a reply: a send, a lookup after a send without an answer, or a
    person's resolution. A send's row is committed before its request leaves, so a run
    that finds one in flight knows the reply may exist and looks it up first."""

    class Kind(models.TextChoices):
        SEND = "send"
        LOOKUP = "lookup"
        RESOLVE = "resolve"

    class Outcome(models.TextChoices):
        IN_FLIGHT = "in_flight"
        SENT = "sent"
        FAILED = "failed"
        UNKNOWN = "unknown"  # sent, no answer
        LOST = "lost"  # its run died mid-request
        FOUND = "found"
        ABSENT = "absent"  # proven not there

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    reply = models.ForeignKey(Reply, on_delete=models.CASCADE, related_name="attempts")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.IN_FLIGHT)
    job_id = models.BigIntegerField(null=True, blank=True)
    provider_reply_id = models.CharField(max_length=255, blank=True)
    error = models.JSONField(null=True, blank=True)
    note = models.CharField(max_length=255, blank=True)
    # A send starts on the database clock: the settle window of one left unanswered counts
    # from it.
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return f"{self.kind} of reply {self.reply_id}: {self.outcome}"

    def close(self, outcome: str, **fields: object) -> None:
        values = {"outcome": outcome, "finished_at": timezone.now(), **fields}
        ReplyAttempt.objects.filter(pk=self.pk).update(**values)
        for name, value in values.items():
            setattr(self, name, value)


class CommentSync(models.Model):
    """When a published post's comments are read next: often in its first day, rarely
    after a month, never after ``READ_FOR_DAYS``. ``last_comment_at`` is the newest comment
    seen, the ``since`` of the next read where the platform filters by time."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    rendition = models.OneToOneField(
        "renditions.Rendition", on_delete=models.CASCADE, related_name="comment_sync"
    )
    platform = models.CharField(max_length=32)
    next_read_at = models.DateTimeField(null=True, blank=True)
    last_read_at = models.DateTimeField(null=True, blank=True)
    last_comment_at = models.DateTimeField(null=True, blank=True)
    reads = models.PositiveIntegerField(default=0)
    # Why the post cannot be read (the platform offers no comments, the account's access
    # does not reach them): shown instead of an empty thread.
    unavailable = models.CharField(max_length=255, blank=True)
    last_error = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        indexes = [
            # The sweep: syncs due now.
            models.Index(
                fields=["next_read_at"],
                name="inbox_sync_due",
                condition=models.Q(next_read_at__isnull=False),
            )
        ]

    def __str__(self) -> str:
        return f"Comment sync of rendition {self.rendition_id}"
