"""YouTube's resumable upload: open the session (recorded before any byte moves), probe it,
and send the video in chunks from wherever the session says to resume."""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx
from django.utils import timezone

from apps.providers.base import MediaPayload, PublishContext, PublishedSegment, SegmentPayload
from apps.providers.errors import ErrorKind, ProviderError, classify_transport
from apps.providers.youtube.errors import classify

UPLOAD = "https://www.googleapis.com/upload/youtube/v3/videos"
# Chunks must be multiples of 256 KiB (except the last).
CHUNK_SIZE = 32 * 256 * 1024


# Google answers a request on an upload session that no longer exists with 404 or 410.
SESSION_GONE = (404, 410)


class SessionGone(Exception):
    """The upload session expired before the video's final byte ever reached it: no video
    can exist from it, so the upload starts over in a new session."""


LOCKED_PRIVATE = (
    "YouTube made this video private although it was sent as {asked}: videos uploaded "
    "through an API project that has not passed YouTube's compliance audit are locked "
    "private. It stays private until the project passes the audit and someone changes the "
    "video's visibility in YouTube Studio."
)


def published(ctx: PublishContext, video: dict) -> PublishedSegment:
    """The video YouTube answered with, its real privacy recorded on the rendition."""
    record_result(ctx, video)
    return PublishedSegment(
        provider_post_id=video["id"],
        provider_url=f"https://www.youtube.com/watch?v={video['id']}",
        published_at=timezone.now(),
    )


def record_result(ctx: PublishContext, video: dict) -> None:
    """Keep the privacy YouTube gave the video (``checkpoint["result"]``), which is not
    always the one asked for: an unaudited API project's uploads are locked private. A
    notice says so, kept at once with the rendition."""
    asked = ctx.settings.get("privacy_status") or "public"
    actual = (video.get("status") or {}).get("privacyStatus") or asked
    notices = []
    if actual == "private" and asked != "private":
        notices.append({"code": "locked_private", "message": LOCKED_PRIVATE.format(asked=asked)})
    ctx.checkpoint["result"] = {
        "privacy_status": actual,
        "privacy_requested": asked,
        "notices": notices,
    }
    ctx.persist_checkpoint()


def resume_offset(response: httpx.Response) -> int:
    """308's `Range: bytes=0-N` means N+1 bytes arrived; no Range means none did."""
    value = response.headers.get("Range", "")
    if "-" not in value:
        return 0
    return int(value.rsplit("-", 1)[1]) + 1


def open_session(
    client: httpx.Client,
    ctx: PublishContext,
    segment: SegmentPayload,
    video: MediaPayload,
    title: str,
    privacy: str,
) -> str:
    """Create the upload session (nothing is visible yet) and record it before any
    byte of the video moves."""
    snippet = {"title": title, "description": segment.text}
    for key in ("tags", "categoryId"):
        if ctx.settings.get(key):
            snippet[key] = ctx.settings[key]
    status = {
        "privacyStatus": privacy,
        "selfDeclaredMadeForKids": bool(ctx.settings.get("made_for_kids", False)),
    }
    if ctx.settings.get("publish_at"):
        status["publishAt"] = ctx.settings["publish_at"]
    params = {"uploadType": "resumable", "part": "snippet,status"}
    if "notify_subscribers" in ctx.settings:
        params["notifySubscribers"] = str(bool(ctx.settings["notify_subscribers"])).lower()
    try:
        response = client.post(
            UPLOAD,
            params=params,
            content=json.dumps({"snippet": snippet, "status": status}),
            headers={
                "Content-Type": "application/json; charset=UTF-8",
                "X-Upload-Content-Length": str(video.size_bytes),
                "X-Upload-Content-Type": video.mime_type,
            },
        )
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=False) from exc
    if response.status_code != 200 or not response.headers.get("Location"):
        raise classify(response, is_create=False)
    session = response.headers["Location"]
    ctx.checkpoint.update(
        upload_session_uri=session, upload_size=video.size_bytes, upload_final_sent=False
    )
    # Written to the database now: a worker killed mid-upload must leave the session
    # for the next attempt, which resumes it instead of making a second video.
    ctx.persist_checkpoint()
    return session


@dataclass(frozen=True)
class SessionState:
    """What an upload session says: the ``video`` once the upload is done, else the
    ``offset`` to resume from while it lives; neither once it is gone."""

    video: dict | None = None
    offset: int | None = None


def probe(client: httpx.Client, session: str, size: int) -> SessionState:
    """Ask the session how far the upload got."""
    try:
        response = client.put(session, content=b"", headers={"Content-Range": f"bytes */{size}"})
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=False) from exc
    if response.status_code in (200, 201):
        return SessionState(video=response.json())
    if response.status_code == 308:
        return SessionState(offset=resume_offset(response))
    if response.status_code in SESSION_GONE:
        return SessionState()
    raise classify(response, is_create=False)


def send(
    client: httpx.Client,
    ctx: PublishContext,
    session: str,
    video: MediaPayload,
    offset: int,
) -> PublishedSegment:
    """Send the video from `offset`. Raises SessionGone when the session expired and no
    earlier attempt had sent the final byte (else the video may exist: an unknown outcome,
    settled through the channel's uploads)."""
    size = video.size_bytes
    final_sent_before = bool(ctx.checkpoint.get("upload_final_sent"))
    with video.open() as fh:
        while True:
            fh.seek(offset)
            chunk = fh.read(CHUNK_SIZE)
            last = offset + len(chunk) - 1
            is_final = last >= size - 1
            if is_final and not ctx.checkpoint.get("upload_final_sent"):
                # From here on the video may exist: a lost session is no longer a
                # reason to start over (kept at once, like the session itself).
                ctx.checkpoint["upload_final_sent"] = True
                ctx.persist_checkpoint()
            try:
                response = client.put(
                    session,
                    content=chunk,
                    headers={"Content-Range": f"bytes {offset}-{last}/{size}"},
                )
            except httpx.HTTPError as exc:
                raise ProviderError(
                    ErrorKind.OUTCOME_UNKNOWN if is_final else ErrorKind.PROVIDER_UNAVAILABLE,
                    "The upload was interrupted; the next attempt resumes the same session.",
                    code=type(exc).__name__,
                ) from exc
            if response.status_code in (200, 201):
                return published(ctx, response.json())
            if response.status_code in SESSION_GONE:
                if final_sent_before:
                    raise ProviderError(
                        ErrorKind.OUTCOME_UNKNOWN,
                        "The upload session expired after the whole video was sent; the "
                        "video may exist. Check the channel's uploads.",
                        code="session_gone",
                        http_status=response.status_code,
                    )
                # Refused by a session that no longer exists: this chunk, the final one
                # included, was not taken, so no video came of the session.
                if ctx.checkpoint.get("upload_final_sent"):
                    ctx.checkpoint["upload_final_sent"] = False
                    ctx.persist_checkpoint()
                raise SessionGone()
            if response.status_code != 308:
                raise classify(response, is_create=is_final)
            offset = resume_offset(response)
