"""The approval workflow in a real browser (Debian's chromium through Playwright): an editor
submits a post for review, an admin asks for changes from the review queue, the editor
submits again, the admin approves and the post is scheduled. Screenshots land in
test-output/screenshots/.

Skips without chromium, unless REQUIRE_BROWSER=1 (see tests/web/test_browser.py)."""

import zoneinfo
from datetime import datetime, timedelta

import pytest

from apps.approvals.models import ApprovalRule, Review
from apps.publications.models import Publication
from apps.sandbox.services import sandbox_account_create
from tests.web import test_browser
from tests.web.test_browser import DESKTOP, ZONE, shot

browser, site = test_browser.browser, test_browser.site

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def person(browser, site):
    """A page per person: each logs in in a browser context of their own."""
    contexts = []

    def log_in(email: str):
        context = browser.new_context(base_url=site, viewport=DESKTOP, timezone_id=ZONE)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto("/login/")
        page.get_by_label("Email").fill(email)
        page.get_by_label("Password").fill("correct horse battery")
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(lambda url: "/login/" not in url)
        return page

    yield log_in
    for context in contexts:
        context.close()


@pytest.fixture
def reviewed(workspace_a, alice, bob):
    for user in (alice, bob):
        user.display_timezone = ZONE
        user.save()
    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    return sandbox_account_create(workspace=workspace_a, handle="reviewed-news")


def test_an_editors_post_is_reviewed_changed_and_approved(person, reviewed):
    from playwright.sync_api import expect

    editor = person("bob@example.com")
    editor.goto("/w/ws-a/compose/")
    editor.get_by_label("Text", exact=True).fill("Launch day, draft one")
    editor.locator(f"#dest-{reviewed.pk}").check()
    expect(editor.locator(f"#tab-{reviewed.pk}")).to_be_visible()
    expect(editor.locator("#schedule-zone")).to_contain_text(ZONE)
    tomorrow = datetime.now(zoneinfo.ZoneInfo(ZONE)) + timedelta(days=1)
    editor.get_by_label("Date", exact=True).fill(tomorrow.strftime("%Y-%m-%d"))
    editor.get_by_label("Time", exact=True).fill("09:30")
    expect(editor.get_by_label("Time", exact=True)).to_have_value("09:30")
    # An editor is offered the review, never Schedule.
    expect(editor.get_by_role("button", name="Schedule", exact=True)).to_have_count(0)
    editor.get_by_role("button", name="Submit for review").click()
    review_panel = editor.locator("#review")
    expect(review_panel.locator(".badge")).to_have_text("In review")
    shot(editor, "review-01-submitted")
    publication = Publication.objects.get()
    assert publication.status != "scheduled"
    post_url = editor.url

    admin = person("alice@example.com")
    admin.goto("/w/ws-a/reviews/")
    item = admin.get_by_role("link", name="Launch day, draft one")
    expect(item).to_be_visible()
    shot(admin, "review-02-queue")
    item.click()
    admin.get_by_label("Note").fill("Say which day, please.")
    admin.get_by_role("button", name="Ask for changes").click()
    expect(admin.locator("#review .badge")).to_have_text("Changes requested")
    expect(admin.locator("#review")).to_contain_text("Say which day, please.")

    editor.goto(post_url)
    expect(editor.locator("#review")).to_contain_text("Say which day, please.")
    editor.get_by_label("Note for the reviewer").fill("Now with the day.")
    editor.get_by_role("button", name="Submit for review").click()
    expect(editor.locator("#review .badge")).to_have_text("In review")

    admin.goto("/w/ws-a/reviews/")
    admin.get_by_role("link", name="Launch day, draft one").click()
    admin.get_by_role("button", name="Approve and schedule").click()
    expect(admin.locator("#publication-status")).to_have_text("Scheduled")
    expect(admin.locator("#review .badge")).to_have_text("Approved")
    shot(admin, "review-03-approved")

    publication.refresh_from_db()
    assert publication.status == "scheduled"
    assert publication.scheduled_at.astimezone(zoneinfo.ZoneInfo(ZONE)).strftime("%H:%M") == "09:30"
    review = Review.objects.get(publication=publication)
    assert review.state == Review.State.APPROVED
    assert [c.kind for c in review.publication.review_comments.order_by("created_at")] == [
        "submitted",
        "changes_requested",
        "submitted",
        "approved",
    ]
