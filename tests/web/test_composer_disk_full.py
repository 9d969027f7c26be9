"""A full disk met by the composer: an upload into a part is refused next to that part
with nothing of the file kept and everything typed still in the form; a request whose files
cannot even be read is refused without a page, so the browser keeps the form."""

import errno

import pytest
from django.core.files.uploadhandler import TemporaryFileUploadHandler

from apps.publications.models import MediaAsset
from tests.api.test_media_disk_full import _stored_files, disk
from tests.web.test_composer import COMPOSE, HTMX, form, png

__all__ = ["disk"]  # fixtures

pytestmark = pytest.mark.django_db


def test_an_upload_meeting_a_full_disk_is_refused_next_to_its_part(as_alice, news, disk):
    disk.room = 10  # the write fails part-way
    files_before = set(_stored_files())
    data = form("every word of this stays", destinations=[news], op="upload")
    data["segment-0-file"] = png()

    response = as_alice.post(COMPOSE, data, **HTMX)

    assert response.status_code == 400
    page = response.content.decode()
    assert "photo.png: The server has no room to store this file right now" in page
    assert "every word of this stays" in page
    assert not MediaAsset.objects.exists()
    assert set(_stored_files()) == files_before  # the 10 bytes written were removed


def test_a_request_whose_files_cannot_be_read_is_refused_without_a_page(
    as_alice, news, settings, monkeypatch
):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # every file goes to a temporary file

    def full(self, raw_data, start):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(TemporaryFileUploadHandler, "receive_data_chunk", full)
    data = form("typed", destinations=[news], op="upload")
    data["segment-0-file"] = png()

    response = as_alice.post(COMPOSE, data, **HTMX)

    assert response.status_code == 507
    assert response["X-Refusal"].startswith("The server has no room")
    assert not MediaAsset.objects.exists()
