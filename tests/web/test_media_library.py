"""The media library page: listing, search, alt text, delete, and who may do what."""

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from apps.publications.models import MediaAsset
from tests.api.helpers import png_bytes
from tests.factories import (
    MediaAssetFactory,
    PublicationFactory,
    PublicationSegmentFactory,
    RenditionMediaFactory,
    RenditionSegmentFactory,
    SegmentMediaFactory,
)

pytestmark = pytest.mark.django_db

URL = "/w/ws-a/media/"


def _used_by(asset, text="Launch day"):
    publication = PublicationFactory(workspace=asset.workspace)
    segment = PublicationSegmentFactory(publication=publication, text=text)
    SegmentMediaFactory(segment=segment, media=asset)
    return publication


def _aged(asset, days):
    MediaAsset.objects.filter(pk=asset.pk).update(created_at=timezone.now() - timedelta(days=days))


def test_it_lists_the_workspace_uploads_newest_first_with_their_facts(as_vera, workspace_a):
    old = MediaAssetFactory(workspace=workspace_a, original_name="old.png")
    _aged(old, 3)
    new = MediaAssetFactory(workspace=workspace_a, original_name="new.png", width=1080, height=720)
    video = MediaAssetFactory(
        workspace=workspace_a,
        original_name="clip.mp4",
        kind="video",
        mime_type="video/mp4",
        width=None,
        height=None,
        duration_s=12.5,
        size_bytes=2_500_000,
    )
    _aged(video, 1)
    _used_by(new, text="Our launch post")
    MediaAssetFactory(original_name="elsewhere.png")  # another workspace

    response = as_vera.get(URL)

    assert response.status_code == 200
    page = response.content.decode()
    assert page.index("new.png") < page.index("clip.mp4") < page.index("old.png")
    assert "elsewhere.png" not in page
    assert "1080×720" in page
    assert "12.5 s" in page and "2.4\xa0MB" in page
    assert "▶ video" in page
    assert f'src="/w/ws-a/media/{new.pk}/"' in page
    assert "Used in 1 post" in page and "Our launch post" in page
    assert page.count("Not used in any post.") == 2


def test_the_navigation_links_the_library(as_vera):
    page = as_vera.get("/w/ws-a/").content.decode()
    assert f'href="{URL}"' in page


def test_search_finds_file_names_and_alt_text_and_filters_by_kind(as_vera, workspace_a):
    MediaAssetFactory(workspace=workspace_a, original_name="beach.png")
    MediaAssetFactory(workspace=workspace_a, original_name="x.png", alt_text="A sunny BEACH")
    MediaAssetFactory(workspace=workspace_a, original_name="office.png")
    MediaAssetFactory(
        workspace=workspace_a, original_name="beach.gif", kind="gif", mime_type="image/gif"
    )

    page = as_vera.get(URL, {"q": "beach"}).content.decode()
    assert "beach.png" in page and "x.png" in page and "beach.gif" in page
    assert "office.png" not in page
    assert "3 files match" in page

    page = as_vera.get(URL, {"q": "beach", "kind": "gif"}).content.decode()
    assert "beach.gif" in page and "beach.png" not in page

    page = as_vera.get(URL, {"kind": "nonsense"}).content.decode()
    assert "office.png" in page  # an unknown kind filters nothing


def test_it_pages_the_uploads(as_vera, workspace_a):
    for i in range(25):
        asset = MediaAssetFactory(workspace=workspace_a, original_name=f"file-{i:02}.png")
        _aged(asset, i)

    first = as_vera.get(URL).content.decode()
    second = as_vera.get(URL, {"page": 2}).content.decode()

    assert "file-00.png" in first and "file-24.png" not in first
    assert "file-24.png" in second and "Page 2 of 2" in second


def test_an_editor_sets_the_default_alt_text_inline(as_bob, workspace_a):
    asset = MediaAssetFactory(workspace=workspace_a, original_name="dog.png")

    response = as_bob.post(
        f"{URL}{asset.pk}/alt-text/", {"alt_text": "  A dog on a sofa "}, HTTP_HX_REQUEST="true"
    )

    assert response.status_code == 200
    assert "A dog on a sofa</textarea>" in response.content.decode()
    assert "Saved." in response.content.decode()
    asset.refresh_from_db()
    assert asset.alt_text == "A dog on a sofa"


def test_the_default_alt_text_serves_attachments_without_their_own(as_bob, workspace_a):
    asset = MediaAssetFactory(workspace=workspace_a)
    publication = _used_by(asset)
    link = publication.segments.get().media_links.get()

    as_bob.post(f"{URL}{asset.pk}/alt-text/", {"alt_text": "A chart of sales"})

    link.refresh_from_db()
    assert link.effective_alt_text == "A chart of sales"


def test_too_long_alt_text_is_refused_and_keeps_the_old_one(as_bob, workspace_a):
    asset = MediaAssetFactory(workspace=workspace_a, alt_text="Kept")

    response = as_bob.post(
        f"{URL}{asset.pk}/alt-text/", {"alt_text": "x" * 5001}, HTTP_HX_REQUEST="true"
    )

    assert response.status_code == 400
    assert "The alt text is too long." in response.content.decode()
    asset.refresh_from_db()
    assert asset.alt_text == "Kept"


def test_a_viewer_sees_but_cannot_edit_upload_or_delete(as_vera, workspace_a):
    asset = MediaAssetFactory(workspace=workspace_a, alt_text="Seen")

    page = as_vera.get(URL).content.decode()
    assert "Seen" in page
    for action in (f"{URL}{asset.pk}/alt-text/", f"{URL}{asset.pk}/delete/", f"{URL}upload/"):
        assert action not in page
    assert "Save alt text" not in page

    assert as_vera.post(f"{URL}{asset.pk}/alt-text/", {"alt_text": "No"}).status_code == 403
    assert as_vera.post(f"{URL}{asset.pk}/delete/").status_code == 403
    upload = SimpleUploadedFile("a.png", png_bytes())
    assert as_vera.post(f"{URL}upload/", {"file": upload}).status_code == 403
    asset.refresh_from_db()
    assert asset.alt_text == "Seen"


def test_an_unused_upload_is_deleted_with_its_file(
    as_bob, workspace_a, django_capture_on_commit_callbacks
):
    asset = MediaAssetFactory(workspace=workspace_a, original_name="spare.png")
    storage, name = asset.file.storage, asset.file.name
    assert storage.exists(name)

    with django_capture_on_commit_callbacks(execute=True):
        response = as_bob.post(f"{URL}{asset.pk}/delete/", {"q": "spare"}, follow=True)

    assert response.redirect_chain[0][0] == f"{URL}?q=spare"
    assert "Deleted spare.png." in response.content.decode()
    assert not MediaAsset.objects.filter(pk=asset.pk).exists()
    assert not storage.exists(name)


@pytest.mark.parametrize("where", ["source", "destination"])
def test_a_used_upload_is_not_deleted(as_bob, workspace_a, where):
    asset = MediaAssetFactory(workspace=workspace_a, original_name="hero.png")
    if where == "source":
        _used_by(asset)
    else:
        segment = RenditionSegmentFactory(
            rendition__publication=PublicationFactory(workspace=workspace_a)
        )
        RenditionMediaFactory(rendition_segment=segment, media=asset)

    response = as_bob.post(f"{URL}{asset.pk}/delete/", follow=True)

    page = response.content.decode()
    assert "hero.png was not deleted: This file is used by 1 post" in page
    assert MediaAsset.objects.filter(pk=asset.pk).exists()


def test_another_workspaces_upload_is_404(as_charlie, as_alice, workspace_a, workspace_b):
    theirs = MediaAssetFactory(workspace=workspace_b, alt_text="Theirs")

    for path in (f"{theirs.pk}/alt-text/", f"{theirs.pk}/delete/"):
        assert as_alice.post(f"{URL}{path}", {"alt_text": "Mine"}).status_code == 404
    assert as_charlie.get(URL).status_code == 404
    theirs.refresh_from_db()
    assert theirs.alt_text == "Theirs"


def test_an_editor_uploads_from_the_library(as_bob, workspace_a):
    good = SimpleUploadedFile("logo.png", png_bytes(4, 4))
    bad = SimpleUploadedFile("notes.png", b"plain text")

    response = as_bob.post(
        f"{URL}upload/", {"file": [good, bad], "alt_text": "Our logo"}, follow=True
    )

    page = response.content.decode()
    assert "Uploaded 1 file." in page
    assert "notes.png:" in page
    asset = MediaAsset.objects.get(workspace=workspace_a)
    assert (asset.original_name, asset.alt_text, asset.width) == ("logo.png", "Our logo", 4)


def test_use_in_a_new_post_opens_the_composer_with_the_file_and_its_alt_text(
    as_bob, workspace_a, workspace_b
):
    asset = MediaAssetFactory(workspace=workspace_a, alt_text="A red square")
    theirs = MediaAssetFactory(workspace=workspace_b)

    library = as_bob.get(URL).content.decode()
    assert f'href="/w/ws-a/compose/?media={asset.pk}"' in library

    composer = as_bob.get("/w/ws-a/compose/", {"media": asset.pk}).content.decode()
    assert f'name="segment-0-media" value="{asset.pk}"' in composer
    assert "A red square" in composer

    other = as_bob.get("/w/ws-a/compose/", {"media": theirs.pk}).content.decode()
    assert f'value="{theirs.pk}"' not in other
    assert as_bob.get("/w/ws-a/compose/", {"media": "9" * 40}).status_code == 200
