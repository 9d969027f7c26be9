"""Uploads: their size checked while the request streams in, and their bytes stored whole
or not at all.

SizeLimitUploadHandler runs first in FILE_UPLOAD_HANDLERS: it sees every chunk before the
handlers that keep the bytes (in memory, then a temporary file), and drops a file the moment
it passes MEDIA_MAX_UPLOAD_BYTES, so no more than the limit is ever written. The rest of
the request is still read (its other fields are kept); the views ask `refused_uploads()`
which files were dropped, to answer with a clear error instead of a missing file.

A full disk (ENOSPC, or a full quota: EDQUOT), while the request's temporary file is written
or while the storage writes the media file, is InsufficientStorage (507
INSUFFICIENT_STORAGE): `store_upload` removes the part of the file already written, and the
views turn a full disk met while reading the request into the same error.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings
from django.core.files import File
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.db.models.fields.files import FieldFile
from django.http import HttpRequest

from apps.common.errors import DomainError

_DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


class InsufficientStorage(DomainError):
    """The server's disk is full: nothing of the upload was kept; trying later may work."""

    code = "INSUFFICIENT_STORAGE"
    http_status = 507

    def __init__(self) -> None:
        super().__init__(
            "The server has no room to store this file right now; nothing was saved. "
            "Try again later, or tell the site's operators."
        )


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in _DISK_FULL


@contextlib.contextmanager
def disk_full_refused() -> Iterator[None]:
    """Turn a full disk met inside the block (reading the request's files) into
    InsufficientStorage; any other error goes on as it is."""
    try:
        yield
    except OSError as exc:
        if is_disk_full(exc):
            raise InsufficientStorage() from exc
        raise


def store_upload(field_file: FieldFile, content: File) -> None:
    """Save `content` as the field's file (not the row), whole or not at all.

    The name is chosen before writing (media names are random), so a write that fails
    half-way (a full disk) leaves no orphan: the part written is removed, and the error is
    InsufficientStorage when the disk is full, else the storage's own.
    """
    storage, field = field_file.storage, field_file.field
    name = field.generate_filename(field_file.instance, "upload")
    name = storage.get_available_name(name, max_length=field.max_length)
    try:
        stored = storage.save(name, content, max_length=field.max_length)
    except Exception as exc:
        with contextlib.suppress(Exception):
            if storage.exists(name):
                storage.delete(name)
        if is_disk_full(exc):
            raise InsufficientStorage() from exc
        raise
    setattr(field_file.instance, field.attname, stored)  # as FieldFile.save(save=False)


_REFUSED = "_refused_uploads"


@dataclass(frozen=True)
class RefusedUpload:
    field_name: str
    file_name: str
    limit_bytes: int

    @property
    def message(self) -> str:
        return f"The file is larger than {self.limit_bytes} bytes, the upload limit."


def refused_uploads(request: HttpRequest, *, field_name: str | None = None) -> list[RefusedUpload]:
    """Files of this request dropped for their size (those of one field if named)."""
    refused = getattr(request, "_request", request).__dict__.get(_REFUSED, [])
    return [r for r in refused if field_name is None or r.field_name == field_name]


class SizeLimitUploadHandler(FileUploadHandler):
    """Counts each file's bytes and skips the file once it passes the upload limit."""

    def new_file(self, field_name: str, file_name: str, *args, **kwargs) -> None:
        super().new_file(field_name, file_name, *args, **kwargs)
        self.limit = settings.MEDIA_MAX_UPLOAD_BYTES

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        if start + len(raw_data) > self.limit:
            if self.request is not None:
                self.request.__dict__.setdefault(_REFUSED, []).append(
                    RefusedUpload(self.field_name, self.file_name or "", self.limit)
                )
            raise SkipFile()
        return raw_data

    def file_complete(self, file_size: int) -> None:
        # The handlers after this one build the file.
        return None
