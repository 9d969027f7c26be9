"""Pinterest media: images as URLs or inline base64 in the Pin's media_source, and videos
registered, uploaded to the storage URL Pinterest hands out, and processed before the Pin
is made."""

from __future__ import annotations

import base64

import httpx
from django.conf import settings

from apps.providers import httpcall
from apps.providers.base import MediaPayload, PublishContext, PublishedSegment
from apps.providers.errors import ErrorKind, ProviderError, classify_transport
from apps.providers.pinterest.api import call

BASE64_TYPES = ("image/jpeg", "image/png")
MEDIA_PENDING = ("registered", "processing")


def image_source(images: list[MediaPayload]) -> dict:
    if all(image.public_url for image in images):
        if len(images) == 1:
            return {"source_type": "image_url", "url": images[0].public_url}
        return {
            "source_type": "multiple_image_urls",
            "items": [{"url": image.public_url} for image in images],
        }
    items = []
    for image in images:
        if image.mime_type not in BASE64_TYPES:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "Pinterest takes JPEG or PNG images here.",
                code="image_type",
            )
        with image.open() as fh:
            data = base64.b64encode(fh.read()).decode("ascii")
        items.append({"content_type": image.mime_type, "data": data})
    if len(items) == 1:
        return {"source_type": "image_base64", **items[0]}
    return {"source_type": "multiple_image_base64", "items": items}


def upload_video(
    client: httpx.Client, ctx: PublishContext, pin: dict, video: MediaPayload
) -> PublishedSegment:
    """Register and upload the video; the Pin waits in the checkpoint until processing
    succeeded. A video this rendition already uploaded is not uploaded again."""
    media_id = ctx.checkpoint.get("video_media_id")
    if media_id:
        media = call(client, "GET", f"/media/{media_id}", is_create=False)
        if media.get("status") in (*MEDIA_PENDING, "succeeded"):
            return PublishedSegment(provider_post_id=media_id, pending=True)
    registered = call(client, "POST", "/media", json={"media_type": "video"}, is_create=False)
    # The storage upload is a presigned form: every upload_parameter as a field, then
    # the file, and no Pinterest token.
    with (
        video.open() as fh,
        httpcall.client(timeout=settings.PROVIDER_TIMEOUT_S) as storage,
    ):
        try:
            response = storage.post(
                registered["upload_url"],
                data=registered.get("upload_parameters") or {},
                files={"file": ("video", fh, video.mime_type)},
            )
        except httpx.HTTPError as exc:
            raise classify_transport(exc, is_create=False) from exc
    if response.status_code >= 300:
        raise ProviderError(
            ErrorKind.PROVIDER_UNAVAILABLE,
            "The video upload to Pinterest's storage failed.",
            code="upload_failed",
            http_status=response.status_code,
        )
    cover = (
        {"cover_image_url": ctx.settings["cover_image_url"]}
        if ctx.settings.get("cover_image_url")
        else {"cover_image_key_frame_time": int(ctx.settings.get("cover_key_frame_time", 0))}
    )
    media_id = str(registered["media_id"])
    pin["media_source"] = {"source_type": "video_id", "media_id": media_id, **cover}
    # Written before the next request: a run that stops now leaves the uploaded video
    # for the next attempt instead of uploading it again.
    ctx.checkpoint.update(video_media_id=media_id, video_pin=pin)
    ctx.persist_checkpoint()
    return PublishedSegment(provider_post_id=media_id, pending=True)
