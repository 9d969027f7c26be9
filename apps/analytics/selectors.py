"""The one read of analytics every door shows (the API, MCP and the web pages): a post's
metrics over time, and a workspace's period: totals, top posts, followers over time, and
engagement by weekday and hour of posting in the workspace's zone.

A metric is reported with why it is missing when it is: the platform has no API for it,
the connection lacks the permission, or the operator switched the platform's reads off.
Each read costs in proportion to the posts of the period shown, never to the workspace's
whole history.
"""

from __future__ import annotations

import zoneinfo
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.conf import settings
from django.db.models import OuterRef, Subquery
from django.db.models.functions import Coalesce

from apps.accounts.models import SocialAccount, Workspace
from apps.analytics.models import (
    POST_METRICS,
    FollowersSample,
    MetricGap,
    MetricsSchedule,
    PostMetricsSample,
)
from apps.providers.metrics import FOLLOWERS, NOT_OFFERED, get_reader
from apps.publications.models import PublicationSegment
from apps.renditions.models import Rendition, RenditionSegment

DISABLED = "disabled"
# The longest period one analytics read covers.
MAX_PERIOD = timedelta(days=366)
_EARLIEST, _LATEST = date(1970, 1, 1), date(9998, 12, 31)
TOP_POSTS = 10
# Posts one period read takes at most (the earliest of the period first).
MAX_POSTS = 5000
SERIES_POINTS = 500  # a post's samples are at most a few dozen; a bound all the same


def engagement(values: dict[str, int | None]) -> int:
    """Likes, replies and reposts together (the counts every platform that offers any
    offers): what "top posts" and the heat-map rank by."""
    return sum(values.get(name) or 0 for name in ("likes", "replies", "reposts"))


def metric_states(account: SocialAccount) -> dict[str, dict]:
    """Per metric (and followers): {"offered": bool, "reason": str|None, "detail": str}.
    The account's recorded gaps first, then what the platform declares, then the
    operator's switch."""
    reader = get_reader(account.platform)
    states: dict[str, dict] = {}
    names = [*POST_METRICS, FOLLOWERS]
    for name in names:
        offered = reader is not None and (
            name in reader.offers.post if name != FOLLOWERS else reader.offers.followers
        )
        note = reader.offers.notes.get(name, "") if reader is not None else ""
        states[name] = {
            "offered": offered,
            "reason": None if offered else NOT_OFFERED,
            "detail": note if not offered else "",
        }
    for gap in MetricGap.objects.filter(social_account=account):
        if gap.metric in states:
            states[gap.metric] = {"offered": False, "reason": gap.reason, "detail": gap.detail}
    if account.platform not in settings.ANALYTICS_PLATFORMS:
        for state in states.values():
            state.update(offered=False, reason=DISABLED, detail="Reads are switched off here.")
    return states


def rendition_metrics(rendition: Rendition) -> dict:
    """A published destination's metrics: the latest values, the series of samples (oldest
    first), what is not offered and why, and when it is read next."""
    samples = list(
        PostMetricsSample.objects.filter(rendition=rendition).order_by("sampled_at", "id")[
            :SERIES_POINTS
        ]
    )
    schedule = MetricsSchedule.objects.filter(pk=rendition.pk).first()
    latest = samples[-1].values() if samples else dict.fromkeys(POST_METRICS)
    return {
        "rendition": rendition.pk,
        "platform": rendition.platform,
        "account": rendition.social_account_id,
        "published_at": rendition.published_at,
        "sampled_at": samples[-1].sampled_at if samples else None,
        "latest": latest,
        "extra": samples[-1].extra if samples else {},
        "metrics": metric_states(rendition.social_account),
        "series": [{"sampled_at": s.sampled_at, **s.values()} for s in samples],
        "next_sync_at": schedule.next_sync_at if schedule else None,
        "stopped_reason": schedule.stopped_reason if schedule else "",
    }


@dataclass(frozen=True)
class Period:
    """Whole days [start, end] in the workspace's zone."""

    start: date
    end: date
    zone: zoneinfo.ZoneInfo

    @property
    def since(self) -> datetime:
        return datetime.combine(self.start, time.min, self.zone)

    @property
    def until(self) -> datetime:
        return datetime.combine(self.end + timedelta(days=1), time.min, self.zone)


def zone_of(workspace: Workspace) -> zoneinfo.ZoneInfo:
    return zoneinfo.ZoneInfo(workspace.default_timezone or "UTC")


def period_of(workspace: Workspace, start: date | None, end: date | None, today: date) -> Period:
    """The period asked for (default: the 30 days up to today), bounded to MAX_PERIOD and
    to the years a post can be in (any date is a valid query: 0001-01-01 must not overflow)."""
    zone = zone_of(workspace)
    end = min(max(end or today, _EARLIEST), _LATEST)
    start = min(max(start or end - timedelta(days=29), _EARLIEST), _LATEST)
    if start > end:
        start, end = end, start
    if end - start > MAX_PERIOD:
        start = end - MAX_PERIOD
    return Period(start=start, end=end, zone=zone)


def _posts(workspace: Workspace, period: Period, accounts: list[int] | None) -> list[Rendition]:
    own_text = RenditionSegment.objects.filter(rendition=OuterRef("pk"), position=0).annotate(
        full=Coalesce("own_text", "source_segment__text")
    )
    source_text = PublicationSegment.objects.filter(
        publication=OuterRef("publication_id"), position=0
    )
    # Through the schedules (one per published post, indexed by workspace and time): the
    # read costs the period's posts, not the workspace's whole history.
    tracked = MetricsSchedule.objects.filter(
        workspace=workspace, published_at__gte=period.since, published_at__lt=period.until
    )
    if accounts:
        tracked = tracked.filter(social_account_id__in=accounts)
    ids = list(tracked.order_by("published_at").values_list("pk", flat=True)[:MAX_POSTS])
    posts = (
        Rendition.objects.for_workspace(workspace)
        .filter(pk__in=ids, status=Rendition.Status.PUBLISHED)
        .select_related("social_account")
        .annotate(
            first_text=Coalesce(
                Subquery(own_text.values("full")[:1]), Subquery(source_text.values("text")[:1])
            )
        )
        .order_by("published_at")
    )
    return list(posts)


def _latest_samples(rendition_ids: list[int]) -> dict[int, PostMetricsSample]:
    latest = (
        PostMetricsSample.objects.filter(rendition_id__in=rendition_ids)
        .order_by("rendition_id", "-sampled_at", "-id")
        .distinct("rendition_id")
    )
    return {sample.rendition_id: sample for sample in latest}


def workspace_analytics(
    workspace: Workspace, *, period: Period, accounts: list[int] | None = None
) -> dict:
    """The analytics page's and the API's read of a period (posts published in it)."""
    posts = _posts(workspace, period, accounts)
    latest = _latest_samples([p.pk for p in posts])
    totals: dict[str, int | None] = dict.fromkeys(POST_METRICS)
    rows = []
    heat: dict[tuple[int, int], list[int]] = defaultdict(list)
    for post in posts:
        sample = latest.get(post.pk)
        values = sample.values() if sample else dict.fromkeys(POST_METRICS)
        for name, value in values.items():
            if value is not None:
                totals[name] = (totals[name] or 0) + value
        local = post.published_at.astimezone(period.zone)  # type: ignore[union-attr]
        if sample is not None:
            heat[(local.weekday(), local.hour)].append(engagement(values))
        rows.append(_post_row(post, values, sample))
    top = sorted((r for r in rows if r["sampled_at"]), key=lambda r: r["engagement"], reverse=True)
    return {
        "from": period.start,
        "to": period.end,
        "timezone": str(period.zone),
        "posts": len(posts),
        "posts_read": len(latest),
        "totals": totals,
        "top_posts": top[:TOP_POSTS],
        "rows": rows,  # every post of the period (the web page's CSV export)
        "followers": _followers(workspace, period, accounts),
        "heatmap": [
            {"weekday": wd, "hour": hour, "posts": len(found), "engagement": sum(found)}
            for (wd, hour), found in sorted(heat.items())
        ],
        "best_times": best_times(heat),
    }


def _post_row(post: Rendition, values: dict, sample: PostMetricsSample | None) -> dict:
    return {
        "rendition": post.pk,
        "publication": post.publication_id,
        "platform": post.platform,
        "account": post.social_account_id,
        "handle": post.social_account.handle,
        "url": post.provider_url,
        "text": (getattr(post, "first_text", "") or "")[:140],
        "published_at": post.published_at,
        "sampled_at": sample.sampled_at if sample else None,
        "metrics": values,
        "engagement": engagement(values),
    }


def _followers(workspace: Workspace, period: Period, accounts: list[int] | None) -> list[dict]:
    samples = (
        FollowersSample.objects.for_workspace(workspace)
        .filter(sampled_at__gte=period.since, sampled_at__lt=period.until)
        .select_related("social_account")
        .order_by("social_account_id", "sampled_at")
    )
    if accounts:
        samples = samples.filter(social_account_id__in=accounts)
    series: dict[int, dict] = {}
    for sample in samples:
        entry = series.setdefault(
            sample.social_account_id,
            {
                "account": sample.social_account_id,
                "platform": sample.platform,
                "handle": sample.social_account.handle,
                "points": [],
            },
        )
        entry["points"].append({"sampled_at": sample.sampled_at, "followers": sample.followers})
    return list(series.values())


def best_times(heat: dict[tuple[int, int], list[int]], *, limit: int = 3) -> list[dict]:
    """The weekday and hour slots whose posts drew the most engagement on average (a slot
    needs a post read at least once); ties go to the slot with more posts."""
    ranked = sorted(
        heat.items(), key=lambda item: (sum(item[1]) / len(item[1]), len(item[1])), reverse=True
    )
    return [
        {"weekday": wd, "hour": hour, "average": round(sum(found) / len(found), 1)}
        for (wd, hour), found in ranked[:limit]
        if found
    ]


def workspace_best_times(workspace: Workspace, *, today: date, days: int = 90) -> list[dict]:
    """Best posting times from the last `days` of published posts (the queue's hint)."""
    period = period_of(workspace, today - timedelta(days=days - 1), today, today)
    return workspace_analytics(workspace, period=period)["best_times"]
