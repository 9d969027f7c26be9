"""The queue in a real browser (Debian's chromium through Playwright): add two posts to the
queue from the composer, then reorder them by dragging one onto the other, and back with
the keyboard's up button. Screenshots land in test-output/screenshots/.

Skips without chromium, unless REQUIRE_BROWSER=1 (see tests/web/test_browser.py)."""

from datetime import time

import pytest

from apps.planning.services import queue_slots_replace
from apps.publications.models import Publication
from apps.sandbox.services import sandbox_account_create
from tests.web import test_browser
from tests.web.test_browser import ZONE, shot

# The browser fixtures of the main browser test, shared.
browser, site, page = test_browser.browser, test_browser.site, test_browser.page

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def planner(alice, workspace_a):
    alice.display_timezone = ZONE
    alice.save()
    # A slot every day at 09:00 and 18:00, so the test never waits for the weekday.
    queue_slots_replace(
        workspace=workspace_a,
        slots=[(day, at) for day in range(7) for at in (time(9), time(18))],
        timezone=ZONE,
    )
    return sandbox_account_create(workspace=workspace_a, handle="queue-news")


def _times() -> dict[str, object]:
    return {
        p.segments.get().text: p.scheduled_at
        for p in Publication.objects.prefetch_related("segments")
    }


def test_posts_added_to_the_queue_are_reordered_by_drag_and_by_keyboard(page, planner):
    from playwright.sync_api import expect

    page.goto("/login/")
    page.get_by_label("Email").fill("alice@example.com")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Log in").click()

    for text in ("Queued first", "Queued second"):
        page.goto("/w/ws-a/compose/")
        page.get_by_label("Text", exact=True).fill(text)
        page.locator(f"#dest-{planner.pk}").check()
        expect(page.locator(f"#tab-{planner.pk}")).to_be_visible()
        page.get_by_role("button", name="Add to queue").click()
        expect(page.locator("#publication-status")).to_have_text("Scheduled")
    before = _times()
    assert before["Queued first"] < before["Queued second"]

    page.get_by_role("link", name="Queue").first.click()
    queue = page.locator(f"#queue-{planner.pk} .queue-item")
    expect(queue).to_have_count(2)
    expect(queue.nth(0)).to_contain_text("Queued first")
    shot(page, "queue-01-two-posts")

    # Drag the second post onto the first: they swap times (and places).
    queue.nth(1).drag_to(queue.nth(0))
    expect(queue.nth(0)).to_contain_text("Queued second")
    expect(queue.nth(1)).to_contain_text("Queued first")
    after = _times()
    assert (after["Queued first"], after["Queued second"]) == (
        before["Queued second"],
        before["Queued first"],
    )
    shot(page, "queue-02-after-drag")

    # The keyboard way back: the second row's up button.
    up = queue.nth(1).get_by_role("button", name="Move up")
    up.focus()
    page.keyboard.press("Enter")
    expect(queue.nth(0)).to_contain_text("Queued first")
    assert _times() == before

    # Slots are edited on their own page.
    page.get_by_role("link", name="Posting slots").click()
    expect(page.locator("#slots-day-0")).to_contain_text("09:00")
    shot(page, "queue-03-slots")
