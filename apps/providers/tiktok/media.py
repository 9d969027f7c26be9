"""TikTok's chunked video upload (FILE_UPLOAD): the chunk plan sent with init, then the
chunks PUT to the upload URL init handed out."""

from __future__ import annotations

import httpx
from django.conf import settings

from apps.providers import httpcall
from apps.providers.base import MediaPayload
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.tiktok.errors import classify

# Files up to this size go in one chunk; larger ones in CHUNK_SIZE pieces, the last piece
# taking the remainder (TikTok: chunks of 5-64 MB, the last up to 128 MB, at most 1,000).
SINGLE_CHUNK_MAX = 64 * 1024 * 1024
CHUNK_SIZE = 10 * 1024 * 1024


def chunks(size: int) -> tuple[int, int]:
    """(chunk_size, total_chunk_count) as TikTok counts them: floor(size / chunk_size)."""
    if size <= SINGLE_CHUNK_MAX:
        return size, 1
    return CHUNK_SIZE, size // CHUNK_SIZE


def upload(
    upload_url: str, video: MediaPayload, chunk_size: int, count: int, *, first_chunk: int = 0
) -> bool:
    """PUT the chunks in order, from `first_chunk`. True once TikTok confirmed the last one.

    A failure before the last chunk leaves an upload that can never publish, so starting
    over is safe (raises). A lost answer to the last chunk may hide a completed upload:
    False, and the caller asks TikTok how many bytes it holds."""
    total = video.size_bytes
    with video.open() as fh, httpcall.client(timeout=settings.PROVIDER_TIMEOUT_S) as client:
        for index in range(first_chunk, count):
            first = index * chunk_size
            last = total - 1 if index == count - 1 else first + chunk_size - 1
            fh.seek(first)
            body = fh.read(last - first + 1)
            is_last = index == count - 1
            try:
                response = client.put(
                    upload_url,
                    content=body,
                    headers={
                        "Content-Type": video.mime_type,
                        "Content-Length": str(len(body)),
                        "Content-Range": f"bytes {first}-{last}/{total}",
                    },
                )
            except httpx.HTTPError as exc:
                if is_last:
                    return False
                raise ProviderError(
                    ErrorKind.PROVIDER_UNAVAILABLE,
                    "The video upload was interrupted before it completed.",
                    code=type(exc).__name__,
                ) from exc
            if response.status_code in (201, 206):
                continue
            if is_last and response.status_code >= 500:
                return False
            raise classify(response, is_create=False)
    return True
