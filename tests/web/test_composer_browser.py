"""The composer keeps everything typed while destinations change, in a real browser
(Debian's chromium through Playwright, as in test_browser.py): ticking a destination
updates only what depends on the destinations (the per-destination tabs, counters,
checks and previews), so a keystroke right after a tick, three quick ticks, or an
override being written while another destination is ticked are never lost.

Without chromium these tests skip, unless REQUIRE_BROWSER=1 (CI), where they fail.
"""

import pytest

from apps.sandbox.services import sandbox_account_create
from tests.web.test_browser import browser, site  # noqa: F401
from tests.web.test_previews_browser import signed_in  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def accounts(workspace_a):
    return [
        sandbox_account_create(workspace=workspace_a, handle=handle)
        for handle in ("north", "south", "west")
    ]


def _settled(page) -> None:
    # Every refresh and check answered: nothing in flight can still swap something in.
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    page.wait_for_load_state("networkidle")


def test_three_quick_ticks_while_typing_lose_neither_a_tick_nor_a_character(
    signed_in,  # noqa: F811
    accounts,
):
    from playwright.sync_api import expect

    page = signed_in
    page.goto("/w/ws-a/compose/")
    text = page.get_by_label("Text", exact=True)
    text.press_sequentially("Hello")

    # No pause anywhere: tick, then straight back to the text, three times.
    typed = "Hello"
    for account, more in zip(accounts, (" north", " south", " west"), strict=True):
        page.locator(f"#dest-{account.pk}").click()
        text.press_sequentially(more)
        typed += more

    for account in accounts:
        expect(page.locator(f"#dest-{account.pk}")).to_be_checked()
    expect(text).to_have_value(typed)
    _settled(page)

    expect(text).to_have_value(typed)
    for account in accounts:
        expect(page.locator(f"#dest-{account.pk}")).to_be_checked()
        # What depends on the destinations followed every tick.
        expect(page.locator(f"#tab-{account.pk}")).to_be_visible()
        expect(page.locator(f"#preview-{account.pk} .preview-text")).to_have_text(typed)
    expect(page.get_by_role("tab")).to_have_count(3)


def test_an_override_being_written_survives_another_destination_being_ticked(
    signed_in,  # noqa: F811
    accounts,
):
    from playwright.sync_api import expect

    page = signed_in
    first, second, _ = accounts
    page.goto("/w/ws-a/compose/")
    page.get_by_label("Text", exact=True).fill("The post")
    page.locator(f"#dest-{first.pk}").click()
    override = page.locator(f"#override-{first.pk}")
    override.click()
    own = page.locator(f"#override-{first.pk}-0-text")
    expect(own).to_be_visible()
    _settled(page)

    own.fill("")
    own.press_sequentially("Only for")
    page.locator(f"#dest-{second.pk}").click()
    own.press_sequentially(" north")
    _settled(page)

    expect(page.locator(f"#dest-{second.pk}")).to_be_checked()
    expect(page.locator(f"#tab-{second.pk}")).to_be_visible()
    expect(page.locator(f"#override-{first.pk}-0-text")).to_have_value("Only for north")
    expect(page.get_by_label("Text", exact=True)).to_have_value("The post")


def test_text_typed_while_a_file_uploads_stays(signed_in, accounts, tmp_path):  # noqa: F811
    from PIL import Image
    from playwright.sync_api import expect

    page = signed_in
    image = tmp_path / "sunrise.png"
    Image.new("RGB", (64, 48), (240, 160, 40)).save(image)
    page.goto("/w/ws-a/compose/")
    page.locator(f"#dest-{accounts[0].pk}").click()
    text = page.get_by_label("Text", exact=True)
    text.press_sequentially("Before")

    page.locator("#seg-0-file").set_input_files(str(image))
    text.press_sequentially(" and while it uploads", delay=40)
    _settled(page)

    expect(page.get_by_label("Alt text")).to_be_visible()
    expect(text).to_have_value("Before and while it uploads")
    expect(page.locator(f"#dest-{accounts[0].pk}")).to_be_checked()
    # The chosen file was taken in: the field is empty again, so no later save sends it twice.
    assert page.locator("#seg-0-file").evaluate("input => input.files.length") == 0
