"""What an htmx request's refusal tells the person, in a real browser: a 429 says it is a
rate limit and when to try again (from Retry-After), not "something went wrong"."""

import pytest

from tests.web.test_browser import browser, site  # noqa: F401 - fixtures

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def signed_in(browser, site, workspace_a, alice):  # noqa: F811 - the fixtures, passed in
    context = browser.new_context(base_url=site)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto("/login/")
    page.fill("input[name=username]", "alice@example.com")
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")
    page.wait_for_url("**/w/**")
    yield page
    context.close()


@pytest.mark.parametrize(
    ("headers", "words"),
    [
        ({"Retry-After": "42"}, "Try again in 42 s."),
        ({"Retry-After": "600"}, "Try again in 10 min."),
        ({}, "Try again shortly."),
    ],
)
def test_a_429_says_it_is_a_rate_limit_and_when_to_try_again(signed_in, headers, words):
    from playwright.sync_api import expect

    page = signed_in
    page.route(
        "**/probe/",
        lambda route: route.fulfill(status=429, headers=headers, body="Too many requests."),
    )

    page.evaluate("htmx.ajax('POST', '/probe/', {source: 'body', swap: 'none'})")

    toast = page.locator("#live-region")
    expect(toast).to_contain_text("rate limited")
    expect(toast).to_contain_text(words)
