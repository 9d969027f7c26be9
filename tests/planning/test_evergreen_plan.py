"""A look at an evergreen post reads that post's own rows and its accounts' next posts,
not every tenant's publications: with idle organizations and a year of history in the
tables, no table is read whole."""

from datetime import time, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.planning.evergreen import EvergreenSettings, evergreen_mark
from apps.planning.models import EvergreenShare
from apps.planning.recycling import evergreen_recycle_due
from apps.planning.services import queue_slots_replace
from apps.publications.models import Publication
from loadtest.bench_pages import fill
from tests.factories import SocialAccountFactory
from tests.plans import BIG_TABLES, analyze, assert_bounded, crowd, scans_of

pytestmark = pytest.mark.django_db


def test_the_sweep_reads_the_due_posts_and_their_accounts_only(workspace_a, alice):
    now = timezone.now()
    crowd(organizations=10, posts=40, now=now)
    account = SocialAccountFactory(workspace=workspace_a, platform="sandbox")
    fill(
        workspace_a,
        [account],
        300,
        start=now - timedelta(days=365),
        span=timedelta(days=360),
        published=True,
    )
    queue_slots_replace(
        workspace=workspace_a, slots=[(day, time(9)) for day in range(7)], timezone="UTC"
    )
    source = Publication.objects.for_workspace(workspace_a).order_by("pk").first()
    evergreen_mark(
        workspace=workspace_a, publications=[source], actor=alice, settings=EvergreenSettings()
    )
    analyze(*BIG_TABLES)

    with CaptureQueriesContext(connection) as captured:
        evergreen_recycle_due()
    # Its reads only: EXPLAIN ANALYZE runs a statement, and the writes would run twice.
    selects = [q["sql"] for q in captured.captured_queries if q["sql"].startswith("SELECT")]
    scans = [scan for sql in selects for scan in scans_of(sql, BIG_TABLES)]

    assert EvergreenShare.objects.filter(status="made").count() == 1
    assert any(s.table == "renditions_rendition" for s in scans)
    assert_bounded(scans, max_rows=400)
