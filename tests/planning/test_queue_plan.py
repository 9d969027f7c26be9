"""The queue page reads each account's next posts, not every tenant's publications: with
idle organizations and a year of history in the tables, no table is read whole."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.planning.selectors import POSTS_SHOWN, account_queue
from loadtest.bench_pages import fill
from tests.factories import SocialAccountFactory
from tests.plans import BIG_TABLES, analyze, assert_bounded, crowd, reads

pytestmark = pytest.mark.django_db


def test_the_queue_reads_the_next_posts_of_its_accounts(client, alice, workspace_a):
    now = timezone.now()
    crowd(organizations=20, posts=60, now=now)
    accounts = [SocialAccountFactory(workspace=workspace_a, platform="sandbox") for _ in range(2)]
    # Each account: 2,000 posts ahead (the page shows the first 100) and 600 behind.
    fill(workspace_a, accounts, 2000, start=now + timedelta(hours=1))
    fill(
        workspace_a,
        accounts,
        600,
        start=now - timedelta(days=365),
        span=timedelta(days=360),
        published=True,
    )
    analyze(*BIG_TABLES)

    queue = account_queue(accounts[0], now=now, limit=100)
    assert len(queue.posts) == 100 and queue.more
    times = [post.at for post in queue.posts]
    assert times == sorted(times) and times[0] >= now
    shown = account_queue(accounts[0], now=now)
    assert len(shown.posts) == POSTS_SHOWN and shown.more
    assert [p.at for p in shown.posts] == times[:POSTS_SHOWN]

    client.force_login(alice)
    assert client.get("/w/ws-a/queue/").status_code == 200
    scans = reads(lambda: client.get("/w/ws-a/queue/"), BIG_TABLES)
    assert any(s.table == "renditions_rendition" for s in scans)
    # Each account's first scheduled renditions, their publications and texts.
    assert_bounded(scans, max_rows=300)
