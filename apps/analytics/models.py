"""Metrics over time: one row per sample (never an overwrite), the schedules that say when
each post and account is read next, the metrics a platform or a permission does not offer,
and the per-platform read budget the syncs spend."""

from __future__ import annotations

from django.db import models
from django.db.models.functions import Now

from apps.accounts.models import SocialAccount, Workspace
from apps.common.querysets import WorkspaceQuerySet

# The post metrics every sample may carry; a null value means "not offered" (see MetricGap).
POST_METRICS = ("likes", "replies", "reposts", "views", "clicks")


class PostMetricsSample(models.Model):
    """A published rendition's public metrics as the platform showed them at `sampled_at`.

    Each read adds a row; a column is null when the platform (or the account's permission)
    does not offer that metric, never 0 for "unknown". `extra` keeps what a platform offers
    beyond the five shared metrics (quotes, saves, bookmarks, score...)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    rendition = models.ForeignKey(
        "renditions.Rendition", on_delete=models.CASCADE, related_name="metrics_samples"
    )
    social_account = models.ForeignKey(SocialAccount, on_delete=models.CASCADE, related_name="+")
    platform = models.CharField(max_length=32)
    sampled_at = models.DateTimeField(db_default=Now())
    likes = models.BigIntegerField(null=True, blank=True)
    replies = models.BigIntegerField(null=True, blank=True)
    reposts = models.BigIntegerField(null=True, blank=True)
    views = models.BigIntegerField(null=True, blank=True)
    clicks = models.BigIntegerField(null=True, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        indexes = [
            # A post's series (its chart) and its latest sample.
            models.Index(fields=["rendition", "sampled_at"], name="metrics_rendition_time"),
            # The analytics page: a workspace's samples in a period.
            models.Index(fields=["workspace", "sampled_at"], name="metrics_workspace_time"),
        ]

    def __str__(self) -> str:
        return f"metrics of rendition {self.rendition_id} at {self.sampled_at}"

    def values(self) -> dict[str, int | None]:
        return {name: getattr(self, name) for name in POST_METRICS}


class FollowersSample(models.Model):
    """A connected account's follower count at `sampled_at` (one row per daily read)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    social_account = models.ForeignKey(
        SocialAccount, on_delete=models.CASCADE, related_name="followers_samples"
    )
    platform = models.CharField(max_length=32)
    sampled_at = models.DateTimeField(db_default=Now())
    followers = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        indexes = [
            models.Index(fields=["social_account", "sampled_at"], name="followers_account_time"),
            models.Index(fields=["workspace", "sampled_at"], name="followers_workspace_time"),
        ]

    def __str__(self) -> str:
        return f"{self.followers} followers of account {self.social_account_id}"


class MetricGap(models.Model):
    """A metric an account cannot get, and why: the platform does not offer it, the token
    lacks the permission, the account type has no insights, or the operator switched the
    platform's reads off. Pages show "not offered" with the reason instead of a zero.
    One row per (account, metric), updated when the reason changes or goes away."""

    class Reason(models.TextChoices):
        NOT_OFFERED = "not_offered", "not offered by the platform"
        PERMISSION = "permission_missing", "the connection lacks the permission"
        ACCOUNT_TYPE = "account_type", "not offered for this kind of account"
        DISABLED = "disabled", "reads switched off by the operator"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    social_account = models.ForeignKey(
        SocialAccount, on_delete=models.CASCADE, related_name="metric_gaps"
    )
    platform = models.CharField(max_length=32)
    metric = models.CharField(max_length=32, help_text="A post metric, or 'followers'.")
    reason = models.CharField(max_length=32, choices=Reason.choices)
    detail = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["social_account", "metric"], name="metric_gap_one_per_account_metric"
            )
        ]

    def __str__(self) -> str:
        return f"{self.platform} {self.metric}: {self.reason}"


class MetricsSchedule(models.Model):
    """When a published rendition's metrics are read next: often in its first day, then
    daily, then weekly, and never after 90 days (`next_sync_at` null: stopped, see
    apps.analytics.cadence). Created when the rendition is published."""

    rendition = models.OneToOneField(
        "renditions.Rendition",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="metrics_schedule",
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    social_account = models.ForeignKey(SocialAccount, on_delete=models.CASCADE, related_name="+")
    platform = models.CharField(max_length=32)
    published_at = models.DateTimeField()
    next_sync_at = models.DateTimeField(null=True, blank=True)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    syncs = models.PositiveIntegerField(default=0)
    last_error = models.JSONField(null=True, blank=True)
    stopped_reason = models.CharField(max_length=32, blank=True)
    # The highest ANALYTICS_ENGAGEMENT_THRESHOLDS value announced for this post: a count
    # that falls and rises again (a Reddit score) announces nothing twice.
    engagement_notified = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        indexes = [
            # The sweep's and the sync's query: due schedules of a platform, oldest first.
            models.Index(
                fields=["platform", "next_sync_at"],
                name="metrics_schedule_due",
                condition=models.Q(next_sync_at__isnull=False),
            ),
            # The analytics period: a workspace's posts published between two instants.
            models.Index(fields=["workspace", "published_at"], name="metrics_schedule_period"),
        ]

    def __str__(self) -> str:
        return f"metrics schedule of rendition {self.rendition_id}"


class FollowersSchedule(models.Model):
    """When a connected account's follower count is read next (daily)."""

    social_account = models.OneToOneField(
        SocialAccount, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    platform = models.CharField(max_length=32)
    next_sync_at = models.DateTimeField(null=True, blank=True)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    last_error = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = WorkspaceQuerySet.as_manager()

    class Meta:
        indexes = [
            # The sweep's and the sync's query: due accounts of a platform.
            models.Index(
                fields=["platform", "next_sync_at"],
                name="followers_schedule_due",
                condition=models.Q(next_sync_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"followers schedule of account {self.social_account_id}"


class ReadBudget(models.Model):
    """Read units spent on one platform on one UTC day, across every tenant (a platform's
    quota belongs to the installation's app: YouTube's daily units, X's billed reads).
    Spent by an atomic guarded UPDATE, so concurrent syncs never overspend."""

    platform = models.CharField(max_length=32)
    day = models.DateField()
    used = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["platform", "day"], name="read_budget_platform_day")
        ]

    def __str__(self) -> str:
        return f"{self.platform} {self.day}: {self.used}"
