"""Writes of the analytics app: schedules started by domain events, samples recorded (a new
row each time), the gaps that say "not offered", and the per-platform read budget."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F

from apps.accounts.models import SocialAccount
from apps.analytics.cadence import FIRST_READ_AFTER, FOLLOWERS_EVERY, next_post_sync
from apps.analytics.models import (
    FollowersSample,
    FollowersSchedule,
    MetricGap,
    MetricsSchedule,
    PostMetricsSample,
    ReadBudget,
)
from apps.common import events
from apps.common.db_clock import db_now
from apps.providers.metrics import FOLLOWERS, Followers, PostMetrics
from apps.renditions.models import Rendition

# What "engagement" adds up (the selectors rank by the same).
ENGAGEMENT_METRICS = ("likes", "replies", "reposts")


def metrics_schedule_start(*, rendition: Rendition) -> MetricsSchedule | None:
    """Start reading a newly published rendition's metrics (its first read a few minutes
    after it went live), and its account's followers. Idempotent: a rendition reconciled
    or resolved as published again keeps its schedule. Runs in the publishing transaction
    (subscribed in_transaction), so a published rendition never lacks its schedule."""
    if not rendition.provider_post_id or rendition.published_at is None:
        return None
    schedule, _ = MetricsSchedule.objects.get_or_create(
        rendition=rendition,
        defaults={
            "workspace_id": rendition.workspace_id,
            "social_account_id": rendition.social_account_id,
            "platform": rendition.platform,
            "published_at": rendition.published_at,
            "next_sync_at": max(rendition.published_at + FIRST_READ_AFTER, db_now()),
        },
    )
    followers_schedule_start(account=rendition.social_account)
    return schedule


def followers_schedule_start(*, account: SocialAccount) -> FollowersSchedule:
    """Read the account's followers daily from now on (a reconnect resumes a stopped one)."""
    schedule, created = FollowersSchedule.objects.get_or_create(
        social_account=account,
        defaults={
            "workspace_id": account.workspace_id,
            "platform": account.platform,
            "next_sync_at": db_now(),
        },
    )
    if not created and schedule.next_sync_at is None:
        schedule.next_sync_at = db_now()
        schedule.save(update_fields=["next_sync_at", "updated_at"])
    return schedule


def daily_budget(platform: str) -> int | None:
    """The platform's daily read units (ANALYTICS_DAILY_READ_BUDGET), None: unbounded."""
    budget = settings.ANALYTICS_DAILY_READ_BUDGET.get(platform)
    return None if budget is None else int(budget)


def read_budget_spend(*, platform: str, units: int) -> bool:
    """Spend `units` of today's (UTC, database clock) budget of the platform; False when
    it would go past the budget, and then nothing is spent. One guarded UPDATE: two syncs
    at once never overspend."""
    budget = daily_budget(platform)
    if budget is None:
        return True
    day = db_now().date()
    ReadBudget.objects.get_or_create(platform=platform, day=day)
    spent = ReadBudget.objects.filter(platform=platform, day=day, used__lte=budget - units).update(
        used=F("used") + units
    )
    return spent == 1


@transaction.atomic
def post_sample_record(
    *, schedule: MetricsSchedule, metrics: PostMetrics, now: datetime
) -> PostMetricsSample | None:
    """Add the read as a new sample row (none when it holds no value at all: a missing
    permission), note the metrics it lacks (and forget the gaps it filled), and move the
    schedule on by the cadence (stopped past 90 days)."""
    sample = None
    if any(value is not None for value in metrics.values().values()) or metrics.extra:
        sample = PostMetricsSample.objects.create(
            workspace_id=schedule.workspace_id,
            rendition_id=schedule.rendition_id,
            social_account_id=schedule.social_account_id,
            platform=schedule.platform,
            sampled_at=now,
            extra=dict(metrics.extra),
            **metrics.values(),
        )
    _gaps_record(
        account_id=schedule.social_account_id,
        workspace_id=schedule.workspace_id,
        platform=schedule.platform,
        gaps=metrics.gaps,
        checked=list(metrics.values()),
    )
    _engagement_announce(schedule=schedule, metrics=metrics)
    next_at = next_post_sync(schedule.published_at, now)
    MetricsSchedule.objects.filter(pk=schedule.pk).update(
        next_sync_at=next_at,
        last_synced_at=now,
        syncs=F("syncs") + 1,
        last_error=None,
        stopped_reason="" if next_at else "age",
        updated_at=now,
    )
    return sample


def _engagement_announce(*, schedule: MetricsSchedule, metrics: PostMetrics) -> None:
    """Emit post.engagement_reached for each threshold this read reached beyond the last
    one announced (in the sample's transaction: the webhook outbox commits with it)."""
    value = sum(metrics.values().get(name) or 0 for name in ENGAGEMENT_METRICS)
    reached = [
        t
        for t in settings.ANALYTICS_ENGAGEMENT_THRESHOLDS
        if schedule.engagement_notified < t <= value
    ]
    if not reached:
        return
    # Guarded: of two reads at once, only the one that moves the mark announces.
    moved = MetricsSchedule.objects.filter(
        pk=schedule.pk, engagement_notified=schedule.engagement_notified
    ).update(engagement_notified=max(reached))
    if not moved:
        return
    schedule.engagement_notified = max(reached)
    for threshold in reached:
        events.emit(
            events.POST_ENGAGEMENT_REACHED,
            rendition=schedule.rendition,
            threshold=threshold,
            engagement=value,
        )


@transaction.atomic
def followers_sample_record(
    *, schedule: FollowersSchedule, read: Followers, now: datetime
) -> FollowersSample | None:
    """Add the follower count as a new row (or note that it is not offered), and read it
    again a day later."""
    sample = None
    if read.count is not None:
        sample = FollowersSample.objects.create(
            workspace_id=schedule.workspace_id,
            social_account_id=schedule.social_account_id,
            platform=schedule.platform,
            sampled_at=now,
            followers=read.count,
        )
    _gaps_record(
        account_id=schedule.social_account_id,
        workspace_id=schedule.workspace_id,
        platform=schedule.platform,
        gaps={FOLLOWERS: read.gap} if read.gap else {},
        checked=[FOLLOWERS],
        detail=read.detail,
    )
    FollowersSchedule.objects.filter(pk=schedule.pk).update(
        next_sync_at=now + FOLLOWERS_EVERY, last_synced_at=now, last_error=None, updated_at=now
    )
    return sample


def _gaps_record(
    *,
    account_id: int,
    workspace_id: int,
    platform: str,
    gaps: dict[str, str],
    checked: list[str],
    detail: str = "",
) -> None:
    """Upsert one gap row per missing metric; delete the rows of metrics now read."""
    for metric, reason in gaps.items():
        MetricGap.objects.update_or_create(
            social_account_id=account_id,
            metric=metric,
            defaults={
                "workspace_id": workspace_id,
                "platform": platform,
                "reason": reason,
                "detail": detail[:300],
            },
        )
    present = [name for name in checked if name not in gaps]
    if present:
        MetricGap.objects.filter(social_account_id=account_id, metric__in=present).delete()


def schedule_failed(
    *, schedule: MetricsSchedule | FollowersSchedule, error: dict, retry_in: timedelta | None
) -> None:
    """A read of this post or account failed for a reason of its own (a deleted post, a
    revoked permission): keep the error, and read it again after `retry_in` (None: stop)."""
    now = db_now()
    fields: dict = {"last_error": error, "updated_at": now}
    fields["next_sync_at"] = now + retry_in if retry_in is not None else None
    if isinstance(schedule, MetricsSchedule) and retry_in is None:
        fields["stopped_reason"] = str(error.get("code") or error.get("kind") or "error")[:32]
    type(schedule).objects.filter(pk=schedule.pk).update(**fields)
