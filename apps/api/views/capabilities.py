"""/capabilities: what each platform accepts, and how far each is proven."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from apps.api.base import WorkspaceAPIView
from apps.api.schema import errors
from apps.api.serializers.capabilities import CapabilitiesSerializer
from apps.providers.live.readiness import effective_capabilities


class CapabilitiesView(WorkspaceAPIView):
    """The capability catalog the composer and validation use."""

    required_scopes = {"GET": "read"}

    @extend_schema(
        summary="The capability catalog",
        description="Per platform: text limits and counting, media kinds and limits, "
        "threads, alt text, settings, idempotency, daily caps, and `readiness` "
        "(`experimental` until validated against the live platform, then `supported`: "
        "a passing live validation younger than 90 days, shown in `validation`).",
        responses={200: CapabilitiesSerializer, **errors()},
    )
    def get(self, request: Request) -> Response:
        return Response(
            {"platforms": [caps.as_dict() for caps in effective_capabilities().values()]}
        )
