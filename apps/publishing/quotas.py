"""Quotas checked when work is accepted, never discovered at publish time (DESIGN §7).

- The organization's monthly quota counts publications created in the current UTC calendar
  month, across all its workspaces (drafts included: it is a creation quota).
- A per-account daily cap (the catalog's ``daily_cap``, e.g. Instagram 100/24 h) counts the
  account's renditions due on the target UTC day that will or did go out: scheduled,
  publishing, waiting, published, and failed ones with a retry pending or an ambiguous
  outcome. Drafts and cancelled ones do not count.

Both checks run with the organization row locked (``lock_organization``), so two requests
racing for the last unit are serialized: one gets it, the other is refused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta

from django.db.models import Q, QuerySet

from apps.accounts.models import Organization, SocialAccount, Workspace
from apps.common.errors import QuotaExceeded
from apps.providers.catalog import UnknownPlatform, get_capabilities
from apps.publications.models import Publication
from apps.renditions.models import Rendition

R = Rendition.Status

# Renditions that take a unit of an account's daily cap.
COUNTS_TOWARD_DAILY_CAP = Q(status__in=[R.SCHEDULED, R.PUBLISHING, R.WAITING, R.PUBLISHED]) | (
    Q(status=R.FAILED) & (Q(next_retry_at__isnull=False) | Q(ambiguous=True))
)


def lock_organization(workspace: Workspace) -> Organization:
    """Lock and return the workspace's organization row for the rest of the transaction."""
    return Organization.objects.select_for_update().get(pk=workspace.organization_id)


def month_bounds(now: datetime) -> tuple[datetime, datetime]:
    """[start, end) of the UTC calendar month containing now."""
    start = now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    end = (start + timedelta(days=32)).replace(day=1)
    return start, end


def day_bounds(instant: datetime) -> tuple[datetime, datetime]:
    """[start, end) of the UTC day containing instant."""
    start = datetime.combine(instant.astimezone(UTC).date(), time.min, tzinfo=UTC)
    return start, start + timedelta(days=1)


def month_usage(organization: Organization, now: datetime) -> QuerySet:
    """The organization's publications created this UTC month (count it under the lock)."""
    start, end = month_bounds(now)
    return Publication.objects.filter(
        workspace__organization=organization, created_at__gte=start, created_at__lt=end
    )


def check_monthly_quota(
    *, organization: Organization, now: datetime, used: int | None = None
) -> None:
    """Refuse one more publication when the organization has used its monthly quota
    (QuotaExceeded, code MONTHLY_QUOTA_EXCEEDED). ``used``: the count of ``month_usage``
    when the caller already has it."""
    start, end = month_bounds(now)
    if used is None:
        used = month_usage(organization, now).count()
    limit = organization.monthly_post_quota
    if used >= limit:
        raise QuotaExceeded(
            f"The organization has created {used} of its {limit} publications this month "
            f"({start:%Y-%m}, UTC); the quota resets on {end:%Y-%m-%d}.",
            code="MONTHLY_QUOTA_EXCEEDED",
            details={
                "limit": limit,
                "used": used,
                "period": f"{start:%Y-%m}",
                "resets_at": end.isoformat(),
            },
        )


def daily_cap(rendition: Rendition) -> int | None:
    """The account's posts-per-day cap from the catalog (None: the platform states none)."""
    try:
        return get_capabilities(rendition.platform).daily_cap
    except UnknownPlatform:
        return None


def check_daily_caps(*, renditions: Iterable[Rendition], paths: dict[int, str]) -> None:
    """Refuse scheduling these renditions when one would take its account past the daily
    cap on its target UTC day (QuotaExceeded, code DAILY_CAP_EXCEEDED, naming the account,
    the limit and the day; ``paths`` maps rendition id to its field path for the message).
    The renditions themselves are not counted as existing, so a reschedule within the same
    day never counts twice."""
    # Each rendition that has a time, with its (account, UTC day) key.
    keyed = [
        (r, (r.social_account_id, day_bounds(at)))
        for r in renditions
        if (at := r.effective_scheduled_at) is not None
    ]
    wanted = Counter(key for _rendition, key in keyed)
    ids = [r.pk for r, _key in keyed]
    for rendition, key in keyed:
        cap = daily_cap(rendition)
        if cap is None:
            continue
        start, end = key[1]
        used = (
            Rendition.objects.with_effective_scheduled_at()
            .filter(COUNTS_TOWARD_DAILY_CAP)
            .filter(
                social_account_id=rendition.social_account_id,
                effective_at__gte=start,
                effective_at__lt=end,
            )
            .exclude(pk__in=ids)
            .count()
        )
        if used + wanted[key] > cap:
            raise daily_cap_exceeded(
                account=rendition.social_account,
                used=used,
                cap=cap,
                day=start.date(),
                path=paths.get(rendition.pk, "destinations"),
            )


def daily_cap_exceeded(
    *, account: SocialAccount, used: int, cap: int, day: date, path: str
) -> QuotaExceeded:
    """The refusal of one more post on account's UTC day (code DAILY_CAP_EXCEEDED); path:
    the destination's field path ("destinations.N")."""
    return QuotaExceeded(
        f"{account.platform} account @{account.handle} already has {used} posts on "
        f"{day:%Y-%m-%d} (UTC); the platform allows {cap} a day.",
        code="DAILY_CAP_EXCEEDED",
        details={
            "field": f"{path}.account",
            "account": account.pk,
            "handle": account.handle,
            "platform": account.platform,
            "limit": cap,
            "used": used,
            "day": f"{day:%Y-%m-%d}",
        },
    )
