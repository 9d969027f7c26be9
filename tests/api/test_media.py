import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from apps.publications.models import MediaAsset
from tests.api.helpers import error, png_bytes

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
