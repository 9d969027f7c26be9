"""X media (API v2 upload endpoints) and alt text through the metadata endpoint.

Images up to 5 MB go in one request (`POST /2/media/upload` with `media` and
`media_category`); video, GIFs and larger files go through the chunked endpoints:
`POST /2/media/upload/initialize`, `POST /2/media/upload/{id}/append` per chunk, then
`POST /2/media/upload/{id}/finalize`. When the answer carries `processing_info`, the status
is polled (`GET /2/media/upload?command=STATUS&media_id=`) every `check_after_secs` until it
succeeds or fails. (The older `command=INIT|APPEND|FINALIZE` form is refused since 30 May
2025.) Uploads never create a post, so none of these calls is a create.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from apps.providers import httpcall
from apps.providers.base import MediaPayload
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.x.errors import classify

UPLOAD = "https://api.x.com/2/media/upload"
INITIALIZE = f"{UPLOAD}/initialize"
METADATA = "https://api.x.com/2/media/metadata"
CHUNK_BYTES = 1024 * 1024  # the size the documentation uses
# The one-shot upload takes images only (tweet_image), and X's image ceiling is 5 MB.
SIMPLE_MAX_BYTES = 5 * 1024 * 1024
CATEGORY = {"image": "tweet_image", "gif": "tweet_gif", "video": "tweet_video"}
ALT_TEXT_MAX = 1000
# Processing is waited for inside the attempt up to this long; then media_processing.
WAIT_BUDGET_S = 120.0

Send = Callable[..., httpx.Response]


def upload(
    send: Send, media: MediaPayload, checkpoint: dict, save: Callable[[], None] | None = None
) -> str:
    """Upload one file and set its alt text; returns the media id to attach.

    A file X is still processing is kept in `checkpoint` (and `save`d at once), so the next
    attempt resumes polling it instead of uploading it again.
    """
    key = str(media.media_id)
    if key in checkpoint:
        media_id = checkpoint[key]
        status = send("GET", UPLOAD, params={"command": "STATUS", "media_id": media_id})
        if 200 <= status.status_code < 300:
            _settle(send, media_id, _processing(status), checkpoint, key)
            _describe(send, media_id, media.alt_text)
            return media_id
        del checkpoint[key]  # expired or unknown: upload again
    with media.open() as fh:
        data = fh.read()
    if media.kind == "image" and len(data) <= SIMPLE_MAX_BYTES:
        answer = _simple(send, media, data)
    else:
        answer = _chunked(send, media, data)
    media_id = str(answer.json()["data"]["id"])
    info = _processing(answer)
    if info:
        checkpoint[key] = media_id
        if save is not None:
            save()
    _settle(send, media_id, info, checkpoint, key)
    _describe(send, media_id, media.alt_text)
    return media_id


def _simple(send: Send, media: MediaPayload, data: bytes) -> httpx.Response:
    response = send(
        "POST",
        UPLOAD,
        data={"media_category": CATEGORY["image"]},
        files={"media": ("media", data, media.mime_type)},
    )
    _check(response)
    return response


def _chunked(send: Send, media: MediaPayload, data: bytes) -> httpx.Response:
    init = send(
        "POST",
        INITIALIZE,
        json={
            "media_type": media.mime_type,
            "total_bytes": len(data),
            "media_category": CATEGORY.get(media.kind, "tweet_image"),
        },
    )
    _check(init)
    media_id = str(init.json()["data"]["id"])
    for index, start in enumerate(range(0, len(data), CHUNK_BYTES)):
        _append(send, media_id, index, data[start : start + CHUNK_BYTES])
    final = send("POST", f"{UPLOAD}/{media_id}/finalize")
    _check(final)
    return final


def _append(send: Send, media_id: str, index: int, chunk: bytes) -> None:
    """One chunk; a chunk whose connection dropped is sent once more (X documents chunks
    as individually retryable, and re-sending a segment index replaces it)."""
    for retry in (False, True):
        try:
            response = send(
                "POST",
                f"{UPLOAD}/{media_id}/append",
                data={"segment_index": str(index)},
                files={"media": ("chunk", chunk, "application/octet-stream")},
            )
        except ProviderError as err:
            if retry or err.kind != ErrorKind.NETWORK_BEFORE_SEND:
                raise
            continue
        _check(response)
        return


def _describe(send: Send, media_id: str, alt_text: str) -> None:
    if alt_text:
        meta = send(
            "POST",
            METADATA,
            json={"id": media_id, "metadata": {"alt_text": {"text": alt_text[:ALT_TEXT_MAX]}}},
        )
        _check(meta)


def _settle(send: Send, media_id: str, info: dict | None, checkpoint: dict, key: str) -> None:
    """Wait for processing. A processed id stays in the checkpoint (it stays valid for a
    day, so a retry after a refused post reuses it); a failed one is dropped, so a manual
    retry uploads the file afresh."""
    try:
        _wait(send, media_id, info)
    except ProviderError as err:
        if err.kind == ErrorKind.CONTENT_REJECTED:
            checkpoint.pop(key, None)
        raise


def _wait(send: Send, media_id: str, info: dict | None) -> None:
    """No processing_info means ready; otherwise wait check_after_secs between polls."""
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
        info = _processing(status)


def _processing(response: httpx.Response) -> dict | None:
    return (httpcall.json_body(response).get("data") or {}).get("processing_info")


def _check(response: httpx.Response) -> None:
    if not 200 <= response.status_code < 300:
        raise classify(response, is_create=False)
