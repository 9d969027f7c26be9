"""Video (and animated GIF) uploads through Bluesky's video service.

The service (video.bsky.app) is not the account's PDS: it takes the bytes, transcodes them
(an animated GIF becomes an MP4 there), stores the result on the PDS as a blob, and reports
progress through a job. The steps:

1. `app.bsky.video.getUploadLimits` (service auth for the video service) says whether the
   account may upload now (a verified email, daily video and byte allowances).
2. `com.atproto.server.getServiceAuth` on the PDS, audience the PDS's did:web and method
   `com.atproto.repo.uploadBlob`: the video service stores the blob with it.
3. `app.bsky.video.uploadVideo?did=..&name=..` with the bytes answers a job status (some
   answers carry it at the top level instead of under `jobStatus`).
4. `app.bsky.video.getJobStatus?jobId=..` until a blob comes back. An upload of bytes
   already processed answers the error `already_exists` *with* the earlier blob, so a blob
   is taken wherever it appears; `JOB_STATE_FAILED` without one means processing failed.

No post exists until our createRecord: repeating an upload costs a daily allowance, never
a second post.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
from django.conf import settings

from apps.providers import httpcall
from apps.providers.base import MediaPayload
from apps.providers.bluesky.errors import classify
from apps.providers.errors import Action, ErrorKind, ProviderError

SERVICE = "https://video.bsky.app"
SERVICE_DID = "did:web:video.bsky.app"
COMPLETED = "JOB_STATE_COMPLETED"
FAILED = "JOB_STATE_FAILED"
# What the video service takes (its own refusal lists these); the blob it stores is MP4.
EXTENSIONS = {
    "video/mp4": "mp4",
    "video/mpeg": "mpeg",
    "video/webm": "webm",
    "video/quicktime": "mov",
    "image/gif": "gif",
}
# The docs advise a longer-lived token for the upload: processing outlasts the default 60 s.
UPLOAD_TOKEN_TTL_S = 30 * 60
LIMITS_TOKEN_TTL_S = 60
UPLOAD_TIMEOUT_S = 120.0
_REFUSALS = {"unconfirmed_email": "Verify the account's email address on Bluesky first."}


@dataclass(frozen=True)
class Job:
    job_id: str
    state: str
    blob: dict | None = None


def start(xrpc, media: MediaPayload) -> Job:
    """Check the account's allowances, then upload the file; returns the accepted job."""
    extension = EXTENSIONS.get(media.mime_type)
    if extension is None:
        raise ProviderError(
            ErrorKind.CONTENT_REJECTED,
            f"Bluesky's video service takes MP4, MPEG, WebM, QuickTime or GIF, not "
            f"{media.mime_type}.",
            code="video_format_unsupported",
        )
    check_limits(xrpc, media.size_bytes)
    token = service_token(
        xrpc,
        aud=f"did:web:{urlsplit(xrpc.pds).hostname}",
        lxm="com.atproto.repo.uploadBlob",
        ttl_s=UPLOAD_TOKEN_TTL_S,
    )
    with media.open() as fh:
        data = fh.read()
    timeout = max(settings.PROVIDER_TIMEOUT_S, UPLOAD_TIMEOUT_S)
    with httpcall.client(headers={"Authorization": f"Bearer {token}"}, timeout=timeout) as http:
        response = httpcall.send(
            http,
            "POST",
            f"{SERVICE}/xrpc/app.bsky.video.uploadVideo",
            is_create=False,  # a job makes no post; a repeat is answered already_exists
            params={"did": xrpc.did, "name": f"{media.media_id}.{extension}"},
            content=data,
            headers={"Content-Type": media.mime_type},
        )
    status = _job_status(response)
    if status.get("jobId") or status.get("blob"):
        job_id, state = str(status.get("jobId") or ""), str(status.get("state") or "")
        return Job(job_id, state, status.get("blob"))
    error = status.get("error")
    if error or response.status_code != 200:
        raise _refusal(response, status)
    raise ProviderError(
        ErrorKind.UNKNOWN,
        "Bluesky's video service accepted the upload without naming its job.",
        code="video_job_missing",
        http_status=response.status_code,
    )


def job_status(job_id: str) -> dict:
    """The job's status ({jobId, state, blob?, error?, failureCode?, message?}). A job the
    service no longer knows raises MEDIA_PROCESSING (not retryable: upload again)."""
    with httpcall.client() as http:
        response = httpcall.send(
            http,
            "GET",
            f"{SERVICE}/xrpc/app.bsky.video.getJobStatus",
            is_create=False,
            params={"jobId": job_id},
        )
    if response.status_code in (400, 404):
        raise ProviderError(
            ErrorKind.MEDIA_PROCESSING,
            "Bluesky's video service no longer knows this upload; retry to upload it again.",
            code="video_job_unknown",
            http_status=response.status_code,
            retryable=False,
            action=Action.RETRY,
        )
    if response.status_code != 200:
        raise classify(response, is_create=False)
    return _job_status(response)


def failure(status: dict) -> ProviderError:
    """The error for a job that ended JOB_STATE_FAILED without a blob. Not retryable by
    itself (the job is over); a retry uploads the file again."""
    code = status.get("failureCode") or status.get("error") or "video_processing_failed"
    message = status.get("message") or "Bluesky could not process the video."
    if code in ("validation_failure", "encoding_failure", "pds_upload_unsupported_blob_size"):
        return ProviderError(ErrorKind.CONTENT_REJECTED, f"{message} ({code})", code=code)
    return ProviderError(
        ErrorKind.MEDIA_PROCESSING,
        f"{message} ({code})",
        code=code,
        retryable=False,
        action=Action.RETRY,
    )


def check_limits(xrpc, size_bytes: int) -> None:
    """Refuse before uploading when the account may not post this video today."""
    token = service_token(
        xrpc, aud=SERVICE_DID, lxm="app.bsky.video.getUploadLimits", ttl_s=LIMITS_TOKEN_TTL_S
    )
    with httpcall.client(headers={"Authorization": f"Bearer {token}"}) as http:
        response = httpcall.send(
            http, "GET", f"{SERVICE}/xrpc/app.bsky.video.getUploadLimits", is_create=False
        )
    if response.status_code != 200:
        raise classify(response, is_create=False)
    limits = httpcall.json_body(response)
    if not limits.get("canUpload", False):
        raise _refusal(response, limits)
    videos, budget = limits.get("remainingDailyVideos"), limits.get("remainingDailyBytes")
    if (isinstance(videos, int) and videos <= 0) or (
        isinstance(budget, int) and budget < size_bytes
    ):
        # The reset time is not published: retried on the backoff, never sent meanwhile.
        raise ProviderError(
            ErrorKind.RATE_LIMITED,
            "The account has used today's Bluesky video allowance "
            f"({videos} videos, {budget} bytes left).",
            code="video_daily_limit",
        )


def service_token(xrpc, *, aud: str, lxm: str, ttl_s: int) -> str:
    """A short-lived token the PDS signs for another service, limited to one method."""
    response = xrpc.call(
        "GET",
        "com.atproto.server.getServiceAuth",
        is_create=False,
        params={"aud": aud, "lxm": lxm, "exp": int(time.time()) + ttl_s},
    )
    if response.status_code != 200:
        raise classify(response, is_create=False)
    return response.json()["token"]


def _job_status(response: httpx.Response) -> dict:
    body = httpcall.json_body(response)
    status = body.get("jobStatus")
    return status if isinstance(status, dict) else body


def _refusal(response: httpx.Response, body: dict) -> ProviderError:
    name = str(body.get("error") or "")
    if response.status_code == 429:
        return classify(response, is_create=False)
    if name in _REFUSALS or response.status_code in (401, 403) or body.get("canUpload") is False:
        return ProviderError(
            ErrorKind.PERMISSION_MISSING,
            _REFUSALS.get(name)
            or str(body.get("message") or "Bluesky does not let this account upload video."),
            code=name or "video_upload_refused",
            http_status=response.status_code,
            action=Action.RETRY if name in _REFUSALS else Action.CONTACT_SUPPORT,
        )
    if response.status_code >= 400:
        return classify(response, is_create=False)
    return ProviderError(
        ErrorKind.UNKNOWN,
        str(body.get("message") or name or "Bluesky's video service refused the upload."),
        code=name or "video_upload_refused",
        http_status=response.status_code,
    )
