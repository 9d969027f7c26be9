"""X media: chunked upload (INIT, APPEND, FINALIZE, then STATUS while processing) and alt
text through the metadata endpoint. Uploads never create a post, so none of these calls
is a create."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from apps.providers import httpcall
from apps.providers.base import MediaPayload
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.x.errors import classify

UPLOAD = "https://api.x.com/2/media/upload"
METADATA = "https://api.x.com/2/media/metadata"
CHUNK_BYTES = 1024 * 1024  # the size the documentation uses
CATEGORY = {"image": "tweet_image", "gif": "tweet_gif", "video": "tweet_video"}
# Processing is waited for inside the attempt up to this long; then media_processing.
WAIT_BUDGET_S = 120.0

Send = Callable[..., httpx.Response]


def upload(send: Send, media: MediaPayload, checkpoint: dict) -> str:
    """Upload one file and set its alt text; returns the media id to attach.

    A file still processing when the attempt's patience ran out is kept in `checkpoint`, so
    the next attempt resumes polling it instead of uploading it again.
    """
    key = str(media.media_id)
    if key in checkpoint:
        status = send("GET", UPLOAD, params={"command": "STATUS", "media_id": checkpoint[key]})
        if 200 <= status.status_code < 300:
            media_id = checkpoint[key]
            _wait(send, media_id, status.json().get("data", {}).get("processing_info"))
            _describe(send, media_id, media.alt_text)
            return media_id
        del checkpoint[key]  # expired or unknown: upload again
    with media.open() as fh:
        data = fh.read()
    init = send(
        "POST",
        UPLOAD,
        data={
            "command": "INIT",
            "media_type": media.mime_type,
            "total_bytes": str(len(data)),
            "media_category": CATEGORY.get(media.kind, "tweet_image"),
        },
    )
    _check(init)
    media_id = str(init.json()["data"]["id"])
    for index, start in enumerate(range(0, len(data), CHUNK_BYTES)):
        append = send(
            "POST",
            UPLOAD,
            data={"command": "APPEND", "media_id": media_id, "segment_index": str(index)},
            files={
                "media": ("chunk", data[start : start + CHUNK_BYTES], "application/octet-stream")
            },
        )
        _check(append)
    final = send("POST", UPLOAD, data={"command": "FINALIZE", "media_id": media_id})
    _check(final)
    info = final.json().get("data", {}).get("processing_info")
    if info:
        checkpoint[key] = media_id
    _wait(send, media_id, info)
    _describe(send, media_id, media.alt_text)
    return media_id


def _describe(send: Send, media_id: str, alt_text: str) -> None:
    if alt_text:
        meta = send(
            "POST",
            METADATA,
            json={"id": media_id, "metadata": {"alt_text": {"text": alt_text[:1000]}}},
        )
        _check(meta)


def _wait(send: Send, media_id: str, info: dict | None) -> None:
    """No processing_info means ready; otherwise wait check_after_secs between STATUS calls."""
    waited = 0.0
    while info:
        state = info.get("state")
        if state == "succeeded":
            return
        if state == "failed":
            reason = (info.get("error") or {}).get("message") or "X could not process the media."
            raise ProviderError(ErrorKind.CONTENT_REJECTED, reason, code="media_processing_failed")
        delay = float(info.get("check_after_secs") or 1)
        if waited + delay > WAIT_BUDGET_S:
            raise ProviderError(
                ErrorKind.MEDIA_PROCESSING,
                "X is still processing the media.",
                code="media_processing",
            )
        httpcall.sleep(delay)
        waited += delay
        status = send("GET", UPLOAD, params={"command": "STATUS", "media_id": media_id})
        _check(status)
        info = status.json().get("data", {}).get("processing_info")


def _check(response: httpx.Response) -> None:
    if not 200 <= response.status_code < 300:
        raise classify(response, is_create=False)
