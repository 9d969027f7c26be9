"""Waiting for an uploaded LinkedIn image or video to become AVAILABLE before a post
references it."""

from __future__ import annotations

from urllib.parse import quote

import httpx

from apps.providers import httpcall
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.linkedin.errors import classify

API = "https://api.linkedin.com"


def wait_available(
    http: httpx.Client, urn: str, *, kind: str, polls: int, interval_s: float
) -> None:
    """Poll `/rest/{kind}s/{urn}` until AVAILABLE. Member tokens (w_member_social) may be
    refused the status read (403/404): that means "cannot tell", and LinkedIn keeps
    processing on its side, so the post may reference the asset anyway."""
    for poll in range(polls):
        response = httpcall.send(
            http, "GET", f"{API}/rest/{kind}s/{quote(urn, safe='')}", is_create=False
        )
        if response.status_code in (403, 404):
            return
        if response.status_code != 200:
            raise classify(response, is_create=False)
        status = response.json().get("status")
        if status == "AVAILABLE":
            return
        if status == "PROCESSING_FAILED":
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                f"LinkedIn could not process this {kind}.",
                code="PROCESSING_FAILED",
            )
        if poll < polls - 1:
            httpcall.sleep(interval_s)
    raise ProviderError(
        ErrorKind.MEDIA_PROCESSING,
        f"LinkedIn is still processing the {kind}.",
        code="PROCESSING",
    )
