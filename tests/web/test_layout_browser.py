"""The page frame in a real browser at desktop and phone width: the menus stay on screen,
the workspace navigation folds on phones, the user menu is told apart from the workspace
switcher, and no page breaks the CSP (a violation is a console error)."""

import pytest

from apps.web.templatetags.platform_icons import initials
from tests.web.test_browser import DESKTOP, PHONE, browser, shot, site  # noqa: F401 - fixtures

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PAGES = ["", "compose/", "calendar/", "posts/", "accounts/", "team/", "analytics/", "evergreen/"]


def _signed_in_page(browser, site, viewport):  # noqa: F811 - the fixture, passed in
    context = browser.new_context(base_url=site, viewport=viewport)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto("/login/")
    page.fill("input[name=username]", "alice@example.com")
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")
    page.wait_for_url("**/w/**")
    return context, page


def _within_viewport(page, selector: str, width: int) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_menus_stay_on_screen_and_no_page_breaks_the_csp(
    browser,  # noqa: F811
    site,  # noqa: F811
    workspace_a,
    alice,
    viewport,
):
    from playwright.sync_api import expect

    context, page = _signed_in_page(browser, site, viewport)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    width = viewport["width"]
    try:
        for path in PAGES:
            page.goto(f"/w/{workspace_a.slug}/{path}")
            page.wait_for_load_state("networkidle")
            assert page.evaluate("document.documentElement.scrollWidth") <= width, path
            label = "phone" if width < 500 else "desktop"
            shot(page, f"layout-{label}-{path.strip('/') or 'overview'}")
        assert problems == []

        # The user menu shows initials; the switcher says it is the workspace.
        expect(page.locator(".user-menu .avatar")).to_have_text(initials(alice))
        expect(page.locator(".switcher .switcher-kind")).to_have_text("Workspace")
        for menu in (".switcher", ".user-menu"):
            page.click(f"{menu} > summary")
            assert _within_viewport(page, f"{menu} .menu-panel", width), menu
            page.click(f"{menu} > summary")

        nav_links = page.locator(".workspace-nav ul a")
        if width < 500:
            expect(nav_links.first).to_be_hidden()
            page.click(".nav-toggle")
            expect(page.locator(".nav-toggle")).to_have_attribute("aria-expanded", "true")
            expect(nav_links.first).to_be_visible()
            page.get_by_role("link", name="Posts").click()
            page.wait_for_url("**/posts/")
        else:
            expect(page.locator(".nav-toggle")).to_be_hidden()
            expect(nav_links.first).to_be_visible()
    finally:
        context.close()
