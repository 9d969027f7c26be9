"""Reddit's media upload: an upload slot leased from the API, the file POSTed to Reddit's
storage as the lease's form, and the file's URL given to the submit."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from django.conf import settings

from apps.providers import httpcall
from apps.providers.errors import ErrorKind, ProviderError, classify_transport
from apps.providers.reddit.api import API, call

# A video post needs a poster image. Without a thumbnail of the video to hand, a plain one
# is uploaded (as Reddit's reference client does); Reddit shows it until playback starts.
VIDEO_POSTER = (  # a 1x1 white PNG
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00"
    b"\x00\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\r\xefF\xb8"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)


def upload(client: httpx.Client, mime_type: str, open_file: Callable) -> str:
    """Lease an upload slot, POST the file to Reddit's storage, return its URL."""
    kind, _, extension = mime_type.partition("/")
    filename = f"{kind}.{extension}"
    lease = call(
        client,
        "POST",
        f"{API}/api/media/asset.json",
        data={"filepath": filename, "mimetype": mime_type},
        is_create=False,
    )
    action = "https:" + lease["args"]["action"]
    fields = {f["name"]: f["value"] for f in lease["args"]["fields"]}
    with open_file() as fh, httpcall.client(timeout=settings.PROVIDER_TIMEOUT_S) as storage:
        try:
            response = storage.post(action, data=fields, files={"file": (filename, fh, mime_type)})
        except httpx.HTTPError as exc:
            raise classify_transport(exc, is_create=False) from exc
    if response.status_code >= 300:
        raise ProviderError(
            ErrorKind.PROVIDER_UNAVAILABLE,
            "The media upload to Reddit's storage failed.",
            code="upload_failed",
            http_status=response.status_code,
        )
    return f"{action}/{fields['key']}"
