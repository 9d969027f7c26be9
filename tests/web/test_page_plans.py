"""The posts list and the calendar read what they show: with many idle tenants and a
year of history in the tables, no table is read whole and each scan stays small."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from apps.publications.models import Publication
from apps.web.calendar_cards import CARDS_PER_AGENDA_DAY, CARDS_PER_HOUR
from loadtest.bench_pages import fill
from tests.factories import PublicationFactory, SocialAccountFactory
from tests.plans import BIG_TABLES, analyze, assert_bounded, crowd, reads

pytestmark = pytest.mark.django_db


@pytest.fixture
def crowded(workspace_a):
    """20 idle tenants of 60 posts ahead and 30 behind, and workspace A with 800 posts
    ahead and 600 published ones behind (two destinations each)."""
    now = timezone.now()
    crowd(organizations=20, posts=60, now=now)
    accounts = [SocialAccountFactory(workspace=workspace_a) for _ in range(2)]
    fill(workspace_a, accounts, 800, start=now + timedelta(hours=1))
    fill(
        workspace_a,
        accounts,
        600,
        start=now - timedelta(days=365),
        span=timedelta(days=360),
        published=True,
    )
    analyze(*BIG_TABLES)
    return now


def test_the_posts_list_pages_in_its_order_without_offsets(as_alice, workspace_a):
    """Upcoming soonest first, then the rest most recent first (by its time, else when it
    was written): cancelled upcoming posts, past ones and drafts merged in that order."""
    now = timezone.now()
    upcoming = [
        PublicationFactory(
            workspace=workspace_a, status="scheduled", scheduled_at=now + timedelta(days=d)
        )
        for d in (3, 1, 2)
    ]
    cancelled = PublicationFactory(
        workspace=workspace_a, status="cancelled", scheduled_at=now + timedelta(days=5)
    )
    past = [
        PublicationFactory(
            workspace=workspace_a, status="published", scheduled_at=now - timedelta(days=d)
        )
        for d in (2, 9)
    ]
    draft = PublicationFactory(workspace=workspace_a, status="draft", scheduled_at=None)
    Publication.objects.filter(pk=draft.pk).update(created_at=now - timedelta(days=5))
    expected = [
        upcoming[1].pk,
        upcoming[2].pk,
        upcoming[0].pk,
        cancelled.pk,
        past[0].pk,
        draft.pk,
        past[1].pk,
    ]
    seen: list[int] = []
    url = "/w/ws-a/posts/"
    from apps.web import post_list

    for _ in range(10):
        response = as_alice.get(url)
        page = response.context["page"]
        seen += [p.pk for p in page.posts]
        if not page.next_cursor:
            break
        url = f"/w/ws-a/posts/?after={page.next_cursor}"
    assert post_list.PAGE_SIZE == 25
    assert seen == expected
    # Pages of two, through the same cursors.
    seen = []
    after = None
    for _ in range(10):
        page = post_list.read_page(
            Publication.objects.for_workspace(workspace_a), now=now, after=after, size=2
        )
        seen += [p.pk for p in page.posts]
        assert len(page.posts) <= 2
        after = page.next_cursor
        if after is None:
            break
    assert seen == expected


def test_a_cursor_that_is_not_ours_starts_over(as_alice, workspace_a):
    for value in ("x", "u.1.2.3", "r.-99999999999999999999999.1", "u.abc.1", "r.1."):
        assert as_alice.get(f"/w/ws-a/posts/?after={value}").status_code == 200


def test_the_posts_list_and_the_calendar_read_what_they_show(as_alice, crowded):
    """The list reads a page, not the workspace; the calendar what its cells show."""
    first = as_alice.get("/w/ws-a/posts/")
    after = first.context["page"].next_cursor
    assert after
    scans = reads(lambda: as_alice.get("/w/ws-a/posts/"), BIG_TABLES)
    scans += reads(lambda: as_alice.get(f"/w/ws-a/posts/?after={after}"), BIG_TABLES)
    # Into the history: past the last upcoming post.
    last = Publication.objects.filter(workspace__slug="ws-a", scheduled_at__gt=crowded).order_by(
        "-scheduled_at", "-pk"
    )[0]
    micros = (last.scheduled_at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    into_history = f"/w/ws-a/posts/?after=u.{micros}.{last.pk}"
    response = as_alice.get(into_history)
    page = response.context["page"]
    assert all(page.is_past(p) for p in page.posts)
    scans += reads(lambda: as_alice.get(into_history), BIG_TABLES)
    assert scans
    assert_bounded(scans, max_rows=200)

    day = (crowded + timedelta(days=20)).date().isoformat()
    for view in ("month", "week", "agenda"):
        scans = reads(
            lambda v=view: as_alice.get(f"/w/ws-a/calendar/?view={v}&date={day}"), BIG_TABLES
        )
        assert scans
        # 800 posts a year is ~2 a day: a 6-week month counts ~100 of them.
        assert_bounded(scans, max_rows=200)


def test_a_full_week_reads_and_shows_what_fits_its_cells(as_alice, workspace_a, workspace_b):
    """Eight posts in every hour of a week (two destinations each), as many beside it in
    another tenant, and a year of posts around them: the week shows CARDS_PER_HOUR of
    each hour and reads their rows only (the count reads the week's posts through the
    index, nothing whole); the agenda shows CARDS_PER_AGENDA_DAY of each day the same way."""
    monday = datetime(2030, 1, 7, tzinfo=UTC)
    per_hour, hours = 8, 7 * 24
    for workspace in (workspace_a, workspace_b):
        accounts = [SocialAccountFactory(workspace=workspace) for _ in range(2)]
        fill(workspace, accounts, per_hour * hours, start=monday, span=timedelta(days=7))
        year = monday - timedelta(days=365)
        fill(workspace, accounts, 6000, start=year, span=timedelta(days=364), published=True)
    analyze(*BIG_TABLES)

    url = "/w/ws-a/calendar/?view=week&date=2030-01-09"
    week = as_alice.get(url).content.decode()
    shown = hours * CARDS_PER_HOUR
    assert week.count('<li class="cal-item ') == shown
    assert week.count(f">{per_hour - CARDS_PER_HOUR} more<") == hours
    scans = reads(lambda: as_alice.get(url), BIG_TABLES)
    assert_bounded(scans, max_rows=per_hour * hours)  # the count; no table read whole
    by_table = {t: sum(s.rows for s in scans if s.table == t) for t in BIG_TABLES}
    # The shown posts' rows (an index scan may read one past its last), not the week's
    # 1,344 posts and 2,688 destinations.
    assert by_table["publications_publicationsegment"] <= shown + 8
    assert by_table["renditions_rendition"] <= 2 * shown + 8
    assert "jobs_job" not in by_table or by_table["jobs_job"] == 0

    url = "/w/ws-a/calendar/?view=agenda&date=2030-01-07"
    agenda = as_alice.get(url).content.decode()
    shown = 7 * CARDS_PER_AGENDA_DAY  # the first week of the fortnight is full
    assert agenda.count('<li class="cal-item ') == shown
    assert agenda.count(f">{per_hour * 24 - CARDS_PER_AGENDA_DAY} more<") == 7
    scans = reads(lambda: as_alice.get(url), BIG_TABLES)
    assert_bounded(scans, max_rows=per_hour * hours)
    assert sum(s.rows for s in scans if s.table == "renditions_rendition") <= 2 * shown
