"""An upload past MEDIA_MAX_UPLOAD_BYTES is dropped while it streams in, before it is
written whole: the handlers that keep the bytes never see more than the limit. The API
answers 413 MEDIA_TOO_LARGE, the composer a message beside the part, and the rest of the
form is kept."""

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import FileUploadHandler
from django.test import Client
from PIL import Image

from apps.publications.models import MediaAsset
from apps.sandbox.services import sandbox_account_create

pytestmark = pytest.mark.django_db

LIMIT = 100_000
SEEN: list[int] = []


class CountingHandler(FileUploadHandler):
    """Stands after the size limit, where the handlers that store bytes are: counts what
    reaches them."""

    def new_file(self, *args, **kwargs) -> None:
        super().new_file(*args, **kwargs)
        SEEN.append(0)

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        SEEN[-1] += len(raw_data)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


@pytest.fixture(autouse=True)
def _limit(settings):
    settings.MEDIA_MAX_UPLOAD_BYTES = LIMIT
    settings.FILE_UPLOAD_HANDLERS = [
        "apps.publications.uploads.SizeLimitUploadHandler",
        f"{__name__}.CountingHandler",
        *settings.FILE_UPLOAD_HANDLERS[1:],
    ]
    SEEN.clear()


def big_png(size: int) -> bytes:
    """A real PNG padded past `size` bytes (trailing bytes after IEND)."""
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(buffer, format="PNG")
    return buffer.getvalue() + b"\0" * size


def test_the_api_refuses_an_upload_as_it_passes_the_limit(api_a):
    # Small enough that its Content-Length passes the up-front check: the stream decides.
    response = api_a.post(
        "/api/v1/media",
        {"file": SimpleUploadedFile("big.png", big_png(LIMIT + 20_000))},
        format="multipart",
    )

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "MEDIA_TOO_LARGE"
    assert SEEN and max(SEEN) <= LIMIT
    assert not MediaAsset.objects.exists()


def test_an_upload_under_the_limit_is_stored(api_a):
    response = api_a.post(
        "/api/v1/media",
        {"file": SimpleUploadedFile("ok.png", big_png(LIMIT // 2))},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    assert [response.json()["size_bytes"]] == SEEN


def test_the_composer_says_which_file_was_too_large_and_keeps_the_text(alice, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="news")
    client = Client()
    client.force_login(alice)

    response = client.post(
        "/w/ws-a/compose/",
        {
            "segment_count": "1",
            "segment-0-text": "My words stay",
            "destinations": [str(account.pk)],
            "op": "upload",
            "segment-0-file": SimpleUploadedFile("huge.png", big_png(LIMIT * 3)),
        },
        HTTP_HX_REQUEST="true",
    )

    page = response.content.decode()
    assert response.status_code == 400
    assert f"huge.png: The file is larger than {LIMIT} bytes, the upload limit." in page
    assert "My words stay" in page
    assert max(SEEN) <= LIMIT
    assert not MediaAsset.objects.exists()
