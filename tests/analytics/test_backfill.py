"""The migration that starts reading what existed before analytics: connected accounts and
destinations published in the last 90 days (its statements, run on arranged rows)."""

import importlib
from datetime import timedelta

import pytest
from django.db import connection

from apps.accounts.models import SocialAccount
from apps.analytics.models import FollowersSchedule, MetricsSchedule
from apps.common.db_clock import db_now
from apps.renditions.models import Rendition
from tests.factories import RenditionFactory, SocialAccountFactory

pytestmark = pytest.mark.django_db

backfill = importlib.import_module("apps.analytics.migrations.0004_backfill_schedules")


def test_it_schedules_connected_accounts_and_posts_of_the_last_90_days(workspace_a):
    connected = SocialAccountFactory(workspace=workspace_a)
    SocialAccountFactory(workspace=workspace_a, status=SocialAccount.Status.NEEDS_RECONNECT)
    recent, old = (
        RenditionFactory(
            publication__workspace=workspace_a,
            social_account=connected,
            status=Rendition.Status.PUBLISHED,
            provider_post_id=f"p{days}",
            published_at=db_now() - timedelta(days=days),
        )
        for days in (10, 100)
    )
    with connection.cursor() as cursor:
        for _ in range(2):  # ON CONFLICT: a second run adds nothing
            cursor.execute(backfill.ACCOUNTS)
            cursor.execute(backfill.RENDITIONS)
    assert list(FollowersSchedule.objects.values_list("social_account_id", flat=True)) == [
        connected.pk
    ]
    assert list(MetricsSchedule.objects.values_list("rendition_id", flat=True)) == [recent.pk]
    assert not MetricsSchedule.objects.filter(rendition=old).exists()
