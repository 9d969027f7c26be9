"""The calendar (month, week with its hour grid, agenda; in the user's display zone),
moving posts on it, and the list of posts with its filters."""

import re
import zoneinfo
from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.jobs.models import Job
from apps.publications.models import Publication
from apps.publishing.services import publication_create, publication_reschedule
from apps.renditions.models import Rendition
from apps.series.models import Series, SeriesOccurrence
from apps.web.calendar_cards import CARDS_PER_AGENDA_DAY, CARDS_PER_DAY, CARDS_PER_HOUR
from tests.factories import (
    PublicationFactory,
    PublicationSegmentFactory,
    RenditionFactory,
    SegmentMediaFactory,
    SocialAccountFactory,
)

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
    assert page.count('<th scope="col" class="week-day') == 7
    assert page.count('<tr class="hour-row') == 24
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
    assert first.count('class="snippet"') == 25
    after = re.search(r'href="\?after=([^"]+)">Next', first).group(1)
    second = as_alice.get(f"/w/ws-a/posts/?after={after}").content.decode()
    assert second.count('class="snippet"') == 2
    assert "Next" not in second and "Back to the start" in second


# --- the week's hour grid across daylight-saving changes --------------------------------


def slots_of(page: str, day: str) -> list[str]:
    """The opening tags of the hour slots of a local day, top to bottom."""
    return re.findall(rf'<td class="slot[^"]*" data-drop-date="{day}"[^>]*>', page)


def test_a_spring_forward_day_has_23_hours_and_a_gap(as_alice, in_warsaw, workspace_a):
    # Europe/Warsaw skips 02:00-03:00 on Sunday 28 March 2027.
    post(workspace_a, "after the gap", datetime(2027, 3, 28, 3, 30, tzinfo=WARSAW))
    page = as_alice.get("/w/ws-a/calendar/?view=week&date=2027-03-24").content.decode()
    sunday = slots_of(page, "2027-03-28")
    assert len(sunday) == 23
    assert len(slots_of(page, "2027-03-27")) == 24
    assert 'data-drop-hour="2"' not in "".join(sunday)
    assert "23-hour day: clocks go forward" in page
    assert page.count("Skipped: clocks go forward") == 1
    assert page.count('<tr class="hour-row') == 24  # the other days keep their 02:00
    three = page.index('data-drop-date="2027-03-28" data-drop-hour="3"')
    assert three < page.index("after the gap") < page.index('data-drop-hour="4"', three)


def test_a_fall_back_day_has_25_hours_and_the_repeated_hour_twice(as_alice, in_warsaw, workspace_a):
    # Europe/Warsaw repeats 02:00-03:00 on Sunday 31 October 2027: CEST, then CET.
    second_pass = datetime(2027, 10, 31, 1, 30, tzinfo=zoneinfo.ZoneInfo("UTC"))  # 02:30 CET
    post(workspace_a, "second pass", second_pass)
    page = as_alice.get("/w/ws-a/calendar/?view=week&date=2027-10-27").content.decode()
    sunday = slots_of(page, "2027-10-31")
    assert len(sunday) == 25
    assert len(slots_of(page, "2027-10-30")) == 24
    assert "25-hour day: clocks go back" in page
    assert '<th scope="row" class="hour-col">02:00 CEST</th>' in page
    assert '<th scope="row" class="hour-col">02:00 CET</th>' in page
    repeated = page.index('data-drop-date="2027-10-31" data-drop-hour="2" data-drop-fold="1"')
    assert repeated < page.index("second pass") < page.index('data-drop-hour="3"', repeated)
    assert 'data-time="02:30" data-fold="1"' in page


# --- the agenda --------------------------------------------------------------------------


def test_the_agenda_groups_two_weeks_by_day(as_alice, in_warsaw, workspace_a):
    post(workspace_a, "monday late", datetime(2030, 1, 7, 18, 0, tzinfo=WARSAW))
    post(workspace_a, "monday early", datetime(2030, 1, 7, 8, 0, tzinfo=WARSAW))
    post(workspace_a, "friday", datetime(2030, 1, 11, 12, 0, tzinfo=WARSAW))
    post(workspace_a, "too late", datetime(2030, 1, 21, 0, 30, tzinfo=WARSAW))
    post(workspace_a, "before", datetime(2030, 1, 6, 23, 30, tzinfo=WARSAW))
    cancelled = post(workspace_a, "cancelled", datetime(2030, 1, 8, 9, 0, tzinfo=WARSAW))
    Publication.objects.filter(pk=cancelled.pk).update(status=Publication.Status.CANCELLED)

    page = as_alice.get("/w/ws-a/calendar/?view=agenda&date=2030-01-07").content.decode()
    assert "<h1>7 Jan – 20 Jan 2030</h1>" in page
    headings = re.findall(r'<h2 class="agenda-date">(.*?)<span', page)
    assert headings == ["Monday 7 January", "Friday 11 January"]
    assert page.index("monday early") < page.index("monday late") < page.index("friday")
    assert "2 posts" in page
    assert all(t not in page for t in ("too late", "before", "cancelled"))
    assert "?view=agenda&amp;date=2030-01-21" in page  # next two weeks
    assert "?view=agenda&amp;date=2029-12-24" in page  # previous


def test_the_agenda_names_today_and_says_when_nothing_is_planned(as_alice, workspace_a):
    today = timezone.now().date()
    post(workspace_a, "later today", timezone.now() + timedelta(minutes=30))
    page = as_alice.get("/w/ws-a/calendar/?view=agenda").content.decode()
    if (timezone.now() + timedelta(minutes=30)).date() == today:
        assert '<span class="agenda-relative">Today</span>' in page
    empty = as_alice.get("/w/ws-a/calendar/?view=agenda&date=2031-05-01").content.decode()
    assert "Nothing is planned from 1 May to 14 May 2031." in empty


# --- cards -------------------------------------------------------------------------------


def test_a_card_shows_platforms_a_thumbnail_a_series_marker_and_its_status(as_alice, workspace_a):
    publication = post(workspace_a, "with a picture", datetime(2030, 1, 7, 9, 0, tzinfo=WARSAW))
    segment = publication.segments.get()
    image = SegmentMediaFactory(segment=segment, alt_text="a red door").media
    mastodon = SocialAccountFactory(workspace=workspace_a, platform="mastodon", handle="toots")
    RenditionFactory(publication=publication, social_account=mastodon, status="scheduled")
    series = Series.objects.create(
        workspace=workspace_a, name="Mondays", rrule="FREQ=WEEKLY", timezone="UTC"
    )
    SeriesOccurrence.objects.create(
        series=series,
        workspace=workspace_a,
        local_start="2030-01-07T08:00:00",
        scheduled_at=publication.scheduled_at,
        publication=publication,
        status=SeriesOccurrence.Status.MATERIALIZED,
    )
    plain = post(workspace_a, "plain one", datetime(2030, 1, 8, 9, 0, tzinfo=WARSAW))

    page = as_alice.get("/w/ws-a/calendar/?date=2030-01-07").content.decode()
    card = page[page.index(f'id="cal-{publication.pk}"') : page.index(f'id="cal-{plain.pk}"')]
    mark = re.search(
        r'<span class="pf pf-mastodon has-icon" title="Mastodon"[^>]*><img[^>]*>', card
    )
    assert mark and "img/platforms/mastodon" in mark.group(0)
    assert '<span class="pf pf-sandbox has-icon"' in card
    assert "Sandbox, Mastodon" in card  # what a screen reader hears
    assert f'src="/w/ws-a/media/{image.pk}/" alt="a red door"' in card
    assert "From a series" in card
    assert '<span class="badge status-scheduled">Scheduled</span>' in card
    assert "@toots" in card
    rest = page[page.index(f'id="cal-{plain.pk}"') :]
    assert "From a series" not in rest[: rest.index("</li>")]
    assert "cal-thumb" not in rest[: rest.index("</li>")]


def test_only_cards_that_can_move_are_draggable(as_alice, as_vera, workspace_a):
    movable = post(workspace_a, "scheduled", datetime(2030, 1, 7, 9, 0, tzinfo=WARSAW))
    gone = post(workspace_a, "gone out", datetime(2030, 1, 8, 9, 0, tzinfo=WARSAW))
    gone.renditions.update(status="published", published_at=timezone.now())
    Publication.objects.filter(pk=gone.pk).update(status=Publication.Status.PUBLISHED)
    page = as_alice.get("/w/ws-a/calendar/?date=2030-01-07").content.decode()
    assert re.search(rf'id="cal-{movable.pk}"[^>]*data-movable tabindex="0"', page)
    assert not re.search(rf'id="cal-{gone.pk}"[^>]*data-movable', page)
    viewer = as_vera.get("/w/ws-a/calendar/?date=2030-01-07").content.decode()
    assert "data-movable" not in viewer


# --- composing from an empty day or hour ---------------------------------------------------


def test_empty_future_days_and_hours_open_the_composer_at_that_time(
    as_alice, as_vera, in_warsaw, workspace_a
):
    month = as_alice.get("/w/ws-a/calendar/?date=2030-01-07").content.decode()
    assert 'data-compose-at="2030-01-07T09:00"' in month
    assert 'href="/w/ws-a/compose/?at=2030-01-07T09:00"' in month
    week = as_alice.get("/w/ws-a/calendar/?view=week&date=2030-01-07").content.decode()
    assert 'data-compose-at="2030-01-09T14:00"' in week
    past = as_alice.get("/w/ws-a/calendar/?date=2020-01-07").content.decode()
    assert "data-compose-at" not in past
    viewer = as_vera.get("/w/ws-a/calendar/?date=2030-01-07").content.decode()
    assert "data-compose-at" not in viewer


def test_the_composer_takes_its_time_from_the_calendar(as_alice, workspace_a):
    page = as_alice.get("/w/ws-a/compose/?at=2030-01-09T14:00").content.decode()
    assert 'name="date" value="2030-01-09"' in page
    assert 'name="time" value="14:00"' in page
    ignored = as_alice.get("/w/ws-a/compose/?at=nonsense").content.decode()
    assert 'name="date" value=""' in ignored


# --- moving a post (drag, keyboard, undo) ------------------------------------------------


@pytest.fixture
def scheduled(workspace_a, news, alice):
    """A post due at 09:30 Warsaw time on 7 January 2030, through the real service."""
    alice.display_timezone = "Europe/Warsaw"
    alice.save()
    return publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "move me"}],
        destinations=[{"account": news.pk}],
        scheduled_at=datetime(2030, 1, 7, 9, 30, tzinfo=WARSAW),
        status="scheduled",
    )


def move(client, publication, **data):
    return client.post(f"/w/ws-a/calendar/move/{publication.pk}/", data)


def test_a_move_reschedules_through_the_service_and_offers_the_way_back(as_alice, scheduled):
    response = move(as_alice, scheduled, date="2030-01-10", time="09:30", revision=1)
    assert response.status_code == 200
    body = response.json()
    assert body["message"] == "Moved to Thu 10 Jan, 09:30."
    assert body["publication"]["revision"] == 2
    assert body["undo"] == {
        "date": "2030-01-07",
        "time": "09:30",
        "fold": 0,
        "label": "Mon 7 Jan, 09:30",
    }
    scheduled.refresh_from_db()
    assert scheduled.scheduled_at == datetime(2030, 1, 10, 9, 30, tzinfo=WARSAW)
    assert scheduled.timezone == "Europe/Warsaw"
    rendition = scheduled.renditions.get()
    job = Job.objects.get(dedupe_key=f"publish:{rendition.pk}")
    assert job.run_at == scheduled.scheduled_at

    back = move(as_alice, scheduled, date="2030-01-07", time="09:30", revision=2)
    assert back.status_code == 200
    scheduled.refresh_from_db()
    assert scheduled.scheduled_at == datetime(2030, 1, 7, 9, 30, tzinfo=WARSAW)


def test_a_move_with_a_stale_revision_changes_nothing(as_alice, scheduled):
    publication_reschedule(
        publication=scheduled,
        expected_revision=1,
        scheduled_at=datetime(2030, 1, 8, 12, 0, tzinfo=WARSAW),
    )
    response = move(as_alice, scheduled, date="2030-01-10", time="09:30", revision=1)
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "REVISION_CONFLICT"
    assert error["message"].startswith("Someone changed this post after the calendar was loaded")
    scheduled.refresh_from_db()
    assert scheduled.scheduled_at == datetime(2030, 1, 8, 12, 0, tzinfo=WARSAW)
    assert scheduled.revision == 2


def test_a_post_that_went_out_cannot_move(as_alice, scheduled):
    rendition = scheduled.renditions.get()
    rendition.mark_publishing()
    rendition.mark_published("1", "https://sandbox.example/1")
    response = move(as_alice, scheduled, date="2030-01-10", time="09:30", revision=1)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "NOTHING_TO_RESCHEDULE"
    assert "Nothing is left to reschedule" in response.json()["error"]["message"]


def test_a_move_into_the_past_is_refused_with_the_reason(as_alice, scheduled):
    response = move(as_alice, scheduled, date="2020-01-10", time="09:30", revision=1)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "SCHEDULE_IN_PAST"


def test_a_move_needs_a_date_a_time_and_a_revision(as_alice, scheduled):
    response = move(as_alice, scheduled, date="2030-01-10", time="9h")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_a_drop_on_the_repeated_hour_lands_on_its_second_pass(as_alice, scheduled):
    response = move(as_alice, scheduled, date="2030-10-27", time="02:30", fold="on", revision=1)
    assert response.status_code == 200
    assert response.json()["publication"]["fold"] == 1
    scheduled.refresh_from_db()
    assert scheduled.scheduled_at == datetime(2030, 10, 27, 1, 30, tzinfo=zoneinfo.ZoneInfo("UTC"))
    first = move(as_alice, scheduled, date="2030-10-27", time="02:30", revision=2)
    assert first.json()["publication"]["fold"] == 0


def test_moves_are_scoped_to_the_workspace_and_to_publishers(
    as_alice, as_vera, as_charlie, scheduled, workspace_b
):
    elsewhere = post(workspace_b, "theirs", datetime(2030, 1, 7, 9, 0, tzinfo=WARSAW))
    other = as_alice.post(
        f"/w/ws-a/calendar/move/{elsewhere.pk}/",
        {"date": "2030-01-10", "time": "09:00", "revision": 1},
    )
    assert other.status_code == 404
    assert other.json()["error"]["code"] == "NOT_FOUND"
    assert (
        move(as_charlie, scheduled, date="2030-01-10", time="09:30", revision=1).status_code == 404
    )
    assert move(as_vera, scheduled, date="2030-01-10", time="09:30", revision=1).status_code == 403
    assert as_alice.get(f"/w/ws-a/calendar/move/{scheduled.pk}/").status_code == 405
    scheduled.refresh_from_db()
    elsewhere.refresh_from_db()
    assert scheduled.revision == 1 and elsewhere.revision == 1


# --- speed ---------------------------------------------------------------------------------


def month_of_posts(workspace, count: int) -> None:
    accounts = [
        SocialAccountFactory(workspace=workspace, platform=platform)
        for platform in ("mastodon", "bluesky", "linkedin")
    ]
    for i in range(count):
        publication = post(
            workspace, f"post {i}", datetime(2030, 1, 1 + i % 28, 9, i, tzinfo=WARSAW)
        )
        RenditionFactory(
            publication=publication, social_account=accounts[i % 3], status="scheduled"
        )
        if i % 2:
            SegmentMediaFactory(segment=publication.segments.get())


@pytest.mark.parametrize("view", ["month", "week", "agenda"])
def test_a_busy_month_costs_the_same_queries_as_a_quiet_one(
    as_alice, workspace_a, view, django_assert_num_queries
):
    """50 posts (half with an image, each with two destinations) cost what 5 cost."""
    month_of_posts(workspace_a, 5)
    url = f"/w/ws-a/calendar/?view={view}&date=2030-01-01"
    as_alice.get(url)  # warm the session and permission lookups once
    with CaptureQueriesContext(connection) as quiet:
        as_alice.get(url)
    month_of_posts(workspace_a, 45)
    with django_assert_num_queries(len(quiet.captured_queries)):
        response = as_alice.get(url)
    assert response.content.decode().count('class="cal-item') >= 5
    # The count per quarter hour, the first posts of each cell, then the posts shown,
    # their parts, their media (with the files) and their destinations (with the
    # accounts): one query each; the rest is the session, the user and permissions.
    calendar_queries = [
        q["sql"]
        for q in quiet.captured_queries
        if re.search(r'FROM "?(publications|renditions)_', q["sql"])
    ]
    assert len(calendar_queries) == 6


def busy_day(workspace, count: int, day: datetime) -> None:
    """`count` posts on one local day, one a quarter hour from 08:00, one destination each."""
    account = SocialAccountFactory(workspace=workspace, platform="mastodon")
    publications = Publication.objects.bulk_create(
        [
            Publication(
                workspace=workspace,
                status=Publication.Status.SCHEDULED,
                scheduled_at=day + timedelta(minutes=15 * i),
                timezone="Europe/Warsaw",
            )
            for i in range(count)
        ]
    )
    for i, publication in enumerate(publications):
        PublicationSegmentFactory(publication=publication, text=f"busy {i:02d}")
    Rendition.objects.bulk_create(
        [
            Rendition(
                publication=p, workspace=workspace, social_account=account, status="scheduled"
            )
            for p in publications
        ]
    )


def test_a_busy_day_shows_a_few_cards_and_how_many_more(as_alice, in_warsaw, workspace_a):
    busy_day(workspace_a, 40, datetime(2030, 1, 15, 8, 0, tzinfo=WARSAW))
    post(workspace_a, "quiet day", datetime(2030, 1, 16, 9, 0, tzinfo=WARSAW))
    month = as_alice.get("/w/ws-a/calendar/?date=2030-01-15").content.decode()
    shown = list(dict.fromkeys(re.findall(r"busy (\d\d)", month)))  # label and link
    assert shown == [f"{i:02d}" for i in range(CARDS_PER_DAY)]  # the day's first ones
    assert month.count('<li class="cal-item ') == CARDS_PER_DAY + 1
    assert f"{40 - CARDS_PER_DAY} more" in month
    assert "?start=2030-01-15&amp;end=2030-01-15" in month
    assert 'aria-label="Tuesday 15 January, 40 posts"' in month
    assert "quiet day" in month and "more<" not in month.split("quiet day")[1]

    # The week: a few per hour (four posts an hour from 08:00 to 17:45).
    week = as_alice.get("/w/ws-a/calendar/?view=week&date=2030-01-15").content.decode()
    assert week.count('<li class="cal-item ') == 10 * CARDS_PER_HOUR + 1
    assert week.count(f"{4 - CARDS_PER_HOUR} more") == 10

    agenda = as_alice.get("/w/ws-a/calendar/?view=agenda&date=2030-01-15").content.decode()
    assert "40 posts" in agenda
    assert agenda.count('<li class="cal-item ') == CARDS_PER_AGENDA_DAY + 1
    assert f"{40 - CARDS_PER_AGENDA_DAY} more" in agenda


def test_switching_views_stays_around_the_same_date(as_alice, workspace_a):
    month = as_alice.get("/w/ws-a/calendar/?date=2030-01-15").content.decode()
    assert 'href="?view=week&amp;date=2030-01-15"' in month
    assert 'href="?view=agenda&amp;date=2030-01-15"' in month
    assert 'href="?view=month&amp;date=2029-12-01" rel="prev"' in month
    week = as_alice.get("/w/ws-a/calendar/?view=week&date=2030-01-15").content.decode()
    assert 'href="?view=month&amp;date=2030-01-15"' in week
    # The agenda is what is coming: from a month gone by it starts today.
    past = as_alice.get("/w/ws-a/calendar/?date=2020-01-15").content.decode()
    assert f'href="?view=agenda&amp;date={timezone.now().date().isoformat()}"' in past
