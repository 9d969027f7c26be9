"""The zone field in a real browser (Debian's chromium through Playwright): the page
carries no zone list; focusing the field fetches the names once into its <datalist>, and
a zone typed there is saved.

Skips without chromium, unless REQUIRE_BROWSER=1 (see tests/web/test_browser.py)."""

from datetime import time

import pytest

from apps.planning.models import QueueSchedule
from apps.planning.services import queue_slots_replace
from apps.web.forms.common import zone_names
from tests.web import test_browser

# The browser fixtures of the main browser test, shared.
browser, site, page = test_browser.browser, test_browser.site, test_browser.page

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_zone_names_arrive_when_the_field_is_focused(page, alice, workspace_a):
    from playwright.sync_api import expect

    queue_slots_replace(workspace=workspace_a, slots=[(0, time(9))], timezone="")
    page.goto("/login/")
    page.get_by_label("Email").fill("alice@example.com")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Log in").click()

    page.goto("/w/ws-a/queue/slots/")
    names = page.locator("#id_timezone-names option")
    expect(names).to_have_count(0)
    field = page.get_by_label("Time zone")
    field.focus()
    expect(names).to_have_count(len(zone_names()))
    field.fill("Asia/Tokyo")
    page.get_by_role("button", name="Save the time zone").click()
    expect(page.get_by_text("Saved the time zone.")).to_be_visible()
    assert QueueSchedule.objects.get(workspace=workspace_a).timezone == "Asia/Tokyo"
