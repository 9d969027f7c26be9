"""Cursor pagination in a stable order: newest first by id.

Ids never change and never repeat, so a page boundary cannot skip or repeat a row while
other rows are created or edited between two requests (which offset pages would).
``?limit=`` sets the page size (default 50, 1 to 200, else 400); ``next``/``previous`` are
complete URLs or null. A cursor that is not one of ours is 400 INVALID_CURSOR.
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request

from apps.common.errors import ValidationFailed


class InvalidCursor(ValidationFailed):
    code = "INVALID_CURSOR"


class StableCursorPagination(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200

    def decode_cursor(self, request: Request) -> Cursor | None:
        try:
            cursor = super().decode_cursor(request)
        except NotFound:  # DRF answers 404 for a bad cursor; it is a bad parameter.
            cursor = None
            valid = False
        else:
            valid = cursor is None or _is_id(cursor.position)
        if not valid:
            raise InvalidCursor(
                "The cursor is not valid; use the next or previous URL of a page.",
                details={"cursor": ["Not a cursor this API issued."]},
            )
        return cursor

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
        return parameters

    def get_paginated_response_schema(self, schema: dict) -> dict:
        response = super().get_paginated_response_schema(schema)
        response["required"] = ["next", "previous", "results"]
        return response


def _is_id(position: Any) -> bool:
    return position is None or (
        isinstance(position, str) and position.isdigit() and len(position) <= 18
    )
