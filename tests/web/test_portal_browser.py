"""The client portal in a real browser (Debian's chromium through Playwright), on a phone:
a client with no account opens the link, sees the post as it will go out (both parts and
the first comment), approves it, and the worker publishes it to the sandbox. Screenshots
land in test-output/screenshots/.

Skips without chromium, unless REQUIRE_BROWSER=1 (see tests/web/test_browser.py)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.approvals.models import ApprovalRule
from apps.approvals.portal import portal_link_create
from apps.publishing.services.publications import publication_create
from apps.publishing.services.reviews import review_submit
from apps.renditions.models import Rendition
from apps.sandbox.services import sandbox_account_create
from tests.sandbox.witness import witness_posts
from tests.web import test_browser
from tests.web.test_browser import PHONE, ZONE, drain, shot

browser, site = test_browser.browser, test_browser.site

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_client_approves_on_a_phone_and_the_post_goes_out(browser, site, workspace_a, alice, bob):
    from playwright.sync_api import expect

    ApprovalRule.objects.create(workspace=workspace_a, required=True)
    account = sandbox_account_create(workspace=workspace_a, handle="client-shop")
    draft = publication_create(
        workspace=workspace_a,
        author=bob,
        segments=[{"text": "Autumn sale starts now"}, {"text": "Ten stores, one weekend"}],
        destinations=[{"account": account.pk}],
        # Due as soon as it is approved (a time just passed is still taken).
        scheduled_at=timezone.now() + timedelta(seconds=2),
        first_comment="Find your store at example.com",
        timezone=ZONE,
    )
    review_submit(publication=draft, expected_revision=draft.revision, actor=bob)
    _link, token = portal_link_create(
        workspace=workspace_a,
        actor=alice,
        label="Acme shops",
        expires_at=timezone.now() + timedelta(days=3),
    )

    context = browser.new_context(base_url=site, viewport=PHONE, timezone_id=ZONE)
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(f"/portal/{token}/")
        post = page.locator(f"#post-{draft.pk}")
        expect(post).to_contain_text("Autumn sale starts now")
        expect(post).to_contain_text("Ten stores, one weekend")
        expect(post).to_contain_text("Find your store at example.com")
        expect(post.locator(".badge")).to_have_text("Waiting for you")
        # Nothing sideways on a phone: the page fits its width.
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        shot(page, "portal-01-phone")

        page.get_by_label("Note").fill("Go ahead")
        page.get_by_role("button", name="Approve").click()
        expect(page.locator(".messages")).to_contain_text("Approved: thank you")
        expect(page.locator(f"#post-{draft.pk} .badge")).to_have_text("Approved")
        expect(page.get_by_role("button", name="Approve")).to_have_count(0)
        shot(page, "portal-02-approved")
    finally:
        context.close()

    rendition = Rendition.objects.get(publication=draft)
    drain(lambda: Rendition.objects.get(pk=rendition.pk).status == Rendition.Status.PUBLISHED)
    texts = [post["text"] for post in witness_posts(site, "client-shop")]
    assert texts == ["Autumn sale starts now", "Ten stores, one weekend"]
