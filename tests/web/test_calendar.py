"""The calendar (month and week, in the user's display zone) and the list of posts with
its filters."""

import zoneinfo
from datetime import datetime

import pytest

from apps.publications.models import Publication
from tests.factories import PublicationFactory, PublicationSegmentFactory, RenditionFactory

pytestmark = pytest.mark.django_db

WARSAW = zoneinfo.ZoneInfo("Europe/Warsaw")


def post(workspace, text: str, at: datetime | None, status=Publication.Status.SCHEDULED):
    publication = PublicationFactory(workspace=workspace, status=status, scheduled_at=at)
    PublicationSegmentFactory(publication=publication, text=text)
    RenditionFactory(publication=publication, status="scheduled" if at else "draft")
    return publication


@pytest.fixture
def in_warsaw(alice):
    alice.display_timezone = "Europe/Warsaw"
    alice.save()


def test_the_month_places_posts_on_their_local_day(as_alice, in_warsaw, workspace_a):
    # 23:30 UTC on 14 March is 00:30 on 15 March in Warsaw.
    post(workspace_a, "late night", datetime(2027, 3, 14, 23, 30, tzinfo=zoneinfo.ZoneInfo("UTC")))
    post(workspace_a, "next month", datetime(2027, 4, 20, 9, 0, tzinfo=WARSAW))
    response = as_alice.get("/w/ws-a/calendar/?date=2027-03-10")
    page = response.content.decode()
    assert response.status_code == 200
    assert "<h1>March 2027</h1>" in page
    assert "Times in <strong>Europe/Warsaw</strong>" in page
    day_15 = page.index('aria-label="Monday 15 March')
    assert page.index("late night") > day_15
    assert '<span class="time">00:30</span>' in page
    assert "next month" not in page


def test_the_week_view_shows_seven_days_and_moves_by_weeks(as_alice, in_warsaw, workspace_a):
    post(workspace_a, "wednesday post", datetime(2027, 3, 10, 18, 0, tzinfo=WARSAW))
    post(workspace_a, "following week", datetime(2027, 3, 16, 9, 0, tzinfo=WARSAW))
    page = as_alice.get("/w/ws-a/calendar/?view=week&date=2027-03-10").content.decode()
    assert "Week of 8 Mar 2027" in page
    assert page.count('role="listitem"') == 7
    assert "wednesday post" in page
    assert "following week" not in page
    assert "?view=week&amp;date=2027-03-15" in page  # next
    assert "?view=week&amp;date=2027-03-01" in page  # previous


def test_the_calendar_offers_a_quick_move_to_publishers_only(as_alice, as_vera, workspace_a):
    publication = post(workspace_a, "movable", datetime(2030, 1, 7, 9, 0, tzinfo=WARSAW))
    move = f"/w/ws-a/posts/{publication.pk}/reschedule/?next="
    assert move in as_alice.get("/w/ws-a/calendar/?date=2030-01-07").content.decode()
    assert move not in as_vera.get("/w/ws-a/calendar/?date=2030-01-07").content.decode()


def test_the_quick_move_form_comes_as_a_fragment_for_htmx(as_alice, workspace_a):
    publication = post(workspace_a, "movable", datetime(2030, 1, 7, 9, 0, tzinfo=WARSAW))
    response = as_alice.get(
        f"/w/ws-a/posts/{publication.pk}/reschedule/",
        {"next": "/w/ws-a/calendar/"},
        HTTP_HX_REQUEST="true",
    )
    page = response.content.decode()
    assert "<html" not in page
    assert 'value="2030-01-07"' in page
    assert 'value="08:00"' in page  # alice reads UTC
    assert f'name="revision" value="{publication.revision}"' in page


def test_a_bad_date_falls_back_to_today(as_alice, workspace_a):
    assert as_alice.get("/w/ws-a/calendar/?date=nonsense").status_code == 200


def test_the_list_filters_by_status_and_local_date_range(as_alice, in_warsaw, workspace_a):
    post(workspace_a, "early march", datetime(2027, 3, 2, 10, 0, tzinfo=WARSAW))
    post(workspace_a, "mid march", datetime(2027, 3, 15, 0, 30, tzinfo=WARSAW))
    post(workspace_a, "a draft", None, status=Publication.Status.DRAFT)
    failed = post(workspace_a, "it failed", datetime(2027, 3, 16, 10, 0, tzinfo=WARSAW))
    Publication.objects.filter(pk=failed.pk).update(status=Publication.Status.FAILED)

    everything = as_alice.get("/w/ws-a/posts/").content.decode()
    assert all(t in everything for t in ("early march", "mid march", "a draft", "it failed"))

    ranged = as_alice.get("/w/ws-a/posts/?start=2027-03-15&end=2027-03-15").content.decode()
    assert "mid march" in ranged
    assert "early march" not in ranged
    assert "a draft" not in ranged

    failed_only = as_alice.get("/w/ws-a/posts/?status=failed").content.decode()
    assert "it failed" in failed_only
    assert "mid march" not in failed_only


def test_the_list_explains_a_bad_range(as_alice, workspace_a):
    response = as_alice.get("/w/ws-a/posts/?start=2027-03-15&end=2027-03-01")
    assert response.status_code == 400
    assert "The end is before the start." in response.content.decode()


def test_the_list_pages(as_alice, workspace_a):
    for i in range(27):
        post(workspace_a, f"post {i}", None, status=Publication.Status.DRAFT)
    first = as_alice.get("/w/ws-a/posts/").content.decode()
    assert "Page 1 of 2" in first
    assert "page=2" in first
    assert as_alice.get("/w/ws-a/posts/?page=2").status_code == 200
