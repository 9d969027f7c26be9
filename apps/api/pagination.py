"""Cursor pagination in a stable order: newest first by id.

Ids never change and never repeat, so a page boundary cannot skip or repeat a row while
other rows are created or edited between two requests (which offset pages would).
``?limit=`` sets the page size (default 50, 1 to 200, else 400); ``next``/``previous`` are
complete URLs or null.

A cursor is plain text a schema can state (CURSOR_PATTERN): an optional ``r`` (a page
before, not after), the id the page starts beyond, and an optional ``.offset``. Every string
of that form is a page (perhaps an empty one); any other is 400 INVALID_CURSOR.
"""

from __future__ import annotations

import re
from typing import Any

from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request
from rest_framework.utils.urls import replace_query_param

from apps.common.errors import ValidationFailed


class InvalidCursor(ValidationFailed):
    code = "INVALID_CURSOR"


# Ids are at most 18 digits (ID_PATTERN); an offset stays under DRF's offset_cutoff.
_CURSOR = re.compile(r"(r?)([0-9]{0,18})(?:\.([0-9]{1,4}))?")
# As the schema states it. "(?!\n)$": to a Python reader (Schemathesis) a bare "$" also
# matches before a final newline; to an ECMA one it changes nothing.
CURSOR_PATTERN = rf"^{_CURSOR.pattern}(?!\n)$"


class StableCursorPagination(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200

    def decode_cursor(self, request: Request) -> Cursor | None:
        encoded = request.query_params.get(self.cursor_query_param)
        if encoded is None:
            return None
        match = _CURSOR.fullmatch(encoded)
        if match is None:
            raise InvalidCursor(
                "The cursor is not valid; use the next or previous URL of a page.",
                details={"cursor": ["Not a cursor: [r]<id>[.<offset>], e.g. 1234."]},
            )
        reverse, position, offset = match.groups()
        return Cursor(
            offset=min(int(offset or 0), self.offset_cutoff),
            reverse=bool(reverse),
            position=position or None,
        )

    def encode_cursor(self, cursor: Cursor) -> str:
        offset = min(cursor.offset, self.offset_cutoff)
        text = f"{'r' if cursor.reverse else ''}{cursor.position or ''}"
        text += f".{offset}" if offset else ""
        return replace_query_param(self.base_url, self.cursor_query_param, text)

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not (raw.isdigit() and len(raw) <= 4 and 1 <= int(raw) <= self.max_page_size):
            raise ValidationFailed(
                f"limit is a number of rows from 1 to {self.max_page_size}.",
                details={"limit": [f"A whole number from 1 to {self.max_page_size}."]},
            )
        return int(raw)

    def get_schema_operation_parameters(self, view: Any) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["description"] = f"Rows per page (default {self.page_size})."
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
            if parameter["name"] == self.cursor_query_param:
                parameter["description"] = "From a page's next or previous URL."
                parameter["schema"]["pattern"] = CURSOR_PATTERN
        return parameters

    def get_paginated_response_schema(self, schema: dict) -> dict:
        response = super().get_paginated_response_schema(schema)
        response["required"] = ["next", "previous", "results"]
        return response
