"""The sweep and the analytics period read what is due or shown: with idle tenants and a
year of published posts, each with its schedule and samples, no table is read whole."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from apps.accounts.models import Workspace
from apps.analytics import selectors
from apps.analytics.jobs import analytics_sweep
from loadtest.bench_pages import fill
from tests.factories import SocialAccountFactory, WorkspaceFactory
from tests.plans import analyze, assert_bounded, reads

pytestmark = pytest.mark.django_db

TABLES = (
    "analytics_metricsschedule",
    "analytics_followersschedule",
    "analytics_postmetricssample",
    "renditions_rendition",
)


def _history(workspace: Workspace, posts: int) -> None:
    """A year of published posts, each with a schedule (read again in a week) and two
    samples."""
    account = SocialAccountFactory(workspace=workspace, platform="sandbox")
    now = timezone.now()
    fill(workspace, [account], posts, start=now - timedelta(days=365), published=True)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO analytics_metricsschedule (rendition_id, workspace_id,
                social_account_id, platform, published_at, next_sync_at, syncs,
                stopped_reason, engagement_notified, created_at, updated_at)
            SELECT id, workspace_id, social_account_id, platform, published_at,
                   now() + interval '7 days', 2, '', 0, now(), now()
              FROM renditions_rendition WHERE workspace_id = %s
            """,
            [workspace.pk],
        )
        cursor.execute(
            """
            INSERT INTO analytics_postmetricssample (workspace_id, rendition_id,
                social_account_id, platform, sampled_at, likes, replies, reposts, extra,
                created_at, updated_at)
            SELECT workspace_id, id, social_account_id, platform,
                   published_at + g * interval '1 hour', 5 * g, g, g, '{}', now(), now()
              FROM renditions_rendition, generate_series(1, 2) AS g
             WHERE workspace_id = %s
            """,
            [workspace.pk],
        )


def test_the_sweep_and_the_period_read_only_what_is_due_or_shown(workspace_a):
    for _ in range(5):
        _history(WorkspaceFactory(), 300)
    _history(workspace_a, 1200)
    analyze(*TABLES)

    # (The followers' schedules, one per account and a handful here, are too few to plan.)
    sweep = reads(analytics_sweep, ("analytics_metricsschedule",))
    assert sweep and analytics_sweep() == 0
    assert_bounded(sweep, max_rows=50)

    today = timezone.now().date()
    period = selectors.period_of(workspace_a, today - timedelta(days=29), today, today)
    result = selectors.workspace_analytics(workspace_a, period=period)
    assert 80 <= result["posts"] <= 120  # a month of a year's 1,200
    scans = reads(lambda: selectors.workspace_analytics(workspace_a, period=period), TABLES)
    assert any(s.table == "analytics_postmetricssample" for s in scans)
    assert_bounded(scans, max_rows=400)
