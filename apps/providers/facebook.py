"""Facebook Pages: text and link posts, photos (one, or several attached to a feed post),
and videos (uploaded to graph-video.facebook.com, pending until processed), published with
the Page's access token.

Connecting goes through the person who manages the Page: their token is exchanged for a
long-lived one, their Pages are listed, and `page_select` turns the chosen Page into the
account to store (a Page token derived from a long-lived user token does not expire).
Facebook offers no idempotency handle; a lost answer is reconciled by listing the Page's
published posts.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from datetime import datetime, timedelta
from urllib.parse import urlencode

import httpx
from django.conf import settings
from django.utils import timezone

from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    MediaPayload,
    PollSchedule,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.meta_graph import (
    FACEBOOK_GRAPH,
    GRAPH_VERSION,
    exchange_token,
    graph_call,
    graph_client,
    normalize_text,
    parse_graph_time,
    token_call,
)
from apps.providers.oauth import parse_expires_at

FACEBOOK_AUTHORIZE = f"https://www.facebook.com/{GRAPH_VERSION}/dialog/oauth"
SCOPES = ["pages_manage_posts", "pages_read_engagement", "pages_show_list", "publish_video"]
# A Page role that may publish (`tasks` of /me/accounts).
PUBLISH_TASK = "CREATE_CONTENT"

# Video processing: first check after 5 s, then every 10 s growing to a minute, 30 min budget.
POLL_SCHEDULE = PollSchedule(
    initial_delay_s=5, interval_s=10, factor=1.5, max_interval_s=60, max_wait_s=1800
)
FACEBOOK_VIDEO_GRAPH = f"https://graph-video.facebook.com/{GRAPH_VERSION}"
VIDEO_PHASES = ("uploading_phase", "processing_phase", "publishing_phase")


class FacebookPagesAdapter(Adapter):
    platform = "facebook"
    poll_schedule = POLL_SCHEDULE

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        if reply_to is not None:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "Facebook Pages have no threads; publish one segment.",
                code="threads_unsupported",
            )
        videos = [m for m in segment.media if m.kind == "video"]
        images = [m for m in segment.media if m.kind != "video"]
        if videos and (images or len(videos) > 1):
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "A Facebook post holds one video, or photos, not both.",
                code="media_mix",
            )
        with graph_client(ctx.credentials.get("access_token")) as client:
            if videos:
                return self._video(client, ctx, segment, videos[0])
            if len(images) == 1:
                body = self._photo(client, ctx, images[0], message=segment.text, published=True)
                post_id = str(body.get("post_id") or body["id"])
            else:
                data = {"message": segment.text}
                if ctx.settings.get("link"):
                    data["link"] = ctx.settings["link"]
                if images:
                    # Unpublished photos are invisible until the feed post attaches them.
                    fbids = [
                        self._photo(client, ctx, image, published=False)["id"] for image in images
                    ]
                    data["attached_media"] = json.dumps([{"media_fbid": i} for i in fbids])
                body = graph_call(client, "POST", self._url(ctx, "feed"), data=data, is_create=True)
                post_id = str(body["id"])
            return PublishedSegment(
                provider_post_id=post_id,
                provider_url=self._permalink(client, post_id),
                published_at=timezone.now(),
            )

    def poll_segment(self, ctx: PublishContext, pending: PublishedSegment) -> PublishedSegment:
        """A video stays pending until Facebook has processed and published it: an upload
        that is complete is not yet a post."""
        with graph_client(ctx.credentials.get("access_token")) as client:
            body = self._video_state(client, pending.provider_post_id)
        if _is_published(body):
            return PublishedSegment(
                provider_post_id=pending.provider_post_id,
                provider_url=_absolute(body.get("permalink_url", "")),
                published_at=timezone.now(),
            )
        return pending

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """A video this rendition uploaded is asked about by its id: published, still
        processing (pending: polling finishes it), or never finished uploading (absent).
        Anything else is best effort: the Page's recent published posts with the same
        text, made after the attempt began (a little clock skew allowed)."""
        since = not_before - timedelta(minutes=2)
        with graph_client(ctx.credentials.get("access_token")) as client:
            entry = _video_entry(ctx, segment.position)
            if entry is not None:
                return self._video_lookup(client, entry["video_id"])
            body = graph_call(
                client,
                "GET",
                self._url(ctx, "published_posts"),
                params={
                    "fields": "id,message,created_time,permalink_url",
                    "since": int(since.timestamp()),
                    "limit": 25,
                },
                is_create=False,
            )
        wanted = normalize_text(segment.text)
        for post in body.get("data", []):
            created = parse_graph_time(post.get("created_time"))
            if normalize_text(post.get("message")) == wanted and created and created >= since:
                return PublishedSegment(
                    provider_post_id=str(post["id"]),
                    provider_url=post.get("permalink_url", ""),
                    published_at=created,
                )
        return None

    # Steps -----------------------------------------------------------------------------

    @staticmethod
    def _url(ctx: PublishContext, edge: str) -> str:
        return f"{FACEBOOK_GRAPH}/{ctx.account.remote_id}/{edge}"

    def _photo(
        self,
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
                self._url(ctx, "photos"),
                data=data,
                files=files,
                is_create=published,
            )

    def _video(
        self,
        client: httpx.Client,
        ctx: PublishContext,
        segment: SegmentPayload,
        video: MediaPayload,
    ) -> PublishedSegment:
        """Upload the video to graph-video.facebook.com (Facebook takes video uploads only
        there): by URL when the pipeline has a public one, else resumably in the chunks
        Facebook names. Pending until processed. A video this rendition already uploaded is
        not uploaded again."""
        entry = _video_entry(ctx, segment.position)
        if entry is not None:
            found = self._video_lookup(client, entry["video_id"])
            if found is not None:
                return found
        data = {"description": segment.text}
        if ctx.settings.get("title"):
            data["title"] = ctx.settings["title"]
        url = f"{FACEBOOK_VIDEO_GRAPH}/{ctx.account.remote_id}/videos"
        if video.public_url:
            body = graph_call(
                client, "POST", url, data={**data, "file_url": video.public_url}, is_create=True
            )
            _keep_video(ctx, segment.position, str(body["id"]))
            return PublishedSegment(provider_post_id=str(body["id"]), pending=True)
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

    def _video_state(self, client: httpx.Client, video_id: str) -> dict:
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

    def _video_lookup(self, client: httpx.Client, video_id: str) -> PublishedSegment | None:
        """Published, pending while processing, or None when the upload never finished."""
        try:
            body = self._video_state(client, video_id)
        except ProviderError as exc:
            if exc.code == "video_error" or exc.kind != ErrorKind.CONTENT_REJECTED:
                raise
            return None  # Facebook knows no such video (code 100): nothing was made
        status = body.get("status") or {}
        if _is_published(body):
            return PublishedSegment(
                provider_post_id=video_id,
                provider_url=_absolute(body.get("permalink_url", "")),
            )
        if (status.get("uploading_phase") or {}).get("status") == "complete":
            return PublishedSegment(provider_post_id=video_id, pending=True)
        return None

    @staticmethod
    def _permalink(client: httpx.Client, post_id: str) -> str:
        # The post exists already: a failed read only costs the exact URL.
        try:
            body = graph_call(
                client,
                "GET",
                f"{FACEBOOK_GRAPH}/{post_id}",
                params={"fields": "permalink_url"},
                is_create=False,
            )
        except ProviderError:
            return f"https://www.facebook.com/{post_id}"
        return _absolute(body.get("permalink_url", "")) or f"https://www.facebook.com/{post_id}"

    # Connect ---------------------------------------------------------------------------

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        query = {
            "client_id": settings.META_APP_ID,
            "redirect_uri": redirect_uri,
            "state": state,
            "response_type": "code",
            "scope": ",".join(SCOPES),
        }
        return f"{FACEBOOK_AUTHORIZE}?{urlencode(query)}"

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        """The Page to store when the person can publish to exactly one; otherwise the
        person, with their Pages to choose from in `settings["pages"]` (see
        `account_choices` / `select_account`). Page tokens stay in the credentials."""
        short = token_call(
            "GET",
            f"{FACEBOOK_GRAPH}/oauth/access_token",
            params={
                "client_id": settings.META_APP_ID,
                "redirect_uri": redirect_uri,
                "client_secret": settings.META_APP_SECRET,
                "code": code,
            },
        )
        long_lived = exchange_token(
            f"{FACEBOOK_GRAPH}/oauth/access_token",
            {
                "grant_type": "fb_exchange_token",
                "client_id": settings.META_APP_ID,
                "client_secret": settings.META_APP_SECRET,
                "fb_exchange_token": short["access_token"],
            },
        )
        with graph_client(long_lived["access_token"]) as client:
            me = graph_call(
                client, "GET", f"{FACEBOOK_GRAPH}/me", params={"fields": "id,name"}, is_create=False
            )
            accounts = graph_call(
                client,
                "GET",
                f"{FACEBOOK_GRAPH}/me/accounts",
                params={"fields": "id,name,access_token,tasks", "limit": 100},
                is_create=False,
            )
        pages = accounts.get("data", [])
        person = ConnectedIdentity(
            remote_id=str(me["id"]),
            handle=me.get("name", ""),
            display_name=me.get("name", ""),
            credentials={
                "user_access_token": long_lived["access_token"],
                "page_tokens": {str(p["id"]): p["access_token"] for p in pages},
            },
            token_expires_at=parse_expires_at(long_lived["expires_at"]),
            settings={
                "pages": [
                    {
                        "id": str(p["id"]),
                        "name": p.get("name", ""),
                        "can_publish": PUBLISH_TASK in p.get("tasks", [PUBLISH_TASK]),
                    }
                    for p in pages
                ]
            },
        )
        publishable = [p for p in person.settings["pages"] if p["can_publish"]]
        if len(publishable) == 1:
            # Nothing to choose: the one Page is the account.
            return page_select(person, page_id=publishable[0]["id"])
        return person

    def account_choices(self, identity: ConnectedIdentity) -> list[dict]:
        """The Pages to pick from after connect; empty once the identity is a Page."""
        if "page_id" in identity.settings:
            return []
        return list(identity.settings.get("pages", []))

    def select_account(self, identity: ConnectedIdentity, *, choice_id: str) -> ConnectedIdentity:
        return page_select(identity, page_id=choice_id)


def page_select(identity: ConnectedIdentity, *, page_id: str) -> ConnectedIdentity:
    """The account to store for the chosen Page: its id, name and Page token.

    Raises LookupError for a Page the person did not grant, or cannot publish to.
    """
    pages = identity.settings.get("pages", [])
    page = next((p for p in pages if p["id"] == str(page_id)), None)
    if page is None:
        raise LookupError(f"Page {page_id} was not among the Pages granted to this site.")
    if not page["can_publish"]:
        raise LookupError(f"The connected person cannot publish to the Page {page['name']}.")
    return ConnectedIdentity(
        remote_id=page["id"],
        handle=page["name"],
        display_name=page["name"],
        # A Page token derived from a long-lived user token does not expire.
        credentials={"access_token": identity.credentials["page_tokens"][page["id"]]},
        token_expires_at=None,
        settings={"page_id": page["id"], "connected_by": identity.remote_id},
    )


def _is_published(body: dict) -> bool:
    """`upload_complete` and `processing` are not published: a video is a post once it is
    `ready` and its publishing phase (when reported) is complete."""
    status = body.get("status") or {}
    publishing = (status.get("publishing_phase") or {}).get("status", "complete")
    return status.get("video_status") == "ready" and publishing == "complete"


def _video_entry(ctx: PublishContext, position: int) -> dict | None:
    return ctx.checkpoint.get("videos", {}).get(str(position))


def _keep_video(ctx: PublishContext, position: int, video_id: str) -> None:
    ctx.checkpoint.setdefault("videos", {})[str(position)] = {"video_id": video_id}
    ctx.persist_checkpoint()


def _absolute(permalink: str) -> str:
    """Video permalinks come back as paths ("/page/videos/1/")."""
    if permalink.startswith("/"):
        return f"https://www.facebook.com{permalink}"
    return permalink


register_adapter(FacebookPagesAdapter())
