"""Upload size checked while the request streams in.

SizeLimitUploadHandler runs first in FILE_UPLOAD_HANDLERS: it sees every chunk before the
handlers that keep the bytes (in memory, then a temporary file), and drops a file the moment
it passes MEDIA_MAX_UPLOAD_BYTES, so no more than the limit is ever written. The rest of
the request is still read (its other fields are kept); the views ask `refused_uploads()`
which files were dropped, to answer with a clear error instead of a missing file.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest

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
