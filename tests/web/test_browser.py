"""The web app in a real browser: Debian's chromium, headless, driven by Playwright.

One scenario walks what a new team does: sign up, confirm the address, create a workspace,
connect two sandbox accounts (one fails its first publish), compose a thread with an image
and alt text, see the per-destination over-limit warning and fix it with an override,
schedule, find the post on the calendar, watch it publish while a worker runs, see the
failing destination with its action, and retry it. Screenshots of every page land in
test-output/screenshots/ for review (desktop, and a phone-width pass).

Without chromium these tests skip, unless REQUIRE_BROWSER=1 (CI), where they fail.
"""

import os
import re
import shutil
import time
import zoneinfo
from datetime import datetime
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core import mail
from PIL import Image

from apps.jobs.worker import Worker
from apps.publications.models import Publication
from apps.renditions.models import Rendition
from tests.sandbox.witness import witness_posts

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(django_settings.BASE_DIR) / "test-output" / "screenshots"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
ZONE = "Europe/Warsaw"
ASYNC_UNSAFE = "DJANGO_ALLOW_ASYNC_UNSAFE"


def _unavailable(reason: str) -> None:
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason}, and REQUIRE_BROWSER=1 requires the browser tests.")
    pytest.skip(f"{reason}; set REQUIRE_BROWSER=1 to fail instead of skipping.")


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        _unavailable("chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[dev]')")

    # Playwright's sync API runs an event loop in this thread, and Django's ORM (the test
    # drives the worker) refuses to run beside one unless told it is safe. Only while the
    # browser runs: child processes of later tests must not inherit it.
    previous = os.environ.get(ASYNC_UNSAFE)
    os.environ[ASYNC_UNSAFE] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop(ASYNC_UNSAFE, None)
        else:
            os.environ[ASYNC_UNSAFE] = previous


@pytest.fixture
def site(live_server, settings):
    # The sandbox platform is served by this same live server; workers reach it there.
    settings.SANDBOX_BASE_URL = live_server.url
    settings.PROVIDER_TIMEOUT_S = 5
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return live_server.url


@pytest.fixture
def page(browser, site):
    context = browser.new_context(base_url=site, viewport=DESKTOP, timezone_id=ZONE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.on("dialog", lambda dialog: dialog.accept())
    yield page
    context.close()


def shot(page, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def drain(until, *, timeout: float = 30) -> None:
    """Run the queue in this process, like `run_worker`, until until() holds."""
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="browser")
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, "the worker did not settle the renditions in time"
        for job in worker.claim_batch():
            worker.run_one(job)
        time.sleep(0.1)


def statuses() -> dict[str, str]:
    return dict(Rendition.objects.values_list("social_account__handle", "status"))


def test_a_team_composes_schedules_and_watches_a_thread_publish(page, site, tmp_path):
    from playwright.sync_api import expect

    # Sign up, then create the organization and its first workspace.
    page.goto("/signup/")
    page.get_by_label("Email").fill("dana@example.com")
    page.get_by_label("Your name").fill("Dana")
    page.get_by_label("Password").fill("a long and unusual passphrase")
    page.get_by_label("Your time zone").select_option(ZONE)
    shot(page, "01-signup")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    shot(page, "01b-check-your-email")
    [message] = mail.outbox
    # The link asks to log in to the account it confirms (the form signed nobody in).
    page.goto(re.search(r"https?://[^/\s]+(/verify-email/\S+/)", message.body).group(1))
    page.get_by_label("Email").fill("dana@example.com")
    page.get_by_label("Password").fill("a long and unusual passphrase")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text("dana@example.com is confirmed.")).to_be_visible()
    page.get_by_role("link", name="Create an organization").click()
    expect(page.get_by_role("heading", name="Set up your organization")).to_be_visible()
    page.get_by_label("Organization name").fill("Acme")
    page.get_by_label("First workspace").fill("Launch")
    shot(page, "02-organization-create")
    page.get_by_role("button", name="Create").click()

    # Two sandbox accounts: one that behaves, one short-limited that fails its first post.
    expect(page.get_by_role("heading", name="Accounts", exact=True)).to_be_visible()
    page.get_by_label("Handle").fill("acme-news")
    page.get_by_role("button", name="Connect the sandbox account").click()
    expect(page.get_by_text("Connected the sandbox account @acme-news.")).to_be_visible()
    page.get_by_label("Handle").fill("acme-flaky")
    page.get_by_label("Text limit").fill("100")
    page.get_by_label("Server errors first").fill("1")
    page.get_by_role("button", name="Connect the sandbox account").click()
    expect(page.get_by_text("Connected the sandbox account @acme-flaky.")).to_be_visible()
    shot(page, "03-accounts")

    # Compose a thread of two parts with an image and its alt text.
    page.get_by_role("link", name="Compose").click()
    long_text = "Launch day! " + "Our new release ships today with faster publishing. " * 3
    page.get_by_label("Text", exact=True).fill(long_text)
    page.locator(f"#dest-{_account_id('acme-news')}").check()
    expect(page.locator(f"#tab-{_account_id('acme-news')}")).to_be_visible()
    page.locator(f"#dest-{_account_id('acme-flaky')}").check()
    expect(page.locator(f"#tab-{_account_id('acme-flaky')}")).to_be_visible()
    page.get_by_role("button", name="+ Add a part (thread)").click()
    page.get_by_label("Text of part 2").fill("Read the notes on our blog.")
    image = tmp_path / "launch.png"
    Image.new("RGB", (640, 480), (47, 91, 211)).save(image)
    page.locator("#seg-0-file").set_input_files(str(image))
    expect(page.locator("#segment-0 img")).to_be_visible()
    page.get_by_label("Alt text").fill("A blue launch banner")

    # The short-limited destination warns; the other is fine.
    flaky = _account_id("acme-flaky")
    summary = page.locator("#check-summary")
    expect(summary).to_contain_text("@acme-flaky (Sandbox) › Part 1 text")
    expect(summary).to_contain_text("sandbox allows 100")
    expect(summary).not_to_contain_text("@acme-news")
    expect(page.locator("#seg-0-counts .count.over")).to_contain_text("@acme-flaky")
    expect(page.locator(f"#tab-{flaky}-badge")).to_have_text("1 problem")
    shot(page, "04-composer-over-limit")

    # Adapt the text for that destination only, in its tab.
    page.locator(f"#tab-{flaky}").click()
    page.get_by_label("Write a different text for @acme-flaky").check()
    override = page.get_by_label("Part 1 of 2 for @acme-flaky")
    override.fill("Launch day! Faster publishing ships today.")
    expect(summary).to_contain_text("Every destination accepts this post as written.")
    shot(page, "05-composer-ready")

    # Schedule it for this minute, in the display zone shown beside the fields.
    expect(page.locator("#schedule-zone")).to_contain_text(ZONE)
    now = datetime.now(zoneinfo.ZoneInfo(ZONE))
    page.get_by_label("Date", exact=True).fill(now.strftime("%Y-%m-%d"))
    page.get_by_label("Time", exact=True).fill(now.strftime("%H:%M"))
    page.get_by_role("button", name="Schedule", exact=True).click()
    status = page.locator("#publication-status")
    expect(status).to_have_text("Scheduled")
    publication_url = page.url
    shot(page, "06-publication-scheduled")

    # It is on the calendar, in the month and the week view.
    page.get_by_role("link", name="Calendar").click()
    item = page.locator(".cal-item").first
    expect(item).to_contain_text(now.strftime("%H:%M"))
    expect(item).to_contain_text("Launch day!")
    shot(page, "07-calendar-month")
    page.get_by_role("link", name="Week").click()
    expect(page.locator(".cal-item").first).to_contain_text("Launch day!")
    shot(page, "08-calendar-week")

    # Watch it publish: the worker runs, the page updates itself (no reload).
    page.goto(publication_url)
    news_card = page.locator(f"#rendition-{_rendition_id('acme-news')}")
    flaky_card = page.locator(f"#rendition-{_rendition_id('acme-flaky')}")
    drain(lambda: set(statuses().values()) <= {"published", "failed"})
    expect(news_card.locator("[data-status]")).to_have_text("Published", timeout=10_000)
    expect(flaky_card.locator("[data-status]")).to_have_text(
        "Failed, retry pending", timeout=10_000
    )
    expect(flaky_card).to_contain_text("Provider unavailable")
    expect(flaky_card).to_contain_text("HTTP 503")
    expect(flaky_card.locator("[data-action]")).to_have_text("Wait: it is retried automatically")
    expect(flaky_card).to_contain_text("Next retry")
    shot(page, "09-publication-failed-destination")

    # Retry it by hand instead of waiting; the card and the post's status follow.
    flaky_card.get_by_role("button", name="Retry now").click()
    expect(flaky_card).to_contain_text("Retrying now.")
    drain(lambda: statuses()["acme-flaky"] == "published")
    expect(flaky_card.locator("[data-status]")).to_have_text("Published", timeout=10_000)
    expect(status).to_have_text("Published", timeout=10_000)
    flaky_card.get_by_text("Delivery record").click()
    expect(flaky_card.locator(".attempts tbody tr")).to_have_count(3)  # 503, then 2 parts
    shot(page, "10-publication-published")

    # The sandbox holds each post exactly once: a thread of two, and the short override.
    news_posts = _witness(site, "acme-news")
    flaky_posts = _witness(site, "acme-flaky")
    assert [p["text"] for p in news_posts] == [long_text, "Read the notes on our blog."]
    assert [p["text"] for p in flaky_posts] == [
        "Launch day! Faster publishing ships today.",
        "Read the notes on our blog.",
    ]
    assert Publication.objects.get().status == "published"

    # The other pages a team uses, for review.
    page.get_by_role("link", name="Overview", exact=True).click()
    expect(page.get_by_role("heading", name="Recently published")).to_be_visible()
    shot(page, "11-overview")
    page.get_by_role("link", name="Posts", exact=True).click()
    expect(page.locator("tbody tr")).to_have_count(1)
    shot(page, "12-posts")
    page.get_by_role("link", name="Team", exact=True).click()
    page.get_by_role("textbox", name="Email").fill("sam@example.com")
    page.get_by_role("button", name="Invite").click()
    expect(page.get_by_text("Invited sam@example.com")).to_be_visible()
    shot(page, "13-team")
    page.get_by_role("link", name="API tokens").click()
    page.get_by_label("Name").fill("CI")
    page.get_by_role("button", name="Create the token").click()
    expect(page.locator("#token-secret")).to_contain_text("sp_")
    shot(page, "14-api-token-created")
    page.goto("/o/acme/")
    expect(page.get_by_role("heading", name="Usage this month")).to_be_visible()
    shot(page, "15-organization")
    page.goto("/settings/")
    shot(page, "16-settings")

    # The same pages on a phone-width screen.
    phone = page.context.browser.new_context(
        base_url=site,
        viewport=PHONE,
        timezone_id=ZONE,
        storage_state=page.context.storage_state(),
    )
    small = phone.new_page()
    for name, url in [
        ("phone-overview", "/w/launch/"),
        ("phone-publication", publication_url),
        ("phone-calendar", "/w/launch/calendar/"),
        ("phone-composer", "/w/launch/compose/"),
        ("phone-accounts", "/w/launch/accounts/"),
    ]:
        small.goto(url)
        shot(small, name)
    phone.close()


def _account_id(handle: str) -> str:
    from apps.accounts.models import SocialAccount

    return str(SocialAccount.objects.get(handle=handle).pk)


def _rendition_id(handle: str) -> int:
    return Rendition.objects.get(social_account__handle=handle).pk


def _witness(base_url: str, handle: str) -> list[dict]:
    return witness_posts(base_url, handle)
