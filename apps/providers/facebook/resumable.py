"""Facebook Page videos through Meta's Resumable Upload API, the upload Meta's Video API
guide documents (docs/platforms/facebook.md, "Video upload protocol"): a session from
`POST /{app-id}/uploads`, the bytes appended to `POST /upload:<session>` at the offset the
session reports (`GET /upload:<session>`), a file handle back, and the video made by
`POST /{page-id}/videos` with that handle (`fbuploader_video_file_chunk`).

Uploading makes nothing visible; only the videos call makes a video. So the session and the
handle are kept in the checkpoint (an attempt resumes them, never uploads twice), and the
videos call is marked sent before it goes: after an unknown outcome the Page's videos are
looked up before anything is sent again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
from django.conf import settings
from django.utils import timezone

from apps.providers.base import MediaPayload, PublishContext, SegmentPayload
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.matching import normalize_text
from apps.providers.meta.errors import INVALID_PARAMETER_CODE, UNKNOWN_OBJECT_SUBCODE
from apps.providers.meta.graph import FACEBOOK_GRAPH, graph_call, parse_graph_time

# Bytes per append: small enough that a dropped connection costs little, large enough that
# a video takes few requests.
CHUNK_BYTES = 8 * 1024 * 1024
# Appends that may fail (a dropped connection, an offset the session disagrees with) before
# the attempt gives up; each one first reads where the session stands.
MAX_RESUMES = 3
# The session refusals after which "auto" uses the videos edge's older ways instead (Meta's
# reference asks for a token with a role on the app, and takes only video/mp4 among video
# types; a Page token may be refused). Nothing exists yet.
REFUSALS_TO_FALL_BACK = (
    ErrorKind.PERMISSION_MISSING,
    ErrorKind.AUTH_EXPIRED,
    ErrorKind.CONTENT_REJECTED,
)
GONE = f"{INVALID_PARAMETER_CODE}/{UNKNOWN_OBJECT_SUBCODE}"


class SessionRefused(Exception):
    """Meta would not open an upload session for this token or file: use the videos edge's
    older ways (file_url, upload_phase)."""


class _SessionGone(Exception):
    """The session expired (or never existed for this token): start a new one."""


def upload(
    client: httpx.Client,
    ctx: PublishContext,
    video: MediaPayload,
    entry: dict,
    *,
    may_fall_back: bool,
) -> str:
    """The file handle of `video`, resuming the checkpoint entry's session where it stands.
    A session that is gone, or that holds every byte but whose handle was lost, is replaced
    by a new one from the first byte (an upload makes no post); one that ends mid-upload
    is replaced once more in this attempt. Raises SessionRefused when `may_fall_back` and
    Meta refuses to open a session."""
    token = upload_token(ctx)
    offset = None
    if entry.get("session"):
        offset = _offset(client, entry["session"], token)
        if offset is not None and offset >= video.size_bytes:
            offset = None
    replaced = False
    while True:
        if offset is None:
            entry["session"] = _open(client, ctx, video, token, may_fall_back=may_fall_back)
            entry["size"] = video.size_bytes
            ctx.persist_checkpoint()
            offset = 0
        try:
            return _append_all(client, entry["session"], token, video, offset)
        except _SessionGone:
            if replaced:
                raise ProviderError(
                    ErrorKind.PROVIDER_UNAVAILABLE,
                    "Facebook ended two upload sessions before the video was sent; the "
                    "next attempt starts a new one.",
                    code="upload_session_gone",
                ) from None
            replaced, offset = True, None


def open_session(client: httpx.Client, video: MediaPayload, token: str, name: str) -> str:
    """`POST /{app-id}/uploads`: the session id ("upload:..."); nothing is made yet."""
    body = graph_call(
        client,
        "POST",
        f"{FACEBOOK_GRAPH}/{settings.META_APP_ID}/uploads",
        data={
            "file_name": name,
            "file_length": str(video.size_bytes),
            "file_type": video.mime_type,
        },
        headers={"Authorization": f"Bearer {token}"},
        is_create=False,
    )
    return str(body["id"])


def upload_token(ctx: PublishContext) -> str:
    """The operator's app-role token when configured, else the Page's own."""
    return settings.META_UPLOAD_ACCESS_TOKEN or ctx.credentials.get("access_token", "")


def find_video_id(
    client: httpx.Client, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
) -> str | None:
    """Best effort: the id of a video among the Page's newest (video-api/guides/get-videos)
    with the segment's text, made after the unanswered call went out (a little clock skew
    allowed). Whether a video still processing is listed is not documented."""
    since = not_before - timedelta(minutes=2)
    body = graph_call(
        client,
        "GET",
        f"{FACEBOOK_GRAPH}/{ctx.account.remote_id}/videos",
        params={"fields": "id,description,created_time", "limit": 25},
        is_create=False,
    )
    wanted = normalize_text(segment.text)
    for video in body.get("data", []):
        created = parse_graph_time(video.get("created_time"))
        if normalize_text(video.get("description")) == wanted and created and created >= since:
            return str(video["id"])
    return None


def sent_at(entry: dict) -> datetime:
    """When the entry's videos call went out (now, if it never recorded it)."""
    value = entry.get("publish_sent")
    return datetime.fromisoformat(value) if isinstance(value, str) else timezone.now()


# Upload ------------------------------------------------------------------------------


def _open(
    client: httpx.Client,
    ctx: PublishContext,
    video: MediaPayload,
    token: str,
    *,
    may_fall_back: bool,
) -> str:
    try:
        return open_session(client, video, token, f"rendition-{ctx.rendition_id}.mp4")
    except ProviderError as err:
        if may_fall_back and err.kind in REFUSALS_TO_FALL_BACK:
            raise SessionRefused(str(err)) from err
        raise


def _append_all(
    client: httpx.Client, session: str, token: str, video: MediaPayload, offset: int
) -> str:
    """Append from `offset` to the end; the last append answers the handle. A dropped
    connection or an offset the session disagrees with is resumed from the offset the
    session reports, MAX_RESUMES times."""
    resumes = 0
    with video.open() as fh:
        while True:
            fh.seek(offset)
            chunk = fh.read(CHUNK_BYTES)
            try:
                body = graph_call(
                    client,
                    "POST",
                    f"{FACEBOOK_GRAPH}/{session}",
                    content=chunk,
                    headers={
                        "Authorization": f"OAuth {token}",
                        "file_offset": str(offset),
                        "Content-Type": "application/octet-stream",
                    },
                    is_create=False,
                )
            except ProviderError as err:
                if err.code == GONE:
                    raise _SessionGone from err
                if resumes >= MAX_RESUMES or not _resumable(err):
                    raise
                resumes += 1
                reported = _offset(client, session, token)
                if reported is None:
                    raise _SessionGone from err
                offset = reported
                continue
            if body.get("h"):
                return str(body["h"])
            offset = int(body.get("file_offset", offset + len(chunk)))


def _resumable(err: ProviderError) -> bool:
    """A connection that dropped or timed out mid-append, a 5xx, or an offset the session
    does not hold (Meta documents no error for it; it is read again)."""
    return err.retryable or err.kind in (
        ErrorKind.OUTCOME_UNKNOWN,
        ErrorKind.NETWORK_BEFORE_SEND,
        ErrorKind.PROVIDER_UNAVAILABLE,
        ErrorKind.CONTENT_REJECTED,
    )


def _offset(client: httpx.Client, session: str, token: str) -> int | None:
    """`GET /upload:<session>`: how many bytes it holds, or None when it is gone."""
    try:
        body = graph_call(
            client,
            "GET",
            f"{FACEBOOK_GRAPH}/{session}",
            headers={"Authorization": f"OAuth {token}"},
            is_create=False,
        )
    except ProviderError as err:
        if err.code == GONE:
            return None
        raise
    return int(body.get("file_offset") or 0)
