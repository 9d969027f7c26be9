"""What OPTIONS answers on the API: the methods (in ``Allow``), the formats, and where the
bodies are described. DRF's own metadata describes a view's serializer and, for PUT,
loads the object first; here views parse input with serializers of their own and some
routes carry no id (``/queue-slots``), so the OpenAPI schema is the one description."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework.metadata import BaseMetadata
from rest_framework.request import Request


class ApiMetadata(BaseMetadata):
    """A short OPTIONS body; the request bodies and answers are in the schema."""

    def determine_metadata(self, request: Request, view: Any) -> dict[str, Any]:
        return {
            "name": view.get_view_name(),
            "methods": sorted(view.allowed_methods),
            "renders": [renderer.media_type for renderer in view.renderer_classes],
            "parses": [parser.media_type for parser in view.parser_classes],
            "schema": reverse("schema"),
        }
