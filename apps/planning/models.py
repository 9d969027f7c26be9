"""Posting slots: the weekly times at which queued posts go out (a queue, as in Buffer).

A workspace has one default set of slots; an account may have its own set instead. A set
reads its times in its own IANA zone, or in the workspace's zone when it names none.
"""

from __future__ import annotations

from django.db import models

from apps.accounts.models import SocialAccount, Workspace, validate_timezone
from apps.common.querysets import WorkspaceQuerySet

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # index = date.weekday()
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class QueueSchedule(models.Model):
    """One weekly set of posting slots: the workspace's default (``social_account`` null)
    or one account's own, which replaces the default for that account.

    ``timezone`` blank means the workspace's ``default_timezone``, read when slots are
    computed (so changing the workspace's zone moves the default slots with it).
    """

    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="queue_schedules"
    )
    social_account = models.OneToOneField(
        SocialAccount,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="queue_schedule",
    )
    timezone = models.CharField(
        max_length=64,
        blank=True,
        validators=[validate_timezone],
        help_text="Blank: the workspace's zone.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace"],
                condition=models.Q(social_account__isnull=True),
                name="queue_schedule_one_default_per_workspace",
            ),
        ]

    def __str__(self) -> str:
        account = self.social_account
        owner = f"@{account.handle}" if account is not None else "workspace default"
        return f"Slots of {owner}"

    @property
    def zone_name(self) -> str:
        return self.timezone or self.workspace.default_timezone

    @property
    def is_default(self) -> bool:
        return self.social_account_id is None


class QueueSlot(models.Model):
    """A weekday and a wall-clock time (to the minute) in its schedule's zone."""

    schedule = models.ForeignKey(QueueSchedule, on_delete=models.CASCADE, related_name="slots")
    # Direct, so every query can be scoped to the workspace without a join.
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="queue_slots")
    weekday = models.PositiveSmallIntegerField(help_text="0 is Monday, 6 is Sunday.")
    time = models.TimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        ordering = ["weekday", "time"]
        constraints = [
            models.UniqueConstraint(
                fields=["schedule", "weekday", "time"], name="queue_slot_unique_time"
            ),
            models.CheckConstraint(
                condition=models.Q(weekday__gte=0, weekday__lte=6), name="queue_slot_weekday_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{WEEKDAY_NAMES[self.weekday]} {self.time:%H:%M}"
