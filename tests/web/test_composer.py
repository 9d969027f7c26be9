"""The composer: live checks counted as each platform counts, thread parts, media with alt
text, per-destination overrides, and save / schedule / publish now through the services,
with their errors shown by field path."""

import io
import zoneinfo
from datetime import datetime, time, timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone
from PIL import Image

from apps.publications.models import MediaAsset, Publication
from apps.publishing.services import publication_create
from apps.renditions.models import Rendition
from tests.factories import SocialAccountFactory

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


def png(name: str = "photo.png") -> SimpleUploadedFile:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 24), (200, 30, 30)).save(buffer, format="PNG")
    return SimpleUploadedFile(name, buffer.getvalue(), content_type="image/png")


def test_it_offers_the_workspaces_accounts_with_their_readiness(as_alice, news):
    SocialAccountFactory(workspace=news.workspace, platform="mastodon", handle="masto")
    page = as_alice.get(COMPOSE).content.decode()
    assert f'id="dest-{news.pk}"' in page
    assert "readiness-supported" in page  # the sandbox
    assert "readiness-experimental" in page  # mastodon, not validated live yet
    assert "In <strong>UTC</strong>" in page  # the zone the date and time are read in


def test_the_live_check_counts_per_destination_and_flags_the_one_over_its_limit(
    as_alice, news, short
):
    text = "x" * 50
    response = as_alice.post(CHECK, form(text, destinations=[news, short]), **HTMX)
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="seg-0-counts" class="counts" hx-swap-oob="true"' in page
    assert '<span class="count">@news 50/500' in page
    assert '<span class="count over">@short 50/40' in page
    # The summary names the field in words and the platform's own words, no field path.
    assert "destinations.1.segments.0.text" not in page
    assert "@short (Sandbox)" in page
    assert "50 characters; sandbox allows 40." in page
    assert f'id="tab-{short.pk}-badge"' in page
    assert "<html" not in page  # fragments only


def test_the_live_check_counts_as_each_platform_counts(as_alice, workspace_a):
    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="xacct")
    masto = SocialAccountFactory(workspace=workspace_a, platform="mastodon", handle="masto")
    link = "https://example.com/" + "a" * 80
    text = f"Hi 👋🏽 {link}"
    page = as_alice.post(CHECK, form(text, destinations=[x, masto]), **HTMX).content.decode()
    # X: "Hi " 3 + emoji 2 + " " 1 + any URL 23; Mastodon: graphemes, a URL counts 23.
    assert "@xacct 29/280" in page
    assert "@masto 28/500" in page


def test_it_adds_and_removes_thread_parts(as_alice, news):
    response = as_alice.post(COMPOSE, form("one", destinations=[news], op="add_segment"), **HTMX)
    page = response.content.decode()
    assert response.status_code == 200
    assert 'name="segment-1-text"' in page
    assert "Part 2 of 2" in page
    assert page.startswith('<form id="composer"') or '<form id="composer"' in page[:400]

    response = as_alice.post(COMPOSE, form("one", "two", op="remove_segment:0"), **HTMX)
    page = response.content.decode()
    assert 'name="segment-1-text"' not in page
    assert ">two</textarea>" in page


def test_it_uploads_media_with_a_preview_and_alt_text(as_alice, workspace_a, news):
    data = form("with a picture", destinations=[news], op="upload")
    data["segment-0-file"] = png()
    response = as_alice.post(COMPOSE, data, **HTMX)
    assert response.status_code == 200
    asset = MediaAsset.objects.get(workspace=workspace_a)
    page = response.content.decode()
    preview = reverse("media-file", kwargs={"workspace_slug": "ws-a", "pk": asset.pk})
    assert f'src="{preview}"' in page
    assert f'name="segment-0-media" value="{asset.pk}"' in page
    assert 'for="seg-0-alt-0">Alt text' in page

    file = as_alice.get(preview)
    assert file.status_code == 200
    assert file["Content-Type"] == "image/png"


def test_an_unsupported_upload_is_refused_next_to_its_part(as_alice, news):
    data = form("text", destinations=[news], op="upload")
    data["segment-0-file"] = SimpleUploadedFile("notes.txt", b"plain text", "text/plain")
    response = as_alice.post(COMPOSE, data, **HTMX)
    assert response.status_code == 400
    assert "notes.txt:" in response.content.decode()
    assert not MediaAsset.objects.exists()


def test_a_file_chosen_in_a_part_answers_only_that_parts_media(as_alice, workspace_a, news):
    data = form("with a picture", "second part", destinations=[news], op="attach", part="1")
    data["segment-1-file"] = png()
    response = as_alice.post(COMPOSE, data, **HTMX)

    assert response.status_code == 200
    asset = MediaAsset.objects.get(workspace=workspace_a)
    page = response.content.decode()
    # That part's media in place (with the alt text being written kept as it is in the
    # page), the checks and previews out of band; never the form or its texts.
    assert 'id="seg-1-media-area"' in page and 'id="seg-0-media-area"' not in page
    assert f'name="segment-1-media" value="{asset.pk}"' in page
    assert 'id="seg-1-alt-0"' in page and "hx-preserve" in page
    assert 'id="composer"' not in page and "with a picture</textarea>" not in page
    assert 'id="previews"' in page and 'hx-swap-oob="true"' in page


def test_a_refused_file_chosen_in_a_part_is_told_next_to_it(as_alice, news):
    data = form("text", destinations=[news], op="attach", part="0")
    data["segment-0-file"] = SimpleUploadedFile("notes.txt", b"plain text", "text/plain")
    response = as_alice.post(COMPOSE, data, **HTMX)

    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="seg-0-media-area"' in page and "notes.txt:" in page
    assert 'id="composer"' not in page


def test_it_saves_a_draft_with_media_and_alt_text(as_alice, alice, workspace_a, news):
    data = form("draft text", destinations=[news], op="upload")
    data["segment-0-file"] = png()
    as_alice.post(COMPOSE, data, **HTMX)
    asset = MediaAsset.objects.get()

    data = form("draft text", destinations=[news], op="save_draft")
    data["segment-0-media"] = [str(asset.pk)]
    data["segment-0-alt"] = ["A red square"]
    response = as_alice.post(COMPOSE, data)

    publication = Publication.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/w/ws-a/posts/{publication.pk}/"
    assert publication.status == "draft"
    assert publication.author == alice
    link = publication.segments.get().media_links.get()
    assert (link.media_id, link.alt_text) == (asset.pk, "A red square")


def test_it_schedules_at_a_wall_clock_time_in_the_users_zone(as_alice, alice, news):
    alice.display_timezone = "Europe/Warsaw"
    alice.save()
    day = (timezone.now() + timedelta(days=3)).date()
    data = form("later", destinations=[news], op="schedule", date=day.isoformat(), time="09:30")
    response = as_alice.post(COMPOSE, data, **HTMX)

    publication = Publication.objects.get()
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"/w/ws-a/posts/{publication.pk}/"
    zone = zoneinfo.ZoneInfo("Europe/Warsaw")
    assert publication.scheduled_at == datetime.combine(day, time(9, 30), zone)
    assert publication.timezone == "Europe/Warsaw"
    assert publication.status == "scheduled"


def test_scheduling_without_a_time_asks_for_one(as_alice, news):
    response = as_alice.post(COMPOSE, form("when?", destinations=[news], op="schedule"))
    assert response.status_code == 400
    assert "Pick a date and time, or use Publish now." in response.content.decode()
    assert not Publication.objects.exists()


def test_scheduling_an_over_limit_destination_is_refused_naming_the_field(as_alice, news, short):
    day = (timezone.now() + timedelta(days=1)).date().isoformat()
    data = form("y" * 60, destinations=[news, short], op="schedule", date=day, time="10:00")
    response = as_alice.post(COMPOSE, data, **HTMX)
    page = response.content.decode()
    assert response.status_code == 400
    assert 'class="error-summary compose-top"' in page
    assert f'<a href="#override-{short.pk}-0-text">' not in page  # it follows the source
    summary = '<a href="#seg-0-text">@short (Sandbox) › Text</a>: 60 characters; sandbox allows 40.'
    assert summary in page
    assert "destinations.1.segments.0.text" not in page
    assert not Publication.objects.exists()
    assert ">" + "y" * 60 + "</textarea>" in page  # nothing typed is lost


def test_a_per_destination_override_publishes_its_own_text(as_alice, news, short):
    data = form("A long opening part for everyone else.", "Second part", destinations=[news, short])
    data.update(
        {
            f"override-{short.pk}": "on",
            f"override-{short.pk}-0-text": "Short one.",
            f"override-{short.pk}-1-text": "",  # left out on this destination
            "op": "publish_now",
        }
    )
    response = as_alice.post(COMPOSE, data)
    assert response.status_code == 302
    publication = Publication.objects.get()
    texts = {
        r.social_account.handle: [s.text for s in r.segments.order_by("position")]
        for r in publication.renditions.all()
    }
    assert texts == {
        "news": ["A long opening part for everyone else.", "Second part"],
        "short": ["Short one."],
    }
    assert publication.status == "scheduled"
    assert abs(publication.scheduled_at - timezone.now()) < timedelta(seconds=30)


def test_turning_an_override_on_starts_from_the_source_text(as_alice, news):
    data = form("Source words", destinations=[news], op="refresh")
    data[f"override-{news.pk}"] = "on"
    page = as_alice.post(COMPOSE, data, **HTMX).content.decode()
    assert f'name="override-{news.pk}-0-text"' in page
    assert "Source words</textarea>" in page
    assert page.count("Source words</textarea>") == 2


def test_a_destination_tick_answers_only_what_depends_on_the_destinations(as_alice, news):
    data = form("Source words", destinations=[news], op="destinations")
    data[f"override-{news.pk}"] = "on"
    page = as_alice.post(COMPOSE, data, **HTMX).content.decode()

    # The per-destination section in place, the rest out of band; never the form, so
    # the source text (and whatever is typed in it meanwhile) is not sent back.
    assert 'id="per-destination"' in page and 'id="composer"' not in page
    assert 'name="segment-0-text"' not in page and 'name="destinations"' not in page
    assert f'id="tab-{news.pk}"' in page
    assert f'name="override-{news.pk}-0-text"' in page and "hx-preserve" in page
    for oob in ('id="seg-0-counts"', 'id="first-comment-hint"', 'id="previews"'):
        assert oob in page
    assert page.count('hx-swap-oob="true"') >= 4


def test_a_whole_form_answer_keeps_no_field_of_the_page(as_alice, news):
    # Only a tick keeps the fields being written (hx-preserve): a part added or a file
    # attached answers the whole form as the server reads it.
    data = form("Source words", destinations=[news], op="add_segment")
    data[f"override-{news.pk}"] = "on"
    page = as_alice.post(COMPOSE, data, **HTMX).content.decode()

    assert 'id="composer"' in page and "hx-preserve" not in page


@pytest.fixture
def scheduled(workspace_a, news, alice):
    return publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "first version"}],
        destinations=[{"account": news.pk}],
        scheduled_at=timezone.now() + timedelta(days=2),
        status="scheduled",
    )


def test_editing_opens_the_post_as_it_is(as_alice, scheduled, news):
    page = as_alice.get(f"/w/ws-a/posts/{scheduled.pk}/edit/").content.decode()
    assert ">first version</textarea>" in page
    assert f'value="{news.pk}" id="dest-{news.pk}"\n                     checked' in page
    assert f'name="revision" value="{scheduled.revision}"' in page
    assert "Save schedule" in page


def test_an_edit_saves_at_the_revision_it_was_made_against(as_alice, scheduled, news):
    local = scheduled.scheduled_at.astimezone(zoneinfo.ZoneInfo("UTC"))
    data = form(
        "second version",
        destinations=[news],
        op="schedule",
        revision=str(scheduled.revision),
        date=local.date().isoformat(),
        time=local.strftime("%H:%M"),
    )
    response = as_alice.post(f"/w/ws-a/posts/{scheduled.pk}/edit/", data)
    assert response.status_code == 302
    scheduled.refresh_from_db()
    assert scheduled.segments.get().text == "second version"
    assert scheduled.revision == 2


def test_a_stale_edit_keeps_what_was_typed_and_says_why(as_alice, scheduled, news):
    from apps.publishing.services import publication_update

    publication_update(
        publication=scheduled, expected_revision=1, segments=[{"text": "someone else's"}]
    )
    data = form("my version", destinations=[news], op="save_draft", revision="1")
    response = as_alice.post(f"/w/ws-a/posts/{scheduled.pk}/edit/", data, **HTMX)

    page = response.content.decode()
    assert response.status_code == 409
    assert "Someone else changed this post while you were editing it." in page
    assert ">my version</textarea>" in page
    assert 'name="revision" value="2"' in page  # saving again applies it on top
    scheduled.refresh_from_db()
    assert scheduled.segments.get().text == "someone else's"


def test_a_post_that_went_out_cannot_be_edited(as_alice, scheduled):
    Rendition.objects.filter(publication=scheduled).update(
        status="published", published_at=timezone.now(), provider_post_id="1"
    )
    response = as_alice.get(f"/w/ws-a/posts/{scheduled.pk}/edit/", follow=True)
    assert response.redirect_chain[-1][0] == f"/w/ws-a/posts/{scheduled.pk}/"
    assert "can no longer be edited" in response.content.decode()


def test_an_editor_may_save_drafts_and_schedule(as_bob, news):
    response = as_bob.post(COMPOSE, form("from bob", destinations=[news], op="publish_now"))
    assert response.status_code == 302
    assert Publication.objects.get().status == "scheduled"


def test_media_of_another_workspace_cannot_be_attached(as_alice, news, workspace_b):
    from tests.factories import MediaAssetFactory

    foreign = MediaAssetFactory(workspace=workspace_b)
    data = form("sneaky", destinations=[news], op="save_draft")
    data["segment-0-media"] = [str(foreign.pk)]
    data["segment-0-alt"] = ["x"]
    as_alice.post(COMPOSE, data)
    assert not Publication.objects.get().segments.get().media_links.exists()


def test_typed_settings_are_saved_as_their_type_and_shown_again(as_alice, workspace_a):
    reddit = SocialAccountFactory(workspace=workspace_a, platform="reddit", handle="redditor")
    key = reddit.pk
    data = form("body", destinations=[reddit], op="save_draft")
    data[f"setting-{key}-subreddit"] = "python"
    data[f"setting-{key}-title"] = "A title"
    data[f"setting-{key}-nsfw"] = "false"
    data[f"setting-{key}-sendreplies"] = "true"
    as_alice.post(COMPOSE, data)

    rendition = Rendition.objects.get()
    assert rendition.settings == {
        "subreddit": "python",
        "title": "A title",
        "nsfw": False,
        "sendreplies": True,
    }
    page = as_alice.get(f"/w/ws-a/posts/{rendition.publication_id}/edit/").content.decode()
    assert '<option value="false" selected>No</option>' in page
    assert '<option value="true" selected>Yes</option>' in page


# --- copy to a new post -----------------------------------------------------------------


def test_copy_to_a_new_post_prefills_the_composer_without_time_or_revision(
    as_alice, workspace_a, alice, news, short
):
    source = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "the source text"}],
        destinations=[
            {"account": news.pk},
            {"account": short.pk, "segments": [{"text": "short's own"}]},
        ],
        scheduled_at=timezone.now() + timedelta(days=2),
        status="scheduled",
    )
    page = as_alice.get(f"{COMPOSE}?copy={source.pk}").content.decode()
    assert "A copy of an earlier post" in page
    assert ">the source text</textarea>" in page
    assert ">short&#x27;s own</textarea>" in page
    assert f'id="dest-{news.pk}"\n                     checked' in page or "checked" in page
    assert 'name="revision"' not in page
    assert 'name="date" value=""' in page
    assert 'action="/w/ws-a/compose/"' in page  # saving makes a new post

    day = (timezone.now() + timedelta(days=3)).date().isoformat()
    data = form("the source text", destinations=[news], op="schedule", date=day, time="09:00")
    as_alice.post(COMPOSE, data)
    assert Publication.objects.count() == 2


def test_copy_of_another_workspaces_post_is_404(as_charlie, workspace_a, workspace_b, alice, news):
    source = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "secret"}],
        destinations=[{"account": news.pk}],
        status="draft",
    )
    response = as_charlie.get(f"/w/{workspace_b.slug}/compose/?copy={source.pk}")
    assert response.status_code == 404
    assert as_charlie.get(f"/w/{workspace_b.slug}/compose/?copy=abc").status_code == 404


def test_a_time_that_has_passed_is_told_in_the_users_zone(as_alice, alice, news):
    alice.display_timezone = "Asia/Tokyo"
    alice.save()
    data = form("late", destinations=[news], op="schedule", date="2020-05-01", time="08:30")
    response = as_alice.post(COMPOSE, data, **HTMX)
    assert response.status_code == 400
    page = response.content.decode()
    assert (
        "2020-05-01 at 08:30 (Asia/Tokyo) has passed. Pick a later time, or use Publish now."
        in page
    )
    assert "+00:00" not in page
    summary = page[
        page.index('id="error-summary"') : page.index("</ul>", page.index('id="error-summary"'))
    ]
    assert '<a href="#schedule-date">Schedule</a>: 2020-05-01 at 08:30 (Asia/Tokyo)' in summary
