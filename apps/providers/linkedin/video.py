"""LinkedIn video uploads through the Videos API.

`POST /rest/videos?action=initializeUpload` declares the file's size and answers the video
URN, an upload token and one upload URL per byte range (parts of 4 MB); each part is PUT as
is and answers an ETag; `action=finalizeUpload` names the ETags in order. LinkedIn then
processes the video; a post may reference it once it is uploaded.
"""

from __future__ import annotations

import httpx

from apps.providers import httpcall
from apps.providers.base import MediaPayload, PublishContext
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.linkedin.assets import wait_available
from apps.providers.linkedin.errors import classify

API = "https://api.linkedin.com"
POLL_S = 3.0
POLLS = 5
CHECKPOINT = "linkedin_videos"  # media id -> video URN, once the upload is finalized


def upload_video(http: httpx.Client, ctx: PublishContext, owner: str, media: MediaPayload) -> str:
    """The URN of this media's video on LinkedIn, uploaded now or by an earlier attempt."""
    done = (ctx.checkpoint.get(CHECKPOINT) or {}).get(str(media.media_id))
    if done:
        wait_available(http, done, kind="video", polls=POLLS, interval_s=POLL_S)
        return done
    with media.open() as fh:
        data = fh.read()
    response = httpcall.send(
        http,
        "POST",
        f"{API}/rest/videos",
        is_create=False,  # an unused video never becomes a post
        params={"action": "initializeUpload"},
        json={
            "initializeUploadRequest": {
                "owner": owner,
                "fileSizeBytes": len(data),
                "uploadCaptions": False,
                "uploadThumbnail": False,
            }
        },
    )
    if response.status_code != 200:
        raise classify(response, is_create=False)
    value = response.json()["value"]
    urn = value["video"]
    etags = []
    for part in value["uploadInstructions"]:
        chunk = data[int(part["firstByte"]) : int(part["lastByte"]) + 1]
        put = httpcall.send(
            http,
            "PUT",
            part["uploadUrl"],
            is_create=False,
            content=chunk,
            headers={"Content-Type": "application/octet-stream"},
        )
        if put.status_code not in (200, 201):
            raise classify(put, is_create=False)
        etag = put.headers.get("ETag")
        if not etag:
            raise ProviderError(
                ErrorKind.PROVIDER_UNAVAILABLE,
                "LinkedIn did not confirm a part of the video upload.",
                code="missing_etag",
            )
        etags.append(etag)
    finalize = httpcall.send(
        http,
        "POST",
        f"{API}/rest/videos",
        is_create=False,
        params={"action": "finalizeUpload"},
        json={
            "finalizeUploadRequest": {
                "video": urn,
                "uploadToken": value.get("uploadToken", ""),
                "uploadedPartIds": etags,
            }
        },
    )
    if finalize.status_code != 200:
        raise classify(finalize, is_create=False)
    # Finalized: a later attempt (after a processing wait) reuses it instead of uploading
    # the file again.
    ctx.checkpoint[CHECKPOINT] = {
        **(ctx.checkpoint.get(CHECKPOINT) or {}),
        str(media.media_id): urn,
    }
    ctx.persist_checkpoint()
    wait_available(http, urn, kind="video", polls=POLLS, interval_s=POLL_S)
    return urn
