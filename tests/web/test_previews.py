"""The composer's previews per network: the account as the network shows it, the text cut
where the platform's limit cuts it (counted its way, the count shown), folded where its
feed folds it, threads split as they are published, link cards, media order, crop and
layout, the first comment, the reconnect warning; sent live with the checks while typing,
among all the previews and in each destination's tab."""

import io
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from apps.providers.text_counting import Counter
from apps.publications.models import Publication
from apps.web.composer.previews import cut_at_limit, fold_at, initials
from tests.factories import MediaAssetFactory, SocialAccountFactory

pytestmark = pytest.mark.django_db

COMPOSE = "/w/ws-a/compose/"
CHECK = "/w/ws-a/compose/check/"
HTMX = {"HTTP_HX_REQUEST": "true"}


def form(*texts: str, destinations=(), **extra) -> dict:
    data = {"segment_count": str(len(texts))}
    for i, text in enumerate(texts):
        data[f"segment-{i}-text"] = text
    data["destinations"] = [str(a.pk) for a in destinations]
    data.update(extra)
    return data


def preview_of(page: str, account) -> str:
    """The HTML of one account's preview card."""
    start = page.index(f'id="preview-{account.pk}"')
    return page[start : page.index("</article>", start)]


def png() -> SimpleUploadedFile:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), (10, 120, 200)).save(buffer, format="PNG")
    return SimpleUploadedFile("wide.png", buffer.getvalue(), content_type="image/png")


# --- the cut, counted the platform's way ------------------------------------------------


def test_the_cut_falls_at_the_limit_in_graphemes():
    text = "👨‍👩‍👧" * 3 + "abc"  # a family emoji is one grapheme cluster
    assert cut_at_limit(text, Counter.GRAPHEMES, 4, url_length=23) == 4
    assert cut_at_limit(text, Counter.GRAPHEMES, 100, url_length=23) == 6


def test_the_cut_counts_a_link_as_x_counts_it():
    link = "https://example.com/" + "a" * 60  # 80 characters, 23 on X
    text = link + " " + "b" * 250  # 23 + 1 + 250 = 274 weighted: fits 280
    assert cut_at_limit(text, Counter.X_WEIGHTED, 280, url_length=23) == len(text)
    assert cut_at_limit(text + "c" * 10, Counter.X_WEIGHTED, 280, url_length=23) == len(text) + 6


def test_initials_come_from_the_name():
    assert initials("Daily News") == "DN"
    assert initials("news") == "NE"
    assert initials("anna.kowalska") == "AK"
    assert initials("") == "?"


# --- the live previews ------------------------------------------------------------------


def test_the_live_check_sends_a_preview_per_destination(as_alice, news, short):
    text = "Spring sale starts today at our shop, everything half price!"  # 60 characters
    response = as_alice.post(CHECK, form(text, destinations=[news, short]), **HTMX)
    assert response.status_code == 200
    page = response.content.decode()
    assert '<div id="previews" class="previews" hx-swap-oob="true">' in page

    fits = preview_of(page, news)
    assert "<strong" in fits and "Sandbox @news</strong>" in fits  # its display name
    assert "@news · Sandbox" in fits
    assert '<span class="preview-avatar" aria-hidden="true">SN</span>' in fits
    assert f'<p class="preview-text">{text}</p>' in fits
    assert "preview-cut" not in fits

    cut = preview_of(page, short)  # takes 40
    assert f'<p class="preview-text">{text[:40]}<del class="preview-cut"' in cut
    assert f">{text[40:]}</del>" in cut
    assert "Sandbox takes 40: the struck-through end does not fit." in cut


def test_a_thread_previews_as_a_thread_where_the_platform_threads(as_alice, news, workspace_a):
    gram = SocialAccountFactory(workspace=workspace_a, platform="instagram", handle="gram")
    data = form("Part one", "Part two", destinations=[news, gram])
    page = as_alice.post(CHECK, data, **HTMX).content.decode()
    thread = preview_of(page, news)
    assert 'class="preview-thread is-thread" aria-label="Thread of 2"' in thread
    assert thread.index("Part one") < thread.index("Part two")
    single = preview_of(page, gram)
    assert "Part two" not in single
    assert (
        "Instagram publishes no threads: a post of 2 parts cannot be scheduled there. Write "
        "@gram's own text and leave the other parts empty, or keep to one part."
    ) in single


def test_a_link_gets_a_card_with_its_domain(as_alice, news, workspace_a):
    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="xacct")
    gram = SocialAccountFactory(workspace=workspace_a, platform="instagram", handle="gram")
    text = "Read it at https://www.example.org/posts/42?ref=feed."
    page = as_alice.post(CHECK, form(text, destinations=[news, x, gram]), **HTMX).content.decode()
    card = preview_of(page, news)
    assert 'data-link="https://www.example.org/posts/42?ref=feed"' in card
    assert '<span class="link-domain">example.org</span>' in card
    assert "link-card" in preview_of(page, x)
    assert "link-card" not in preview_of(page, gram)  # links are not clickable there


def test_x_makes_a_card_of_a_bare_domain(as_alice, workspace_a):
    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="xacct")
    page = as_alice.post(CHECK, form("see example.com", destinations=[x]), **HTMX).content.decode()
    assert '<span class="link-domain">example.com</span>' in preview_of(page, x)


def test_media_show_in_order_cropped_as_the_feed_crops_them(as_alice, news, workspace_a):
    gram = SocialAccountFactory(workspace=workspace_a, platform="instagram", handle="gram")
    first = MediaAssetFactory(workspace=workspace_a, original_name="first.png")
    second = MediaAssetFactory(workspace=workspace_a, original_name="second.png")
    data = form("Two photos", destinations=[news, gram])
    data["segment-0-media"] = [str(first.pk), str(second.pk)]
    data["segment-0-alt"] = ["the first", "the second"]
    page = as_alice.post(CHECK, data, **HTMX).content.decode()
    cropped = preview_of(page, gram)
    assert cropped.count('class="preview-frame frame-4-5"') == 2
    assert cropped.index('alt="the first"') < cropped.index('alt="the second"')
    assert "Shown cropped to 4:5, as the Instagram feed frames it, in this order." in cropped
    natural = preview_of(page, news)
    assert 'class="preview-frame"' in natural  # its own shape: no crop drawn
    assert "link-card" not in natural


def test_media_past_the_platforms_limit_are_marked_not_sent(as_alice, news, workspace_a):
    assets = [MediaAssetFactory(workspace=workspace_a) for _ in range(5)]  # the sandbox takes 4
    data = form("Five photos", destinations=[news])
    data["segment-0-media"] = [str(a.pk) for a in assets]
    page = as_alice.post(CHECK, data, **HTMX).content.decode()
    card = preview_of(page, news)
    assert card.count("preview-frame") == 5
    assert card.count("left-out") == 1
    assert "Not sent: over Sandbox's limit" in card


def test_an_override_previews_its_own_text(as_alice, news, short):
    data = form(
        "The long text everyone else gets, far too long for short.", destinations=[news, short]
    )
    data.update({f"override-{short.pk}": "on", f"override-{short.pk}-0-text": "Short one."})
    page = as_alice.post(CHECK, data, **HTMX).content.decode()
    assert '<p class="preview-text">Short one.</p>' in preview_of(page, short)
    assert "far too long" in preview_of(page, news)


def test_the_composer_page_shows_the_previews_and_an_upload_keeps_them(as_alice, news):
    page = as_alice.get(COMPOSE).content.decode()
    assert 'id="previews-heading">Previews</h2>' in page
    assert "Pick destinations to see how the post will look on each." in page
    data = form("With a picture", destinations=[news], op="upload")
    data["segment-0-file"] = png()
    page = as_alice.post(COMPOSE, data, **HTMX).content.decode()
    card = preview_of(page, news)
    assert '<img src="/w/ws-a/media/' in card


def test_the_composer_warns_about_a_destination_that_needs_reconnecting(as_alice, news):
    news.status = "needs_reconnect"
    news.save()
    page = as_alice.get(COMPOSE).content.decode()
    assert "Needs reconnecting: posts to it fail until an admin reconnects it." in page
    checked = as_alice.post(CHECK, form("Hello", destinations=[news]), **HTMX).content.decode()
    assert "@news needs reconnecting: publishing to it fails until an admin reconnects it." in (
        checked
    )
    assert f'href="/w/ws-a/accounts/#account-{news.pk}">Reconnect @news</a>' in checked
    assert 'data-warning="reconnect"' in preview_of(checked, news)


def test_an_editor_is_warned_without_a_link_they_cannot_use(as_bob, news):
    news.status = "needs_reconnect"
    news.save()
    checked = as_bob.post(CHECK, form("Hello", destinations=[news]), **HTMX).content.decode()
    assert "@news needs reconnecting" in checked
    assert "Reconnect @news</a>" not in checked


def test_an_outsiders_accounts_and_media_never_preview(as_charlie, news, workspace_b):
    asset = MediaAssetFactory(workspace=news.workspace)
    data = form("Hi", destinations=[news])
    data["segment-0-media"] = [str(asset.pk)]
    response = as_charlie.post("/w/ws-a/compose/check/", data, **HTMX)
    assert response.status_code == 404
    own = as_charlie.post(f"/w/{workspace_b.slug}/compose/check/", data, **HTMX)
    assert own.status_code == 200
    assert f'id="preview-{news.pk}"' not in own.content.decode()


# --- counted, folded and split as each network does -------------------------------------

ACCENTED = "Cafe\u0301"  # "Café" with a combining accent: 5 code points, 4 graphemes


def test_the_count_is_x_weighted_and_bluesky_graphemes(as_alice, workspace_a):
    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="xacct")
    sky = SocialAccountFactory(workspace=workspace_a, platform="bluesky", handle="sky")
    url = "https://example.com/a/very/long/path"  # 36 characters
    text = "日本語" * 10 + " 👋🏽 " + ACCENTED + " " + url
    page = as_alice.post(CHECK, form(text, destinations=[x, sky]), **HTMX).content.decode()

    # X: CJK 2 each (60), spaces 1 (3), an emoji with its skin tone 2, NFC "Café" 4, a link 23.
    assert 'data-count="92">92 / 280 weighted characters' in preview_of(page, x)
    # Bluesky: 30 + 3 + 1 + 4 + 36 user-perceived characters, the link as written.
    assert 'data-count="74">74 / 300 characters' in preview_of(page, sky)
    assert "img/platforms/x.svg" in preview_of(page, x)  # each card carries its network's mark


def test_x_cuts_cjk_at_half_the_characters(as_alice, workspace_a):
    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="xacct")
    text = "語" * 141  # 282 weighted
    page = as_alice.post(CHECK, form(text, destinations=[x]), **HTMX).content.decode()
    card = preview_of(page, x)
    assert f'<p class="preview-text">{"語" * 140}<del class="preview-cut"' in card
    assert 'data-count="282"' in card


def test_a_thread_splits_as_it_is_published(as_alice, workspace_a, news):
    sky = SocialAccountFactory(workspace=workspace_a, platform="bluesky", handle="sky")
    data = form("One", "Two", "Three", destinations=[news, sky])
    # Bluesky gets its own text, its second part left empty: a thread of two there.
    data.update({f"override-{sky.pk}": "on", f"override-{sky.pk}-0-text": "Uno"})
    data.update({f"override-{sky.pk}-1-text": "", f"override-{sky.pk}-2-text": "Tres"})
    page = as_alice.post(CHECK, data, **HTMX).content.decode()
    saved = as_alice.post(COMPOSE, {**data, "op": "save_draft"}, **HTMX)
    assert saved.status_code == 200

    publication = Publication.objects.get()
    for account in (news, sky):
        rendition = publication.renditions.get(social_account=account)
        sent = [segment.text for segment in rendition.segments.order_by("position")]
        shown = re.findall(r'<p class="preview-text">([^<]*)</p>', preview_of(page, account))
        assert shown == sent
    assert sent == ["Uno", "Tres"]


def test_a_feed_folds_a_long_text_where_that_network_folds_it(as_alice, workspace_a, news):
    linked = SocialAccountFactory(workspace=workspace_a, platform="linkedin", handle="co")
    text = "word " * 60  # 300 characters
    page = as_alice.post(CHECK, form(text, destinations=[news, linked]), **HTMX).content.decode()
    folded = preview_of(page, linked)
    # At most 210 characters, back to the last space: 41 words.
    assert '<span class="preview-more" data-fold="204">…see more</span>' in folded
    assert f'<p class="preview-text">{text[:204]}<span' in folded
    assert "preview-more" not in preview_of(page, news)  # shown whole
    assert fold_at("one\ntwo\nthree\nfour", "linkedin") == len("one\ntwo\nthree")
    assert fold_at("short", "instagram") is None


def test_the_first_comment_shows_as_each_network_takes_it(as_alice, workspace_a):
    sky = SocialAccountFactory(workspace=workspace_a, platform="bluesky", handle="sky")
    linked = SocialAccountFactory(workspace=workspace_a, platform="linkedin", handle="co")
    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="xacct")
    data = form("Post", destinations=[sky, linked, x], first_comment="Link in here")
    page = as_alice.post(CHECK, data, **HTMX).content.decode()

    assert 'data-first-comment="reply"' in preview_of(page, sky)
    assert "First comment: a reply under the post" in preview_of(page, sky)
    assert 'data-first-comment="comment"' in preview_of(page, linked)
    assert "X takes no first comment: the post goes out without it." in preview_of(page, x)


def test_each_destination_tab_shows_its_own_preview(as_alice, news, short):
    data = form("Hello there", destinations=[news, short])
    opened = as_alice.post(COMPOSE, {**data, "op": "refresh"}).content.decode()
    panel = opened[opened.index(f'id="panel-{news.pk}"') :]
    panel = (
        panel[: panel.index('role="tabpanel"', 20)] if 'role="tabpanel"' in panel[20:] else panel
    )
    assert f'id="tab-preview-{news.pk}"' in panel

    checked = as_alice.post(CHECK, data, **HTMX).content.decode()
    assert f'id="tab-preview-{short.pk}" aria-labelledby="tab-preview-{short.pk}-name"' in checked
    assert checked.count('hx-swap-oob="true"') >= 3  # all the previews, and each tab's copy

    ticked = as_alice.post(COMPOSE, {**data, "op": "destinations"}, **HTMX).content.decode()
    assert ticked.count(f'id="tab-preview-{news.pk}"') == 1  # in its tab, not again out of band
