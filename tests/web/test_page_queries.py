"""What the busiest pages cost in SQL statements, pinned: the queue, the posting slots,
the series list and a series' page, a post's page and the calendar's week. Each is read
once to warm the session, then counted; more accounts, posts or series must not add a
statement (an N+1 shows up here), and the counts themselves are pinned so that a new
query on one of these pages is a decision, not an accident.

The common part of every workspace page (7 statements for an editor): the session, the
user, the workspace (with its organization), the user's role in it (read once a request:
the organization role, then the workspace membership), and, in the page's frame, the
workspaces to switch to and the organizations the user manages.
"""

from datetime import time, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.planning.services import queue_slots_replace, queued_publication_create
from apps.series.occurrences import series_materialize
from apps.series.services import series_create
from apps.web.forms.common import zone_names
from tests.factories import (
    PublicationFactory,
    PublicationSegmentFactory,
    RenditionFactory,
    SocialAccountFactory,
)

pytestmark = pytest.mark.django_db

QUEUE = "/w/ws-a/queue/"
SERIES = "/w/ws-a/series/"
EVERY_DAY_AT_9 = [(day, time(9)) for day in range(7)]


def _count(client, url: str) -> tuple[int, str]:
    """The statements of one warm request of `url`, and its page."""
    assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured.captured_queries), response.content.decode()


def _queued_account(workspace, user, *, posts: int, own_slots: bool = False):
    account = SocialAccountFactory(workspace=workspace, platform="sandbox")
    if own_slots:
        queue_slots_replace(
            workspace=workspace, account=account, slots=EVERY_DAY_AT_9, timezone="UTC"
        )
    for i in range(posts):
        queued_publication_create(
            workspace=workspace,
            author=user,
            segments=[{"text": f"Queued {i} of @{account.handle}"}],
            destinations=[{"account": account.pk}],
        )
    return account


COMMON = 7
# The accounts, their schedules, their slots, their next posts (one UNION), those posts
# and their texts. (Before: 5 an account, and the role read again for each permission.)
QUEUE_QUERIES = COMMON + 6


def test_the_queue_costs_the_same_for_one_account_or_four(as_bob, bob, workspace_a):
    queue_slots_replace(workspace=workspace_a, slots=EVERY_DAY_AT_9, timezone="Europe/Warsaw")
    _queued_account(workspace_a, bob, posts=2)
    one, _ = _count(as_bob, QUEUE)
    for i in range(3):
        _queued_account(workspace_a, bob, posts=3, own_slots=i == 0)
    four, page = _count(as_bob, QUEUE)
    assert page.count('class="queue-item') == 2 + 3 * 3
    assert (one, four) == (QUEUE_QUERIES, QUEUE_QUERIES)


def _series(workspace, user, accounts, name: str):
    series = series_create(
        workspace=workspace,
        name=name,
        template={
            "segments": [{"text": f"{name} says hello."}],
            "destinations": [{"account": a.pk} for a in accounts],
        },
        rrule="FREQ=DAILY",
        dtstart=f"{timezone.now():%Y-%m-%d}T09:00",
        timezone="Europe/Warsaw",
        created_by=user,
    )
    series_materialize(series=series)
    return series


# The series with the form's destinations (the zone is a text field: no query).
SERIES_LIST_QUERIES = COMMON + 2


def test_the_series_list_costs_the_same_for_one_series_or_four(as_bob, bob, workspace_a):
    accounts = [SocialAccountFactory(workspace=workspace_a) for _ in range(2)]
    _series(workspace_a, bob, accounts, "First")
    one, page = _count(as_bob, SERIES)
    for name in ("Second", "Third", "Fourth"):
        _series(workspace_a, bob, accounts, name)
    four, page = _count(as_bob, SERIES)
    assert page.count('<td data-label="Zone">') == 4
    # ~600 zone names are not written into the page: the field fetches them once.
    assert page.count("<option") < 5 and 'hx-get="/zones/"' in page
    assert (one, four) == (SERIES_LIST_QUERIES, SERIES_LIST_QUERIES)


# The series, the occurrences the preview already made, the latest occurrences with
# their posts.
SERIES_PAGE_QUERIES = COMMON + 3


def test_a_series_page_costs_the_same_however_many_posts_it_made(as_bob, bob, workspace_a):
    accounts = [SocialAccountFactory(workspace=workspace_a) for _ in range(3)]
    series = _series(workspace_a, bob, accounts, "Daily")
    count, page = _count(as_bob, f"/w/ws-a/series/{series.pk}/")
    assert series.occurrences.count() > 20 and page.count("<tr") > 20
    assert count == SERIES_PAGE_QUERIES


# The post with everything it shows (one JSON read), its destinations' pending publish
# jobs, the platforms' validations, the approval rule.
POST_PAGE_QUERIES = COMMON + 4


def test_a_posts_page_costs_the_same_for_one_destination_or_three(as_bob, workspace_a):
    accounts = [SocialAccountFactory(workspace=workspace_a) for _ in range(3)]
    one_post = _scheduled(workspace_a, accounts[:1])
    three = _scheduled(workspace_a, accounts)
    one, _ = _count(as_bob, f"/w/ws-a/posts/{one_post.pk}/")
    many, page = _count(as_bob, f"/w/ws-a/posts/{three.pk}/")
    assert page.count(f"@{accounts[2].handle}") >= 1
    assert (one, many) == (POST_PAGE_QUERIES, POST_PAGE_QUERIES)


def _scheduled(workspace, accounts):
    publication = PublicationFactory(
        workspace=workspace, status="scheduled", scheduled_at=timezone.now() + timedelta(days=2)
    )
    PublicationSegmentFactory(publication=publication, text="Going out soon")
    for account in accounts:
        RenditionFactory(publication=publication, social_account=account, status="scheduled")
    return publication


# The target's schedule and its slots, the best times (the last 90 days' metrics and
# followers), the accounts to switch to.
SLOTS_QUERIES = COMMON + 5


def test_the_slots_page_does_not_write_every_zone_into_the_page(as_bob, workspace_a):
    queue_slots_replace(workspace=workspace_a, slots=EVERY_DAY_AT_9, timezone="Europe/Warsaw")
    for _ in range(3):
        SocialAccountFactory(workspace=workspace_a)
    count, page = _count(as_bob, "/w/ws-a/queue/slots/")
    assert page.count("<option") == 0 and 'list="id_timezone-names"' in page
    assert count == SLOTS_QUERIES


def test_a_zone_typed_on_the_slots_page_is_checked_against_the_names(as_bob, workspace_a):
    queue_slots_replace(workspace=workspace_a, slots=EVERY_DAY_AT_9, timezone="")
    refused = as_bob.post("/w/ws-a/queue/slots/", {"op": "zone", "timezone": "Mars/Olympus"})
    assert refused.status_code == 400 and "Select a valid choice" in refused.content.decode()
    saved = as_bob.post("/w/ws-a/queue/slots/", {"op": "zone", "timezone": "Asia/Tokyo"})
    assert saved.status_code == 302
    page = as_bob.get("/w/ws-a/queue/slots/").content.decode()
    assert 'name="timezone" value="Asia/Tokyo"' in page


def test_the_zone_names_are_one_list_the_browser_keeps(client):
    response = client.get("/zones/")
    assert response.status_code == 200
    assert "max-age=86400" in response["Cache-Control"]
    body = response.content.decode()
    assert body.count("<option ") == len(zone_names()) > 400
    assert '<option value="Europe/Warsaw">' in body and '<option value="UTC">' in body


# The first posts of each hour, the posts shown, their series, texts, media and
# destinations (with their accounts, two queries), the count per quarter hour: see
# tests/web/test_calendar.py for a busy week costing what a quiet one does.
WEEK_QUERIES = COMMON + 7


def test_the_week_view_statements_are_pinned(as_bob, workspace_a):
    accounts = [SocialAccountFactory(workspace=workspace_a) for _ in range(2)]
    post = _scheduled(workspace_a, accounts)
    day = timezone.localtime(post.scheduled_at).date()
    count, page = _count(as_bob, f"/w/ws-a/calendar/?view=week&date={day:%Y-%m-%d}")
    assert f'id="cal-{post.pk}"' in page
    assert count == WEEK_QUERIES
