"""Facebook media: photos (by URL or uploaded), and videos (by URL, by the Resumable
Upload API's file handle, or by upload_phase), where processing decides when the video
becomes a post."""

from __future__ import annotations

from contextlib import ExitStack

import httpx
from django.conf import settings
from django.utils import timezone

from apps.providers.base import MediaPayload, PublishContext, PublishedSegment, SegmentPayload
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.facebook import resumable
from apps.providers.meta.graph import FACEBOOK_GRAPH, GRAPH_VERSION, graph_call

FACEBOOK_VIDEO_GRAPH = f"https://graph-video.facebook.com/{GRAPH_VERSION}"
VIDEO_PHASES = ("uploading_phase", "processing_phase", "publishing_phase")


def page_url(ctx: PublishContext, edge: str) -> str:
    return f"{FACEBOOK_GRAPH}/{ctx.account.remote_id}/{edge}"


def photo(
    client: httpx.Client,
    ctx: PublishContext,
    image: MediaPayload,
    *,
    published: bool,
    message: str = "",
) -> dict:
    data = {"published": "true" if published else "false"}
    if message:
        data["message"] = message
    with ExitStack() as stack:
        files = None
        if image.public_url:
            data["url"] = image.public_url
        else:
            handle = stack.enter_context(image.open())
            files = {"source": ("photo", handle, image.mime_type)}
        return graph_call(
            client,
            "POST",
            page_url(ctx, "photos"),
            data=data,
            files=files,
            is_create=published,
        )


def upload_video(
    client: httpx.Client,
    ctx: PublishContext,
    segment: SegmentPayload,
    video: MediaPayload,
) -> PublishedSegment:
    """Upload the video and make it the Page's: by the Resumable Upload API's handle (what
    Meta's Video API guides document), or, where the account or site says `upload_phase` or
    Meta refused the session under "auto", by the videos edge's older ways (`file_url` when
    the pipeline has a public URL, else upload_phase). Pending until processed. A video
    this rendition already made is not made again."""
    entry = video_entry(ctx, segment.position)
    if entry is not None and entry.get("video_id"):
        found = video_lookup(client, entry["video_id"])
        if found is not None:
            return found
    data = {"description": segment.text}
    if ctx.settings.get("title"):
        data["title"] = ctx.settings["title"]
    protocol = (entry or {}).get("protocol") or upload_protocol(ctx)
    if protocol not in ("upload_phase", "file_url"):
        entry = _resumable_entry(ctx, segment.position)
        try:
            return _publish_by_handle(client, ctx, segment, video, entry, data, protocol)
        except resumable.SessionRefused:
            pass  # "auto": Meta refused this token a session; nothing was made
    if video.public_url:
        return _publish_by_url(client, ctx, segment, video.public_url, data)
    # Kept with the video id `start` gives: later attempts stay on this protocol.
    ctx.checkpoint.setdefault("videos", {})[str(segment.position)] = {"protocol": "upload_phase"}
    return _upload_phases(client, ctx, segment, video, data)


def upload_protocol(ctx: PublishContext) -> str:
    """The account's `video_upload` setting, else FACEBOOK_VIDEO_UPLOAD; "auto" needs the
    Meta app's id to open sessions with."""
    chosen = ctx.account.settings.get("video_upload") or settings.FACEBOOK_VIDEO_UPLOAD
    if chosen == "auto" and not settings.META_APP_ID:
        return "upload_phase"
    return chosen if chosen in ("auto", "resumable", "upload_phase") else "auto"


def find_unanswered(
    client: httpx.Client, ctx: PublishContext, segment: SegmentPayload, entry: dict
) -> PublishedSegment | None:
    """The video an unanswered videos call may have made, looked up among the Page's
    videos; kept in the checkpoint when found, so polling follows it."""
    video_id = resumable.find_video_id(client, ctx, segment, not_before=resumable.sent_at(entry))
    if video_id is None:
        return None
    entry["video_id"] = video_id
    ctx.persist_checkpoint()
    return video_lookup(client, video_id) or PublishedSegment(
        provider_post_id=video_id, pending=True
    )


def _publish_by_handle(
    client: httpx.Client,
    ctx: PublishContext,
    segment: SegmentPayload,
    video: MediaPayload,
    entry: dict,
    data: dict,
    protocol: str,
) -> PublishedSegment:
    """Upload (or resume) to a file handle, then `POST /{page-id}/videos` with it, on
    graph.facebook.com (Meta's Video API overview: the graph-video host is deprecated)."""
    if entry.get("publish_sent"):
        # An earlier videos call went unanswered: look before sending it again.
        found = find_unanswered(client, ctx, segment, entry)
        if found is not None:
            return found
    if not entry.get("handle"):
        handle = resumable.upload(client, ctx, video, entry, may_fall_back=protocol == "auto")
        entry["handle"] = handle
        ctx.persist_checkpoint()
    entry["publish_sent"] = timezone.now().isoformat()
    ctx.persist_checkpoint()
    body = graph_call(
        client,
        "POST",
        page_url(ctx, "videos"),
        data={**data, "fbuploader_video_file_chunk": entry["handle"]},
        is_create=True,
    )
    entry["video_id"] = str(body["id"])
    ctx.persist_checkpoint()
    return PublishedSegment(provider_post_id=entry["video_id"], pending=True)


def _publish_by_url(
    client: httpx.Client, ctx: PublishContext, segment: SegmentPayload, url: str, data: dict
) -> PublishedSegment:
    """`file_url`: Facebook fetches the video itself; this one call makes it, so it is
    marked sent first and, after an unanswered one, looked up before it is sent again."""
    videos = ctx.checkpoint.setdefault("videos", {})
    entry = videos.get(str(segment.position)) or {}
    if entry.get("protocol") == "file_url" and entry.get("publish_sent"):
        found = find_unanswered(client, ctx, segment, entry)
        if found is not None:
            return found
    entry = videos[str(segment.position)] = {
        "protocol": "file_url",
        "publish_sent": timezone.now().isoformat(),
    }
    ctx.persist_checkpoint()
    body = graph_call(
        client,
        "POST",
        f"{FACEBOOK_VIDEO_GRAPH}/{ctx.account.remote_id}/videos",
        data={**data, "file_url": url},
        is_create=True,
    )
    entry["video_id"] = str(body["id"])
    ctx.persist_checkpoint()
    return PublishedSegment(provider_post_id=entry["video_id"], pending=True)


def _resumable_entry(ctx: PublishContext, position: int) -> dict:
    videos = ctx.checkpoint.setdefault("videos", {})
    entry = videos.get(str(position))
    if not entry or entry.get("protocol") != "resumable":
        entry = videos[str(position)] = {"protocol": "resumable"}
    return entry


def _upload_phases(
    client: httpx.Client,
    ctx: PublishContext,
    segment: SegmentPayload,
    video: MediaPayload,
    data: dict,
) -> PublishedSegment:
    """The videos edge's own chunked upload on graph-video.facebook.com: start, transfer
    in the chunks Facebook names, finish. The video id comes with `start`."""
    url = f"{FACEBOOK_VIDEO_GRAPH}/{ctx.account.remote_id}/videos"
    start = graph_call(
        client,
        "POST",
        url,
        data={"upload_phase": "start", "file_size": str(video.size_bytes)},
        is_create=False,
    )
    video_id, session = str(start["video_id"]), str(start["upload_session_id"])
    # Kept before the first chunk: after a lost `finish` answer, the video's status
    # tells whether the upload was finished.
    _keep_video(ctx, segment.position, video_id)
    offsets = (int(start["start_offset"]), int(start["end_offset"]))
    with video.open() as fh:
        while offsets[0] < offsets[1]:
            fh.seek(offsets[0])
            chunk = fh.read(offsets[1] - offsets[0])
            body = graph_call(
                client,
                "POST",
                url,
                data={
                    "upload_phase": "transfer",
                    "upload_session_id": session,
                    "start_offset": str(offsets[0]),
                },
                files={"video_file_chunk": ("chunk", chunk, "application/octet-stream")},
                is_create=False,
            )
            offsets = (int(body["start_offset"]), int(body["end_offset"]))
    graph_call(
        client,
        "POST",
        url,
        data={**data, "upload_phase": "finish", "upload_session_id": session},
        is_create=True,
    )
    return PublishedSegment(provider_post_id=video_id, pending=True)


def upload_session(client: httpx.Client, ctx: PublishContext, video: MediaPayload) -> str:
    """Open a Resumable Upload API session for `video` with the token publishing would use
    and return its id; nothing is uploaded into it (an unused session lapses)."""
    return resumable.open_session(client, video, resumable.upload_token(ctx), "platform-check.mp4")


def video_state(client: httpx.Client, video_id: str) -> dict:
    """The video's status; raises when Facebook could not process it."""
    body = graph_call(
        client,
        "GET",
        f"{FACEBOOK_GRAPH}/{video_id}",
        params={"fields": "status,permalink_url"},
        is_create=False,
    )
    status = body.get("status") or {}
    phases = [status.get(p) or {} for p in VIDEO_PHASES]
    if status.get("video_status") == "error" or any(p.get("status") == "error" for p in phases):
        raise ProviderError(
            ErrorKind.CONTENT_REJECTED,
            "Facebook could not process the video.",
            code="video_error",
        )
    return body


def video_lookup(client: httpx.Client, video_id: str) -> PublishedSegment | None:
    """Published, pending while processing, or None when the upload never finished."""
    try:
        body = video_state(client, video_id)
    except ProviderError as exc:
        if exc.code == "video_error" or exc.kind != ErrorKind.CONTENT_REJECTED:
            raise
        return None  # Facebook knows no such video (code 100): nothing was made
    status = body.get("status") or {}
    if is_published(body):
        return PublishedSegment(
            provider_post_id=video_id,
            provider_url=absolute_url(body.get("permalink_url", "")),
        )
    if (status.get("uploading_phase") or {}).get("status") == "complete":
        return PublishedSegment(provider_post_id=video_id, pending=True)
    return None


def is_published(body: dict) -> bool:
    """`upload_complete` and `processing` are not published: a video is a post once it is
    `ready` and its publishing phase (when reported) is complete."""
    status = body.get("status") or {}
    publishing = (status.get("publishing_phase") or {}).get("status", "complete")
    return status.get("video_status") == "ready" and publishing == "complete"


def video_entry(ctx: PublishContext, position: int) -> dict | None:
    return ctx.checkpoint.get("videos", {}).get(str(position))


def _keep_video(ctx: PublishContext, position: int, video_id: str) -> None:
    entry = ctx.checkpoint.setdefault("videos", {}).setdefault(str(position), {})
    entry["video_id"] = video_id
    ctx.persist_checkpoint()


def absolute_url(permalink: str) -> str:
    """Video permalinks come back as paths ("/page/videos/1/")."""
    if permalink.startswith("/"):
        return f"https://www.facebook.com{permalink}"
    return permalink
