"""Hostile uploads: a truncated video and a decompression bomb are refused with a clear
error (415 / 413 in the API's envelope; the composer: tests/web/test_upload_errors.py) and
nothing is stored."""

import struct
import zlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from apps.common.errors import ValidationFailed
from apps.publications import media_probe
from apps.publications.models import MediaAsset
from tests.api.helpers import error
from tests.publications.test_media import mp4_bytes, upload

VIDEO = mp4_bytes()
MOOV = VIDEO.index(b"moov") - 4


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def png_bomb(width: int = 100_000, height: int = 100_000) -> bytes:
    """A PNG of a few dozen bytes whose header claims width x height pixels (tens of
    gigabytes once decoded)."""
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)  # 1-bit greyscale
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + _chunk(b"IEND", b"")
    )


@pytest.mark.parametrize(
    "data",
    [
        VIDEO[:60],  # cut inside the media data
        VIDEO[: MOOV + 3],  # cut inside the movie box's header
        VIDEO[: MOOV + 20],  # cut inside the movie header
        VIDEO[: len(VIDEO) - 1],  # one byte short
        VIDEO[:MOOV],  # no movie header at all
    ],
    ids=["in-mdat", "in-moov-header", "in-mvhd", "one-byte-short", "no-moov"],
)
def test_a_truncated_video_is_refused(workspace_a, data):
    with pytest.raises(ValidationFailed) as caught:
        upload(workspace_a, data, name="clip.mp4")

    assert caught.value.code == "MEDIA_TYPE_UNSUPPORTED"
    assert "incomplete" in caught.value.message
    assert not MediaAsset.objects.exists()


def test_the_limit_is_set_explicitly():
    assert Image.MAX_IMAGE_PIXELS == media_probe.MAX_IMAGE_PIXELS == 8192 * 8192


@pytest.mark.parametrize(
    "size", [(100_000, 100_000), (8192, 8193)], ids=["bomb", "just-past-the-limit"]
)
def test_an_image_with_too_many_pixels_is_refused(workspace_a, size):
    with pytest.raises(ValidationFailed) as caught:
        upload(workspace_a, png_bomb(*size), name="photo.png")

    assert caught.value.code == "MEDIA_TOO_LARGE"
    assert "too many pixels" in caught.value.message
    assert not MediaAsset.objects.exists()


def test_an_image_at_the_limit_is_accepted(workspace_a):
    asset = upload(workspace_a, png_bomb(8192, 8192), name="big.png")

    assert (asset.width, asset.height) == (8192, 8192)


def _api_upload(client, content: bytes, name: str):
    file = SimpleUploadedFile(name, content, content_type="video/mp4")
    return client.post("/api/v1/media", {"file": file}, format="multipart")


def test_the_api_answers_415_for_a_truncated_video(api_a):
    response = _api_upload(api_a, VIDEO[:60], "clip.mp4")

    assert response.status_code == 415
    body = error(response)
    assert body["code"] == "MEDIA_TYPE_UNSUPPORTED"
    assert "incomplete" in body["details"]["file"][0]
    assert not MediaAsset.objects.exists()


def test_the_api_answers_413_for_a_decompression_bomb(api_a):
    response = _api_upload(api_a, png_bomb(), "photo.png")

    assert response.status_code == 413
    assert error(response)["code"] == "MEDIA_TOO_LARGE"
    assert not MediaAsset.objects.exists()
