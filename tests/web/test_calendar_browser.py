"""The calendar as a planner in a real browser (Debian's chromium through Playwright):
drag a post to another day (month) or hour (week), undo it, move one with the keyboard,
pick one up with a finger, see a stale calendar refused, and click an empty day to write
a post for then. Screenshots of the month, week and agenda at desktop and phone width go
to test-output/screenshots/calendar/.

Without chromium these tests skip, unless REQUIRE_BROWSER=1 (CI), where they fail.
"""

import re
import zoneinfo
from datetime import datetime

import pytest
from django.conf import settings as django_settings
from django.test import Client

from apps.publishing.services import publication_create, publication_reschedule
from apps.sandbox.services import sandbox_account_create
from apps.series.models import Series, SeriesOccurrence
from tests.factories import (
    OrganizationFactory,
    OrganizationMembershipFactory,
    RenditionFactory,
    SegmentMediaFactory,
    SocialAccountFactory,
    UserFactory,
    WorkspaceFactory,
    WorkspaceMembershipFactory,
)
from tests.web.test_browser import DESKTOP, PHONE, browser, site  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ZONE = "Europe/Warsaw"
WARSAW = zoneinfo.ZoneInfo(ZONE)
SCREENSHOTS = django_settings.BASE_DIR / "test-output" / "screenshots" / "calendar"
DAY = "2030-01-15"  # a Tuesday, far enough ahead to move anything to


@pytest.fixture
def planner(db):
    """An admin who reads Warsaw time, in a workspace with one sandbox account."""
    user = UserFactory(email="plan@example.com", name="Pat Planner", display_timezone=ZONE)
    organization = OrganizationFactory(slug="plan-org")
    OrganizationMembershipFactory(organization=organization, user=user, role="owner")
    workspace = WorkspaceFactory(organization=organization, slug="plan", default_timezone=ZONE)
    WorkspaceMembershipFactory(workspace=workspace, user=user, role="admin")
    account = sandbox_account_create(workspace=workspace, handle="plan-news")
    return user, workspace, account


def schedule(planner, text: str, at: datetime):
    user, workspace, account = planner
    return publication_create(
        workspace=workspace,
        author=user,
        segments=[{"text": text}],
        destinations=[{"account": account.pk}],
        scheduled_at=at,
        status="scheduled",
    )


@pytest.fixture
def page(browser, site, planner):  # noqa: F811 (the browser fixture)
    client = Client()
    client.force_login(planner[0])
    context = browser.new_context(base_url=site, viewport=DESKTOP, timezone_id=ZONE)
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": site}]
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.console_errors = errors
    yield page
    context.close()


def drag(page, source, target, *, at=(0.5, 0.5)) -> None:
    """Press on source, move in steps (pointer events fire on each), release over target."""
    target.scroll_into_view_if_needed()
    start = source.bounding_box()
    end = target.bounding_box()
    page.mouse.move(start["x"] + 12, start["y"] + 8)
    page.mouse.down()
    page.mouse.move(end["x"] + end["width"] * at[0], end["y"] + end["height"] * at[1], steps=12)
    page.mouse.up()


def scheduled_local(publication) -> datetime:
    publication.refresh_from_db()
    return publication.scheduled_at.astimezone(WARSAW)


def test_a_post_dragged_to_another_day_keeps_its_time_and_the_undo_moves_it_back(page, planner):
    from playwright.sync_api import expect

    publication = _one_post(planner)
    page.goto(f"/w/plan/calendar/?date={DAY}")
    card = page.locator(f"#cal-{publication.pk}")
    expect(card).to_contain_text("09:30")
    drag(page, card, page.locator('.day[data-drop-date="2030-01-17"]'))

    toast = page.locator("#calendar-toast")
    expect(toast).to_contain_text("Moved to Thu 17 Jan, 09:30.")
    expect(page.locator('.day[data-drop-date="2030-01-17"]')).to_contain_text("launch notes")
    assert scheduled_local(publication) == datetime(2030, 1, 17, 9, 30, tzinfo=WARSAW)

    toast.get_by_role("button", name="Undo").click()
    expect(toast).to_contain_text("Moved back to Tue 15 Jan, 09:30.")
    expect(page.locator(f'.day[data-drop-date="{DAY}"]')).to_contain_text("launch notes")
    assert scheduled_local(publication) == datetime(2030, 1, 15, 9, 30, tzinfo=WARSAW)
    assert page.console_errors == []


def test_a_post_dragged_onto_an_hour_of_the_week_takes_that_hour(page, planner):
    from playwright.sync_api import expect

    publication = _one_post(planner)
    page.goto(f"/w/plan/calendar/?view=week&date={DAY}")
    card = page.locator(f"#cal-{publication.pk}")
    expect(card).to_be_visible()
    slot = page.locator('.slot[data-drop-date="2030-01-16"][data-drop-hour="14"]')
    drag(page, card, slot)
    expect(page.locator("#calendar-toast")).to_contain_text("Moved to Wed 16 Jan, 14:30.")
    expect(slot).to_contain_text("launch notes")
    assert scheduled_local(publication) == datetime(2030, 1, 16, 14, 30, tzinfo=WARSAW)


def test_the_keyboard_carries_a_post_with_the_arrows_and_drops_it_with_enter(page, planner):
    from playwright.sync_api import expect

    publication = _one_post(planner)
    page.goto(f"/w/plan/calendar/?date={DAY}")
    card = page.locator(f"#cal-{publication.pk}")
    card.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")  # a week later
    expect(page.locator(".drop-target")).to_have_attribute("data-drop-date", "2030-01-23")
    expect(page.locator("#live-region")).to_contain_text("Move to Wednesday 23 January, 09:30?")
    page.keyboard.press("Enter")
    expect(page.locator("#calendar-toast")).to_contain_text("Moved to Wed 23 Jan, 09:30.")
    expect(page.locator(f"#cal-{publication.pk}")).to_be_focused()
    assert scheduled_local(publication) == datetime(2030, 1, 23, 9, 30, tzinfo=WARSAW)

    # Escape puts it back where it was, and nothing is sent.
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Escape")
    expect(page.locator(".drop-target")).to_have_count(0)
    assert scheduled_local(publication).day == 23


def test_a_finger_held_on_a_post_picks_it_up(page, planner):
    """Real touch input through the browser's own pipeline (CDP touch events become
    pointer events with pointerType "touch"): hold, then move, then lift."""
    from playwright.sync_api import expect

    publication = _one_post(planner)
    page.goto(f"/w/plan/calendar/?date={DAY}")
    start = page.locator(f"#cal-{publication.pk} .time").bounding_box()
    end = page.locator('.day[data-drop-date="2030-01-18"]').bounding_box()
    cdp = page.context.new_cdp_session(page)

    def touch(kind: str, x: float, y: float) -> None:
        points = [] if kind == "touchEnd" else [{"x": x, "y": y}]
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    x, y = start["x"] + 4, start["y"] + 4
    touch("touchStart", x, y)
    page.wait_for_timeout(450)  # longer than the hold that picks a post up
    tx, ty = end["x"] + end["width"] / 2, end["y"] + end["height"] - 6
    for i in range(1, 11):
        touch("touchMove", x + (tx - x) * i / 10, y + (ty - y) * i / 10)
    touch("touchEnd", tx, ty)
    expect(page.locator("#calendar-toast")).to_contain_text("Moved to Fri 18 Jan, 09:30.")
    assert scheduled_local(publication).day == 18


def test_a_stale_calendar_is_told_and_shows_the_post_where_it_now_is(page, planner):
    from playwright.sync_api import expect

    publication = _one_post(planner)
    page.goto(f"/w/plan/calendar/?date={DAY}")
    card = page.locator(f"#cal-{publication.pk}")
    expect(card).to_be_visible()
    # Someone else moves it meanwhile.
    publication_reschedule(
        publication=publication,
        expected_revision=publication.revision,
        scheduled_at=datetime(2030, 1, 21, 12, 0, tzinfo=WARSAW),
    )
    drag(page, card, page.locator('.day[data-drop-date="2030-01-17"]'))
    toast = page.locator("#calendar-toast")
    expect(toast).to_contain_text("Someone changed this post after the calendar was loaded")
    expect(toast.get_by_role("button", name="Undo")).to_be_hidden()
    expect(page.locator('.day[data-drop-date="2030-01-21"]')).to_contain_text("launch notes")
    assert scheduled_local(publication) == datetime(2030, 1, 21, 12, 0, tzinfo=WARSAW)


def test_clicking_an_empty_day_opens_the_composer_at_that_day(page, planner):
    from playwright.sync_api import expect

    _one_post(planner)
    page.goto(f"/w/plan/calendar/?date={DAY}")
    empty = page.locator('.day[data-drop-date="2030-01-24"]')
    box = empty.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] - 10)
    expect(page).to_have_url(re.compile(r"/w/plan/compose/\?at=2030-01-24T09(:|%3A)00$"))
    expect(page.get_by_label("Date", exact=True)).to_have_value("2030-01-24")
    expect(page.get_by_label("Time", exact=True)).to_have_value("09:00")

    page.goto(f"/w/plan/calendar/?view=week&date={DAY}")
    slot = page.locator('.slot[data-drop-date="2030-01-17"][data-drop-hour="16"]')
    slot.scroll_into_view_if_needed()
    slot.click()
    expect(page.get_by_label("Time", exact=True)).to_have_value("16:00")
    expect(page.get_by_label("Date", exact=True)).to_have_value("2030-01-17")


def test_screenshots_of_month_week_and_agenda_on_desktop_and_phone(page, planner):
    from playwright.sync_api import expect

    _a_busy_week(planner)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        for view in ("month", "week", "agenda"):
            page.goto(f"/w/plan/calendar/?view={view}&date={DAY}")
            expect(page.locator(".cal-item").first).to_be_visible()
            if view != "week":  # the week opens at 07:00, below the fold on a phone
                expect(page.locator(".cal-thumb")).to_be_visible()
            page.screenshot(path=str(SCREENSHOTS / f"{view}-{width}.png"), full_page=True)
            sideways = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert sideways <= 0, f"the {view} view scrolls sideways at {width} width"
    assert page.console_errors == []


def _one_post(planner):
    return schedule(planner, "launch notes", datetime(2030, 1, 15, 9, 30, tzinfo=WARSAW))


def _a_busy_week(planner) -> None:
    texts = [
        "Release notes for 4.2: faster publishing, calmer retries",
        "Customer story: how a newsroom plans a week of posts",
        "Tip: drag a post on the calendar to move it",
        "Webinar tomorrow at 16:00",
        "Friday recap thread",
    ]
    posts = [
        schedule(planner, text, datetime(2030, 1, 14 + i, 9 + i * 2, 15 * (i % 4), tzinfo=WARSAW))
        for i, text in enumerate(texts)
    ]
    schedule(planner, "Second post of Tuesday", datetime(2030, 1, 15, 17, 45, tzinfo=WARSAW))
    # A picture, a second network and a series, so every part of a card shows.
    workspace = planner[1]
    SegmentMediaFactory(segment=posts[1].segments.get(), alt_text="a newsroom at work")
    mastodon = SocialAccountFactory(workspace=workspace, platform="mastodon", handle="toots")
    RenditionFactory(publication=posts[1], social_account=mastodon, status="scheduled")
    series = Series.objects.create(
        workspace=workspace, name="Fridays", rrule="FREQ=WEEKLY", timezone=ZONE
    )
    SeriesOccurrence.objects.create(
        series=series,
        workspace=workspace,
        local_start="2030-01-18T17:00:00",
        scheduled_at=posts[4].scheduled_at,
        publication=posts[4],
        status=SeriesOccurrence.Status.MATERIALIZED,
    )
