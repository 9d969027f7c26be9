"""Request body parsers with size limits and clear error codes.

DRF reads JSON straight from the request stream, which skips Django's
DATA_UPLOAD_MAX_MEMORY_SIZE check: the JSON parser applies it itself (413). Uploads are
refused from their Content-Length before anything is read when they cannot fit under
MEDIA_MAX_UPLOAD_BYTES, and a file is dropped as soon as it streams past that limit (413
either way); the media service checks the real size again.
"""

from __future__ import annotations

import codecs
from typing import Any

from django.conf import settings
from rest_framework import exceptions, parsers
from rest_framework.settings import api_settings
from rest_framework.utils import json

from apps.api.errors import PayloadTooLarge
from apps.publications.uploads import refused_uploads

# Room for the multipart boundaries and the small form fields beside the file.
MULTIPART_OVERHEAD_BYTES = 64 * 1024


def _content_length(parser_context: dict | None) -> int | None:
    request = (parser_context or {}).get("request")
    if request is None:
        return None
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None


class JSONParser(parsers.JSONParser):
    """JSON bodies up to DATA_UPLOAD_MAX_MEMORY_SIZE; anything unparsable is 400
    MALFORMED_JSON (bad syntax, bad encoding, NaN, nesting deeper than Python can read)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        length = _content_length(parser_context)
        if limit is not None and length is not None and length > limit:
            raise PayloadTooLarge(f"JSON bodies are limited to {limit} bytes.")
        raw = stream.read(limit + 1 if limit is not None else -1) if stream is not None else b""
        if limit is not None and len(raw) > limit:
            raise PayloadTooLarge(f"JSON bodies are limited to {limit} bytes.")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.decode(raw, encoding)
            constant = json.strict_constant if api_settings.STRICT_JSON else None
            return json.loads(text, parse_constant=constant)
        except (ValueError, RecursionError) as exc:
            raise exceptions.ParseError(
                f"The body is not valid JSON: {str(exc)[:200]}", code="MALFORMED_JSON"
            ) from None


class MultiPartParser(parsers.MultiPartParser):
    """multipart/form-data, refused up front (413) when the declared length cannot fit."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        length = _content_length(parser_context)
        limit = settings.MEDIA_MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD_BYTES
        if length is not None and length > limit:
            raise PayloadTooLarge(
                f"Uploads are limited to {settings.MEDIA_MAX_UPLOAD_BYTES} bytes.",
                code="MEDIA_TOO_LARGE",
            )
        try:
            parsed = super().parse(stream, media_type, parser_context)
        except exceptions.ParseError as exc:
            raise exceptions.ParseError(str(exc.detail), code="MALFORMED_MULTIPART") from None
        # A file past the limit was dropped while it streamed in (SizeLimitUploadHandler).
        if refused_uploads(parser_context["request"]):
            raise PayloadTooLarge(
                f"Uploads are limited to {settings.MEDIA_MAX_UPLOAD_BYTES} bytes.",
                code="MEDIA_TOO_LARGE",
            )
        return parsed
