"""Posting slots: the weekly times at which queued posts go out (a queue, as in Buffer),
and evergreen posts, which the queue shares again into its free slots.

A workspace has one default set of slots; an account may have its own set instead. A set
reads its times in its own IANA zone, or in the workspace's zone when it names none.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from apps.accounts.models import SocialAccount, Workspace, validate_timezone
from apps.common.querysets import WorkspaceQuerySet

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # index = date.weekday()
# Evergreen cadences and gaps are at most a year.
MAX_EVERGREEN_DAYS = 366
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


class EvergreenQuerySet(WorkspaceQuerySet["EvergreenPost"]):
    def due(self, now: datetime) -> EvergreenQuerySet:
        """Active evergreen posts whose next look is due (index evergreen_due)."""
        return self.filter(status=EvergreenPost.Status.ACTIVE, next_check_at__lte=now)


class EvergreenPost(models.Model):
    """A post the queue shares again and again: every ``every_days`` a copy of ``source``
    (a new publication, through the create pipeline) takes the next posting slot free for
    its destinations (``apps.planning.evergreen``).

    Never on an account within ``min_gap_days`` of the last time the post went out there;
    stops after ``max_shares`` re-shares or once a slot falls after ``ends_on`` (a date in
    the workspace's zone). ``variations`` are other texts of the first part, taken in turn
    with the post's own (re-share n uses text n modulo their number, the post's own being
    text 0), because some platforms refuse a post identical to one they already have.

    Status: active <-> paused; active | paused -> ended (final).
    ``next_check_at`` is when the recycler looks at it next; ``note`` says why the last
    look made nothing ({"code", "message"}), empty once a re-share is made.
    """

    class Status(models.TextChoices):
        ACTIVE = "active"
        PAUSED = "paused"
        ENDED = "ended"

    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="evergreen_posts"
    )
    source = models.ForeignKey(
        "publications.Publication", on_delete=models.CASCADE, related_name="evergreen"
    )
    every_days = models.PositiveIntegerField(
        default=28,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_EVERGREEN_DAYS)],
        help_text="Shared again this many days after it last went out.",
    )
    min_gap_days = models.PositiveIntegerField(
        default=7,
        validators=[MaxValueValidator(MAX_EVERGREEN_DAYS)],
        help_text="Never again on an account within this many days of its last time there.",
    )
    max_shares = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)], help_text="Blank: no limit."
    )
    ends_on = models.DateField(null=True, blank=True, help_text="No re-share after this day.")
    variations = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.ACTIVE)
    shares_made = models.PositiveIntegerField(default=0)
    next_check_at = models.DateTimeField(null=True, blank=True)
    note = models.JSONField(default=dict, blank=True)
    paused_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = EvergreenQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source"], name="evergreen_one_per_post"),
            models.CheckConstraint(
                condition=models.Q(status__in=["active", "paused", "ended"]),
                name="evergreen_status_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(every_days__gte=1), name="evergreen_every_positive"
            ),
        ]
        indexes = [
            # The recycler's sweep: active ones whose next look is due, soonest first.
            models.Index(
                fields=["next_check_at"],
                condition=models.Q(status="active"),
                name="evergreen_due",
            ),
            models.Index(fields=["workspace", "status"], name="evergreen_ws_status"),
        ]

    def __str__(self) -> str:
        return f"Evergreen {self.pk} of publication {self.source_id} ({self.status})"

    def texts(self, own: str) -> list[str]:
        """The texts taken in turn: the post's own first, then each variation."""
        return [own, *[str(text) for text in self.variations]]

    @property
    def is_over_limit(self) -> bool:
        return self.max_shares is not None and self.shares_made >= self.max_shares


class EvergreenShare(models.Model):
    """One turn of an evergreen post: its slot and, when made, the new publication.

    Status: made (a publication was created for the slot; in review when its author's
    posts need approval) -> withdrawn (the evergreen post was paused or stopped before it
    went out) | skipped (a person skipped it). A turn can also be skipped when made
    (``reason``: every destination would refuse the repeat). ``left_out``: destinations
    not sent to, each {"account", "handle", "platform", "reason"}.
    """

    class Status(models.TextChoices):
        MADE = "made"
        SKIPPED = "skipped"
        WITHDRAWN = "withdrawn"

    evergreen = models.ForeignKey(EvergreenPost, on_delete=models.CASCADE, related_name="shares")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    number = models.PositiveIntegerField(help_text="1 for the first re-share.")
    slot_at = models.DateTimeField()
    publication = models.ForeignKey(
        "publications.Publication",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="evergreen_shares",
    )
    text = models.TextField(blank=True, help_text="The first part's text it was given.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.MADE)
    reason = models.JSONField(default=dict, blank=True)
    left_out = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        ordering = ["evergreen_id", "number"]
        constraints = [
            # Two recyclers racing on one post cannot both make its n-th turn, nor two
            # re-shares for one slot (a withdrawn or skipped turn gives its slot back).
            models.UniqueConstraint(fields=["evergreen", "number"], name="evergreen_share_once"),
            models.UniqueConstraint(
                fields=["evergreen", "slot_at"],
                condition=models.Q(status="made"),
                name="evergreen_share_one_per_slot",
            ),
        ]

    def __str__(self) -> str:
        return f"Evergreen {self.evergreen_id} share {self.number} ({self.status})"
