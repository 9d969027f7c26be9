"""A full disk during an upload (POST /api/v1/media, the media library): a clear 507
INSUFFICIENT_STORAGE, and nothing half-stored (no partial file, no row)."""

import errno
import os
import types
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.messages import get_messages
from django.core.files.storage import filesystem
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.test import Client

from apps.publications.models import MediaAsset
from tests.api.helpers import png_bytes

pytestmark = pytest.mark.django_db

URL = "/api/v1/media"


class Disk:
    """A disk with `room` bytes left: a write past it writes what fits, then fails with
    ENOSPC, as the kernel does."""

    def __init__(self, room: int) -> None:
        self.room = room

    def file(self, opened):
        disk = self

        class Filling:
            def write(self, data):
                if len(data) > disk.room:
                    opened.write(data[: disk.room])
                    opened.flush()
                    disk.room = 0
                    raise OSError(errno.ENOSPC, "No space left on device")
                disk.room -= len(data)
                return opened.write(data)

            def __getattr__(self, name):
                return getattr(opened, name)

        return Filling()


@pytest.fixture
def disk(monkeypatch):
    """The storage's disk, 100 bytes from full (FileSystemStorage writes an upload through
    os.fdopen); set `disk.room` to change it."""
    full = Disk(room=100)
    real = os.fdopen

    def fdopen(fd, mode="r", *args, **kwargs):
        opened = real(fd, mode, *args, **kwargs)
        return full.file(opened) if "w" in mode else opened

    fake_os = types.SimpleNamespace(**{n: getattr(os, n) for n in dir(os) if n[0] != "_"})
    fake_os.fdopen = fdopen
    monkeypatch.setattr(filesystem, "os", fake_os)
    return full


def _stored_files() -> list[Path]:
    root = Path(settings.MEDIA_ROOT)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def _png(name="photo.png"):
    return SimpleUploadedFile(name, png_bytes(64, 64), content_type="image/png")


def test_an_api_upload_meeting_a_full_disk_is_507_and_leaves_nothing(api_a, disk):
    assert len(png_bytes(64, 64)) > 100  # the write does fail part-way

    response = api_a.post(URL, {"file": _png()}, format="multipart")

    assert response.status_code == 507
    error = response.json()["error"]
    assert error["code"] == "INSUFFICIENT_STORAGE"
    assert "nothing was saved" in error["message"]
    assert not MediaAsset.objects.exists()
    assert _stored_files() == []  # the 100 bytes written were removed


def test_without_the_full_disk_the_same_upload_is_stored(api_a):
    assert api_a.post(URL, {"file": _png()}, format="multipart").status_code == 201
    assert len(_stored_files()) == 1


def test_a_full_disk_while_the_request_is_read_is_507_too(api_a, settings, monkeypatch):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # every file goes to a temporary file

    def full(self, raw_data, start):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(TemporaryFileUploadHandler, "receive_data_chunk", full)
    response = api_a.post(URL, {"file": _png()}, format="multipart")

    assert response.status_code == 507
    assert response.json()["error"]["code"] == "INSUFFICIENT_STORAGE"
    assert not MediaAsset.objects.exists()


def test_another_storage_error_is_not_dressed_up_as_a_full_disk(api_a, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(filesystem.FileSystemStorage, "_save", broken)
    with pytest.raises(OSError, match="Permission denied"):
        api_a.post(URL, {"file": _png()}, format="multipart")
    assert not MediaAsset.objects.exists()


def test_the_media_library_upload_says_the_disk_is_full_keeping_the_files_before(
    alice, workspace_a, disk
):
    disk.room = len(png_bytes(64, 64)) + 10  # room for one file, not two
    client = Client()
    client.force_login(alice)

    response = client.post(
        f"/w/{workspace_a.slug}/media/upload/",
        {"file": [_png("one.png"), _png("two.png")]},
    )

    assert response.status_code == 507
    notes = [str(m) for m in get_messages(response.wsgi_request)]
    assert "Uploaded 1 file." in notes
    assert any(n.startswith("two.png: The server has no room") for n in notes)
    assert list(MediaAsset.objects.values_list("original_name", flat=True)) == ["one.png"]
    assert len(_stored_files()) == 1  # one.png whole; nothing of two.png
