"""The composer's previews and the edit-and-retry of a refused destination, in a real
browser (Debian's chromium through Playwright, as in test_browser.py). Screenshots of the
composer with its previews at desktop and phone width land in test-output/screenshots/.

Without chromium these tests skip, unless REQUIRE_BROWSER=1 (CI), where they fail.
"""

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone

from apps.publishing.services import publication_create
from apps.renditions.models import Rendition
from apps.sandbox.models import SandboxAccount
from apps.sandbox.services import sandbox_account_create
from tests.sandbox.witness import witness_posts
from tests.web.test_browser import DESKTOP, PHONE, ZONE, browser, drain, shot, site  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def signed_in(browser, site, alice, workspace_a):  # noqa: F811
    """A browser page with alice's session (admin of workspace A)."""
    alice.display_timezone = ZONE
    alice.save()
    client = Client()
    client.force_login(alice)
    session = client.cookies[django_settings.SESSION_COOKIE_NAME].value
    context = browser.new_context(base_url=site, viewport=DESKTOP, timezone_id=ZONE)
    context.add_cookies(
        [{"name": django_settings.SESSION_COOKIE_NAME, "value": session, "url": site}]
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def test_previews_follow_the_text_as_it_is_typed(signed_in, workspace_a):
    from playwright.sync_api import expect

    page = signed_in
    news = sandbox_account_create(workspace=workspace_a, handle="news")
    short = sandbox_account_create(
        workspace=workspace_a, handle="short", behaviour={"text_limit": 40}
    )
    page.goto("/w/ws-a/compose/")
    expect(page.locator("#previews")).to_contain_text("Pick destinations")
    page.locator(f"#dest-{news.pk}").check()
    expect(page.locator(f"#preview-{news.pk}")).to_be_visible()
    page.locator(f"#dest-{short.pk}").check()
    expect(page.locator(f"#preview-{short.pk}")).to_be_visible()

    # Typing updates every preview in place: the short account's cut, the link card.
    text = "Spring sale: everything half price at https://shop.example.com/sale today only"
    page.get_by_label("Text", exact=True).press_sequentially(text[:30])
    expect(page.locator(f"#preview-{news.pk} .preview-text")).to_have_text(text[:30])
    page.get_by_label("Text", exact=True).fill(text)
    expect(page.locator(f"#preview-{news.pk} .preview-text")).to_have_text(text)
    cut = page.locator(f"#preview-{short.pk} .preview-cut")
    expect(cut).to_have_text(text[40:])
    expect(page.locator(f"#preview-{short.pk}")).to_contain_text("Sandbox takes 40")
    expect(page.locator(f"#preview-{news.pk} .link-domain")).to_have_text("shop.example.com")
    expect(page.locator(f"#preview-{news.pk} .preview-avatar")).to_have_text("SN")
    # The destination's tab shows its own copy, kept in step.
    expect(page.locator(f"#tab-preview-{news.pk} .preview-text")).to_have_text(text)
    # The first comment shows under the post as it is typed; the post's text stays.
    page.locator("#first-comment").press_sequentially("More at the shop")
    comment = page.locator(f"#preview-{news.pk} .preview-comment-text")
    expect(comment).to_have_text("More at the shop")
    expect(page.locator("#first-comment")).to_have_value("More at the shop")
    expect(page.get_by_label("Text", exact=True)).to_have_value(text)

    # A second part makes a thread; the text typed so far stays.
    page.get_by_role("button", name="+ Add a part (thread)").click()
    page.get_by_label("Text of part 2").fill("And part two of the thread.")
    thread = page.locator(f"#preview-{news.pk} .preview-thread.is-thread .preview-post")
    expect(thread).to_have_count(2)
    expect(thread.nth(1)).to_contain_text("And part two of the thread.")
    expect(page.get_by_label("Text of part 1")).to_have_value(text)
    page.locator("#previews").scroll_into_view_if_needed()
    shot(page, "composer-previews-desktop")

    page.set_viewport_size(PHONE)
    expect(page.locator(f"#preview-{short.pk} .preview-cut")).to_be_visible()
    shot(page, "composer-previews-phone")


def test_a_refused_destination_is_edited_and_retried_from_the_post(signed_in, site, workspace_a):  # noqa: F811
    from playwright.sync_api import expect

    page = signed_in
    picky = sandbox_account_create(workspace=workspace_a, handle="picky")
    # The platform tightened its rules after the post was scheduled: it now refuses
    # anything over 20 characters, which our side could not know.
    SandboxAccount.objects.filter(handle="picky").update(
        behaviour={**SandboxAccount.objects.get(handle="picky").behaviour, "text_limit": 20}
    )
    publication = publication_create(
        workspace=workspace_a,
        author=None,
        segments=[{"text": "A text that is far too long for picky now."}],
        destinations=[{"account": picky.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    rendition = publication.renditions.get()
    drain(lambda: Rendition.objects.get(pk=rendition.pk).status == "failed")

    page.goto(f"/w/ws-a/posts/{publication.pk}/")
    card = page.locator(f"#rendition-{rendition.pk}")
    expect(card).to_contain_text("Content rejected")
    expect(card.get_by_role("link", name="Copy to a new post")).to_be_visible()
    card.get_by_role("link", name="Edit this destination's text and retry").click()

    field = page.get_by_label("Text for @picky")
    expect(field).to_have_value("A text that is far too long for picky now.")
    field.fill("Short and sweet.")
    shot(page, "post-edit-and-retry")
    page.get_by_role("button", name="Save and retry @picky").click()
    expect(page.get_by_text("Saved the new text for @picky and sending it now.")).to_be_visible()

    drain(lambda: Rendition.objects.get(pk=rendition.pk).status == "published")
    page.reload()
    card = page.locator(f"#rendition-{rendition.pk}")
    expect(card.locator("[data-status]")).to_have_text("Published")
    expect(card.locator(".sent-text")).to_have_text("Short and sweet.")
    expect(card.get_by_role("link", name="View on Sandbox")).to_be_visible()
    texts = [post["text"] for post in witness_posts(site, "picky", workspace_a)]
    assert texts == ["Short and sweet."]
