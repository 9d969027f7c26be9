import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.publications.models import MediaAsset
from tests.api.helpers import error, png_bytes
from tests.factories import MediaAssetFactory, SegmentMediaFactory

URL = "/api/v1/media"


def upload(client, content: bytes, name: str = "a.png", **extra):
    file = SimpleUploadedFile(name, content, content_type="application/octet-stream")
    return client.post(URL, {"file": file, **extra}, format="multipart")


def test_it_stores_an_upload_typed_by_its_content(api_a, workspace_a):
    response = upload(api_a, png_bytes(8, 6), name="photo.jpg", alt_text="A red square")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["kind"], body["mime_type"]) == ("image", "image/png")
    assert (body["width"], body["height"]) == (8, 6)
    assert body["alt_text"] == "A red square"
    assert body["original_name"] == "photo.jpg"
    assert body["url"].startswith("http")
    assert MediaAsset.objects.get(pk=body["id"]).workspace == workspace_a

    shown = api_a.get(f"{URL}/{body['id']}")
    assert shown.status_code == 200
    assert shown.json()["sha256"] == body["sha256"]
    assert api_a.get(URL).json()["results"][0]["id"] == body["id"]


def test_an_unsupported_type_is_415_whatever_its_name(api_a):
    response = upload(api_a, b"just some text, not an image", name="cat.png")

    assert response.status_code == 415
    assert error(response)["code"] == "MEDIA_TYPE_UNSUPPORTED"
    assert not MediaAsset.objects.exists()


def test_a_file_over_the_limit_is_413(api_a, settings):
    settings.MEDIA_MAX_UPLOAD_BYTES = 50

    response = upload(api_a, png_bytes(64, 64))

    assert response.status_code == 413
    assert error(response)["code"] == "MEDIA_TOO_LARGE"


def test_a_body_that_cannot_fit_is_refused_before_it_is_read(api_a, settings):
    settings.MEDIA_MAX_UPLOAD_BYTES = 10

    response = upload(api_a, b"\x89PNG" + b"0" * 70_000)

    assert response.status_code == 413
    assert error(response)["code"] == "MEDIA_TOO_LARGE"


def test_a_missing_file_is_a_validation_error(api_a):
    response = api_a.post(URL, {"alt_text": "nothing"}, format="multipart")
    assert response.status_code == 400
    assert "file" in error(response)["details"]


@pytest.mark.parametrize("format_", ["json", None])
def test_other_content_types_are_415(api_a, format_):
    if format_:
        response = api_a.post(URL, {"file": "x"}, format="json")
    else:
        response = api_a.post(URL, b"raw", content_type="application/octet-stream")
    assert response.status_code == 415
    assert error(response)["code"] == "UNSUPPORTED_MEDIA_TYPE"


def test_an_upload_replayed_with_its_key_is_stored_once(api_a):
    first = api_a.post(
        URL,
        {"file": SimpleUploadedFile("a.png", png_bytes())},
        format="multipart",
        HTTP_IDEMPOTENCY_KEY="upload-1",
    )
    again = api_a.post(
        URL,
        {"file": SimpleUploadedFile("a.png", png_bytes())},
        format="multipart",
        HTTP_IDEMPOTENCY_KEY="upload-1",
    )

    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json()["replayed"] is True
    assert again.json()["id"] == first.json()["id"]
    assert MediaAsset.objects.count() == 1


# --- the library: search, alt text, delete ------------------------------------------------


def test_the_list_searches_names_and_alt_text_and_filters_by_kind(api_a, workspace_a):
    beach = MediaAssetFactory(workspace=workspace_a, original_name="beach.png")
    sunny = MediaAssetFactory(workspace=workspace_a, original_name="x.png", alt_text="Sunny Beach")
    MediaAssetFactory(workspace=workspace_a, original_name="office.png")
    gif = MediaAssetFactory(
        workspace=workspace_a, original_name="beach.gif", kind="gif", mime_type="image/gif"
    )
    MediaAssetFactory(original_name="beach-elsewhere.png")

    found = [m["id"] for m in api_a.get(URL, {"q": "BEACH"}).json()["results"]]
    assert found == [gif.pk, sunny.pk, beach.pk]
    assert [m["id"] for m in api_a.get(URL, {"q": "beach", "kind": "gif"}).json()["results"]] == [
        gif.pk
    ]


def test_an_unknown_kind_or_parameter_is_a_400(api_a):
    response = api_a.get(URL, {"kind": "audio"})
    assert response.status_code == 400
    assert "kind" in error(response)["details"]
    assert api_a.get(URL, {"search": "x"}).status_code == 400


def test_patch_sets_the_default_alt_text(api_a, workspace_a):
    link = SegmentMediaFactory(segment__publication__workspace=workspace_a)

    response = api_a.patch(f"{URL}/{link.media.pk}", {"alt_text": "A chart"}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["alt_text"] == "A chart"
    link.refresh_from_db()
    assert link.effective_alt_text == "A chart"
    cleared = api_a.patch(f"{URL}/{link.media.pk}", {"alt_text": ""}, format="json")
    assert cleared.json()["alt_text"] == ""
    assert MediaAsset.objects.get(pk=link.media.pk).alt_text == ""


@pytest.mark.parametrize(
    "body, field",
    [({"alt_text": "x" * 5001}, "alt_text"), ({}, "alt_text"), ({"kind": "gif"}, "kind")],
)
def test_patch_refuses_bad_bodies(api_a, workspace_a, body, field):
    asset = MediaAssetFactory(workspace=workspace_a, alt_text="Kept")

    response = api_a.patch(f"{URL}/{asset.pk}", body, format="json")

    assert response.status_code == 400
    assert field in error(response)["details"]
    asset.refresh_from_db()
    assert asset.alt_text == "Kept"


def test_delete_removes_an_unused_file(api_a, workspace_a, django_capture_on_commit_callbacks):
    asset = MediaAssetFactory(workspace=workspace_a)
    storage, name = asset.file.storage, asset.file.name

    with django_capture_on_commit_callbacks(execute=True):
        response = api_a.delete(f"{URL}/{asset.pk}")

    assert response.status_code == 204
    assert not MediaAsset.objects.filter(pk=asset.pk).exists()
    assert not storage.exists(name)
    assert api_a.get(f"{URL}/{asset.pk}").status_code == 404


def test_delete_refuses_a_file_in_use(api_a, workspace_a):
    link = SegmentMediaFactory(segment__publication__workspace=workspace_a)

    response = api_a.delete(f"{URL}/{link.media.pk}")

    assert response.status_code == 409
    body = error(response)
    assert body["code"] == "MEDIA_IN_USE"
    assert body["details"]["publications"] == [link.segment.publication.pk]
    assert MediaAsset.objects.filter(pk=link.media.pk).exists()


def test_another_workspaces_file_cannot_be_changed_or_deleted(api_b, workspace_a):
    asset = MediaAssetFactory(workspace=workspace_a, alt_text="Mine")

    assert api_b.patch(f"{URL}/{asset.pk}", {"alt_text": "x"}, format="json").status_code == 404
    assert api_b.delete(f"{URL}/{asset.pk}").status_code == 404
    asset.refresh_from_db()
    assert asset.alt_text == "Mine"
