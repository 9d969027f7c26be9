import hashlib
import io
import struct

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from PIL import Image

from apps.common.errors import ValidationFailed
from apps.publications.services import media_asset_create


def image_bytes(fmt: str, size=(40, 30), frames: int = 1) -> bytes:
    out = io.BytesIO()
    images = [Image.new("RGB", size, (i * 40, 0, 0)) for i in range(frames)]
    extra = {"save_all": True, "append_images": images[1:]} if frames > 1 else {}
    images[0].save(out, format=fmt, **extra)
    return out.getvalue()


def box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def mp4_bytes(*, brand=b"isom", duration_s=12.5, width=1280, height=720) -> bytes:
    """A minimal ISO media file: ftyp, a media data box, then moov with mvhd and a track."""
    timescale = 1000
    mvhd = b"\x00\x00\x00\x00" + struct.pack(">IIII", 0, 0, timescale, int(duration_s * 1000))
    mvhd += b"\x00" * 80
    tkhd = b"\x00\x00\x00\x07" + struct.pack(">IIIII", 0, 0, 1, 0, 0) + b"\x00" * 8
    tkhd += b"\x00" * 8 + b"\x00" * 36 + struct.pack(">II", width << 16, height << 16)
    moov = box(b"moov", box(b"mvhd", mvhd) + box(b"trak", box(b"tkhd", tkhd)))
    return box(b"ftyp", brand + b"\x00\x00\x02\x00" + brand) + box(b"mdat", b"\x00" * 64) + moov


def upload(workspace, data: bytes, name="upload.bin", **kwargs):
    return media_asset_create(workspace=workspace, file=ContentFile(data, name=name), **kwargs)


@pytest.mark.parametrize(
    "fmt, mime",
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("WEBP", "image/webp"), ("GIF", "image/gif")],
)
def test_images_are_identified_by_content(workspace_a, fmt, mime):
    data = image_bytes(fmt)

    asset = upload(workspace_a, data, name="misleading.mp4", alt_text="A red square")

    assert (asset.kind, asset.mime_type) == ("image", mime)
    assert (asset.width, asset.height) == (40, 30)
    assert asset.size_bytes == len(data)
    assert asset.sha256 == hashlib.sha256(data).hexdigest()
    assert asset.original_name == "misleading.mp4"
    assert asset.alt_text == "A red square"
    assert asset.file.name.startswith(f"workspaces/{workspace_a.pk}/media/")
    assert asset.file.name.endswith("." + mime.split("/")[1].replace("jpeg", "jpg"))
    with default_storage.open(asset.file.name) as stored:
        assert stored.read() == data


def test_an_animated_gif_is_a_gif(workspace_a, bob):
    asset = upload(workspace_a, image_bytes("GIF", frames=3), created_by=bob)

    assert (asset.kind, asset.mime_type, asset.created_by) == ("gif", "image/gif", bob)


@pytest.mark.parametrize("brand, mime", [(b"isom", "video/mp4"), (b"qt  ", "video/quicktime")])
def test_videos_get_duration_and_dimensions_from_the_container(workspace_a, brand, mime):
    asset = upload(workspace_a, mp4_bytes(brand=brand))

    assert (asset.kind, asset.mime_type) == ("video", mime)
    assert (asset.width, asset.height, asset.duration_s) == (1280, 720, 12.5)


def test_a_video_without_a_track_header_keeps_what_could_be_read(workspace_a):
    data = mp4_bytes()
    movie = data.index(b"moov") - 4
    mvhd = data[movie + 8 : data.index(b"trak") - 4]
    asset = upload(workspace_a, data[:movie] + box(b"moov", mvhd))

    assert (asset.kind, asset.duration_s, asset.width) == ("video", 12.5, None)


def test_webm_is_recognized(workspace_a):
    asset = upload(workspace_a, b"\x1a\x45\xdf\xa3" + b"\x00" * 32)

    assert (asset.kind, asset.mime_type) == ("video", "video/webm")


@pytest.mark.parametrize(
    "data",
    [
        b"%PDF-1.7 not media",
        b"<svg xmlns='http://www.w3.org/2000/svg'/>",
        mp4_bytes(brand=b"heic"),
        image_bytes("BMP"),
    ],
)
def test_other_files_are_refused(workspace_a, data):
    with pytest.raises(ValidationFailed) as caught:
        upload(workspace_a, data, name="photo.jpg")

    assert caught.value.code == "MEDIA_TYPE_UNSUPPORTED"
    assert list(caught.value.details) == ["file"]


def test_uploads_over_the_limit_are_refused(workspace_a, settings):
    settings.MEDIA_MAX_UPLOAD_BYTES = 100

    with pytest.raises(ValidationFailed) as caught:
        upload(workspace_a, image_bytes("PNG", size=(200, 200)))

    assert caught.value.code == "MEDIA_TOO_LARGE"


def test_an_empty_file_is_refused(workspace_a):
    with pytest.raises(ValidationFailed):
        upload(workspace_a, b"")


def test_a_decompression_bomb_is_refused(workspace_a, monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)

    with pytest.raises(ValidationFailed) as caught:
        upload(workspace_a, image_bytes("PNG", size=(40, 30)))

    assert caught.value.code == "MEDIA_TOO_LARGE"
