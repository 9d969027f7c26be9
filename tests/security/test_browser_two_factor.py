"""Two-factor in a real browser: a person turns it on from their settings (scanning is
replaced by reading the key shown), then logs in with a code from the app."""

import time

import pyotp
import pytest

from tests.factories import UserFactory
from tests.web.test_browser import browser, page, site  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_person_turns_on_two_factor_and_logs_in_with_a_code(page, browser, site):  # noqa: F811
    from playwright.sync_api import expect

    UserFactory(email="dana@example.com")
    page.goto("/login/")
    page.get_by_label("Email").fill("dana@example.com")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Log in").click()

    page.goto("/settings/")
    page.get_by_role("link", name="Set up two-factor").click()
    page.get_by_role("button", name="Set up two-factor").click()
    expect(page.get_by_role("img", name="QR code of the setup key")).to_be_visible()
    secret = page.locator("#totp-secret").inner_text().replace(" ", "")
    page.get_by_label("Code from the app").fill(pyotp.TOTP(secret).now())
    page.get_by_role("button", name="Turn on two-factor").click()
    expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    assert page.locator("#recovery-codes li").count() == 10

    other = browser.new_context(base_url=site).new_page()
    other.goto("/login/")
    other.get_by_label("Email").fill("dana@example.com")
    other.get_by_label("Password").fill("correct horse battery")
    other.get_by_role("button", name="Log in").click()
    expect(other.get_by_role("heading", name="Enter your code")).to_be_visible()
    # The enrollment used this step's code; the next step's is accepted (clock drift).
    other.get_by_label("Code").fill(pyotp.TOTP(secret).at(time.time() + 30))
    other.get_by_role("button", name="Log in").click()
    other.goto("/settings/")
    expect(other.get_by_text("On: logging in asks for a code")).to_be_visible()
    other.context.close()
