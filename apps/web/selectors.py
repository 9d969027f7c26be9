"""Reads the web pages share: organization usage, seats, and what needs attention."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count

from apps.accounts import membership
from apps.accounts.models import Organization
from apps.publications.models import Publication
from apps.publications.services import organization_storage_used
from apps.publishing.quotas import month_bounds


@dataclass(frozen=True)
class Usage:
    """An organization's use of its plan in the current UTC month."""

    publications: int
    quota: int
    seats_used: int
    seats: int
    inflight_cap: int
    period_start: datetime
    resets_at: datetime
    storage_used: int = 0
    storage_quota: int = 0  # 0: no limit

    @property
    def quota_left(self) -> int:
        return max(0, self.quota - self.publications)

    @property
    def seats_left(self) -> int:
        return max(0, self.seats - self.seats_used)


def organization_usage(*, organization: Organization, now: datetime) -> Usage:
    """Publications created this UTC month against monthly_post_quota (the count the
    quota check uses), the people holding a seat (an organization or workspace role) against
    seats, and media bytes against the storage quota."""
    start, end = month_bounds(now)
    publications = Publication.objects.filter(
        workspace__organization=organization, created_at__gte=start, created_at__lt=end
    ).count()
    return Usage(
        publications=publications,
        quota=organization.monthly_post_quota,
        seats_used=membership.seats(organization).members,
        seats=organization.seats,
        inflight_cap=organization.inflight_cap,
        period_start=start,
        resets_at=end,
        storage_used=organization_storage_used(organization),
        storage_quota=organization.storage_quota_bytes,
    )


def workspaces_with_counts(organization: Organization):
    return organization.workspaces.annotate(
        member_count=Count("memberships", distinct=True),
        account_count=Count("social_accounts", distinct=True),
    ).order_by("name")
