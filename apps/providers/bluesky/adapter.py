"""The Bluesky adapter: posts, images, video and GIFs, link cards, reply threads, first
comments (self-replies), reconciliation, connect.

A post with a video (or an animated GIF, which Bluesky shows as a video) is asynchronous:
the file goes to the video service, the job id is checkpointed the moment it exists, the
segment answers pending, and `poll_segment` creates the post once the job hands back the
video blob. A worker stopped at any point resumes that job; it never uploads again.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from apps.accounts.installation import installation_id
from apps.accounts.models import SocialAccount
from apps.common import outbound
from apps.common.errors import ValidationFailed
from apps.providers import httpcall, oauth
from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    Implements,
    MediaPayload,
    PollSchedule,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    register_adapter,
)
from apps.providers.bluesky import cards, session, video
from apps.providers.bluesky.errors import (
    classify,
    error_name,
    is_expired_token,
    is_record_exists,
)
from apps.providers.bluesky.facets import build_facets, first_link, mention_handles
from apps.providers.bluesky.langs import post_langs
from apps.providers.bluesky.tid import MAX_POSITION, legacy_segment_rkey, segment_rkey
from apps.providers.errors import ErrorKind, ProviderError

POST = "app.bsky.feed.post"
MAX_IMAGES = 4
REFRESH_MARGIN = timedelta(minutes=5)
MOVING_KINDS = ("video", "gif")  # both go through the video service
VIDEO_JOB = "bluesky-video-job:"  # the pending id of a segment waiting for its video
# The video service's processing: seconds to a few minutes; the docs poll every second.
POLL_SCHEDULE = PollSchedule(
    initial_delay_s=2, interval_s=2, factor=1.5, max_interval_s=10, max_wait_s=900
)


class BlueskyAdapter(Adapter):
    platform = "bluesky"
    implements = Implements(
        media_kinds=frozenset({"image", "video", "gif"}),
        max_images=MAX_IMAGES,
        max_videos=1,  # a GIF goes as the post's one video
        settings=frozenset({"langs", "language", "link_card"}),
        threads=True,
        alt_text=True,
    )
    poll_schedule = POLL_SCHEDULE
    # Each segment's record key is fixed before the first attempt; the repository refuses a
    # second record under it, so resending after an unknown outcome cannot post twice.
    retry_safe_after_unknown = True
    poll_makes_post = True  # a video's post is created once its blob exists (under its key)
    lookup_is_strong = True  # getRecord by the deterministic record key
    comment_lookup_is_strong = True  # the same for the comment's keys: absent means never made

    # Credentials

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        expiry = oauth.parse_expires_at(credentials.get("expires_at")) or account.token_expires_at
        if expiry is not None and not oauth.is_near_expiry(expiry, REFRESH_MARGIN):
            return None
        return session.refresh_session(credentials)

    def connect_with_password(
        self, *, identifier: str, password: str, service: str | None = None
    ) -> ConnectedIdentity:
        service_url = (service or session.DEFAULT_SERVICE).strip().rstrip("/")
        if "://" not in service_url:
            service_url = f"https://{service_url}"
        try:
            httpcall.require_public_https(service_url)
        except outbound.ForbiddenTarget as exc:
            raise ValidationFailed(str(exc), code="INVALID_SERVICE") from exc
        body, pds = session.create_session(
            service=service_url, identifier=identifier.strip().lstrip("@"), password=password
        )
        credentials = session.credentials_from(body, pds)
        return ConnectedIdentity(
            remote_id=body["did"],
            handle=body["handle"],
            display_name=body["handle"],
            credentials=credentials,
            token_expires_at=oauth.parse_expires_at(credentials["expires_at"]),
            settings={"did": body["did"], "pds": pds},
        )

    # Publishing

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        xrpc = _Xrpc(ctx)
        rkey = _kept_rkey(ctx, segment.position)
        created_at = datetime.now(UTC)
        record = _text_record(ctx, xrpc, segment.text, created_at)
        if reply_to is not None:
            record["reply"] = {
                "root": xrpc.strong_ref(reply_to.root.provider_post_id),
                "parent": xrpc.strong_ref(reply_to.parent.provider_post_id),
            }
        if rkey is None:
            # Sent before keys were checkpointed: its post may sit under the legacy key.
            found = _legacy_post(ctx, xrpc, segment)
            if found is not None:
                return found
            rkey = _rkey(ctx, segment.position)
        moving = [m for m in segment.media if m.kind in MOVING_KINDS]
        if moving:
            return self._publish_video(ctx, xrpc, segment, record)
        embed = self._embed(ctx, xrpc, segment)
        if embed:
            record["embed"] = embed
        return self._create_segment(ctx, xrpc, segment.position, rkey, record, created_at)

    def _create_segment(
        self,
        ctx: PublishContext,
        xrpc: _Xrpc,
        position: int,
        rkey: str,
        record: dict,
        created_at: datetime,
    ) -> PublishedSegment:
        try:
            return self._create(xrpc, rkey, record, created_at)
        except _KeyTaken:
            # Another post holds the key, so our create never landed under it: a fresh key
            # (kept in the checkpoint first) is as safe as the first one was.
            rkey = _replace_rkey(ctx, position)
        try:
            return self._create(xrpc, rkey, record, created_at)
        except _KeyTaken:
            raise ProviderError(
                ErrorKind.UNKNOWN,
                "Bluesky holds other posts under this post's record keys.",
                code="rkey_taken",
            ) from None

    def _create(
        self, xrpc: _Xrpc, rkey: str, record: dict, created_at: datetime
    ) -> PublishedSegment:
        """One createRecord under `rkey`; raises _KeyTaken when another post holds the key."""
        text = record["text"]
        try:
            response = xrpc.call(
                "POST",
                "com.atproto.repo.createRecord",
                is_create=True,
                json={"repo": xrpc.did, "collection": POST, "rkey": rkey, "record": record},
            )
        except ProviderError as exc:
            if exc.kind != ErrorKind.OUTCOME_UNKNOWN:
                raise
            return self._settle(xrpc, rkey, text, exc)
        if response.status_code == 200:
            return PublishedSegment(
                provider_post_id=response.json()["uri"],
                provider_url=_post_url(xrpc.did, rkey),
                published_at=created_at,
            )
        error = classify(response, is_create=True)
        if is_record_exists(response):
            # The explicit "record exists" error: the key is taken, by our post or another.
            exists = ProviderError(
                ErrorKind.PROVIDER_UNAVAILABLE,
                error.message,
                code=error.code,
                http_status=response.status_code,
            )
            return self._settle(xrpc, rkey, text, exists)
        if error.kind == ErrorKind.OUTCOME_UNKNOWN:
            # A create under an existing rkey currently fails with 500 InternalServerError,
            # so a 5xx is answered by looking the key up.
            return self._settle(xrpc, rkey, text, error)
        raise error

    def _settle(self, xrpc: _Xrpc, rkey: str, text: str, error: ProviderError) -> PublishedSegment:
        """After a 5xx, a "record exists" or a lost answer: the record under our key is our
        post (published), another post (_KeyTaken), or nothing."""
        try:
            found = xrpc.get_record(xrpc.did, POST, rkey)
        except ProviderError:
            raise error from None
        if found is not None:
            if not _is_ours(found, text):
                raise _KeyTaken(rkey)
            return _published(xrpc.did, rkey, found)
        if error.http_status is not None:
            # The server answered and holds nothing under the key: nothing was written.
            raise ProviderError(
                ErrorKind.PROVIDER_UNAVAILABLE,
                error.message,
                code=error.code,
                http_status=error.http_status,
            )
        raise error  # no answer at all; the write may still land, the same rkey stays safe

    def _publish_video(
        self,
        ctx: PublishContext,
        xrpc: _Xrpc,
        segment: SegmentPayload,
        record: dict,
    ) -> PublishedSegment:
        """Start (or resume) the segment's video job; pending until the blob exists."""
        if len(segment.media) > 1:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "A Bluesky post carries one video or GIF, alone (no images beside it).",
                code="video_not_alone",
            )
        [media] = segment.media
        extra: dict = {"alt": media.alt_text} if media.alt_text else {}
        if media.width and media.height:
            extra["aspectRatio"] = {"width": media.width, "height": media.height}
        entry = _video_entry(ctx, segment.position)
        if entry is None:
            job = video.start(xrpc, media)
            entry = {"job_id": job.job_id}
            if job.blob:
                entry["blob"] = job.blob
        # The post to make once the blob exists (poll_segment has no segment to read).
        entry.update(record=record, embed=extra)
        _keep_video(ctx, segment.position, entry)  # before anything else: accepted work
        if entry.get("blob"):
            return self._create_video_post(ctx, xrpc, segment.position, entry)
        return PublishedSegment(provider_post_id=f"{VIDEO_JOB}{entry['job_id']}", pending=True)

    def poll_segment(self, ctx: PublishContext, pending: PublishedSegment) -> PublishedSegment:
        """The video job: still processing (pending), failed (the error; a retry uploads
        anew), or done, when the post is created under the segment's record key."""
        job_id = pending.provider_post_id.removeprefix(VIDEO_JOB)
        position, entry = _video_for_job(ctx, job_id)
        if entry is None:
            raise ProviderError(
                ErrorKind.UNKNOWN,
                "The video upload's saved state was lost; retry the post.",
                code="checkpoint_missing",
            )
        if not entry.get("blob"):
            try:
                status = video.job_status(job_id)
            except ProviderError as err:
                if err.code == "video_job_unknown":
                    _drop_video(ctx, position)
                raise
            if not status.get("blob"):
                if status.get("state") == video.FAILED:
                    _drop_video(ctx, position)
                    raise video.failure(status)
                return pending
            entry["blob"] = status["blob"]
            _keep_video(ctx, position, entry)
        return self._create_video_post(ctx, _Xrpc(ctx), position, entry)

    def _create_video_post(
        self, ctx: PublishContext, xrpc: _Xrpc, position: int, entry: dict
    ) -> PublishedSegment:
        created_at = datetime.now(UTC)
        record = {
            **entry["record"],
            "createdAt": created_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "embed": {"$type": "app.bsky.embed.video", "video": entry["blob"], **entry["embed"]},
        }
        rkey = _rkey(ctx, position)
        return self._create_segment(ctx, xrpc, position, rkey, record, created_at)

    def _embed(self, ctx: PublishContext, xrpc: _Xrpc, segment: SegmentPayload) -> dict | None:
        if segment.media:
            if len(segment.media) > MAX_IMAGES:
                raise ProviderError(
                    ErrorKind.CONTENT_REJECTED,
                    f"Bluesky takes at most {MAX_IMAGES} images per post.",
                    code="too_many_images",
                )
            return {
                "$type": "app.bsky.embed.images",
                "images": [self._image(xrpc, media) for media in segment.media],
            }
        link = first_link(segment.text)
        if link and ctx.settings.get("link_card", True):
            return cards.link_card(link, xrpc.upload_blob)
        return None

    def _image(self, xrpc: _Xrpc, media: MediaPayload) -> dict:
        with media.open() as fh:
            blob = xrpc.upload_blob(fh.read(), media.mime_type)
        image: dict = {"image": blob, "alt": media.alt_text or ""}
        if media.width and media.height:
            image["aspectRatio"] = {"width": media.width, "height": media.height}
        return image

    # First comment

    def publish_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment:
        """A self-reply to the post (root and parent both), built like a segment (facets,
        langs, link card) under the comment's record key, or its fallback when another
        record holds that key."""
        xrpc = _Xrpc(ctx)
        created_at = datetime.now(UTC)
        record = _text_record(ctx, xrpc, text, created_at)
        ref = xrpc.strong_ref(post.provider_post_id)
        record["reply"] = {"root": ref, "parent": ref}
        embed = self._embed(ctx, xrpc, SegmentPayload(0, text))
        if embed:
            record["embed"] = embed
        for rkey in _comment_rkeys(ctx, key):
            try:
                return self._create(xrpc, rkey, record, created_at)
            except _KeyTaken:
                continue  # our create never landed under it: the fallback is as safe
        raise ProviderError(
            ErrorKind.UNKNOWN,
            "Bluesky holds other posts under this comment's record keys.",
            code="rkey_taken",
        )

    def find_comment(
        self, ctx: PublishContext, post: PublishedSegment, text: str, *, key: str
    ) -> PublishedSegment | None:
        """Strong: getRecord by the comment's record key, then by its fallback only when
        another record holds the first (the only case a create goes there)."""
        xrpc = _Xrpc(ctx)
        for rkey in _comment_rkeys(ctx, key):
            found = xrpc.get_record(xrpc.did, POST, rkey)
            if found is None:
                return None
            if _is_ours(found, text):
                return _published(xrpc.did, rkey, found)
        return None

    # Deletion (the live validation's clean-up)

    def delete_post(self, ctx: PublishContext, post: PublishedSegment) -> None:
        """Delete the post's record (a reply made as a first comment is one too). Deleting
        a record that is not there succeeds: the repository simply does not hold it."""
        if not post.provider_post_id.startswith("at://"):
            raise ProviderError(
                ErrorKind.UNKNOWN,
                "The video is still being processed, so there is no record to delete yet; "
                "delete it in the app.",
                code="post_unidentified",
                retryable=False,
            )
        repo, collection, rkey = post.provider_post_id.removeprefix("at://").split("/", 2)
        response = _Xrpc(ctx).call(
            "POST",
            "com.atproto.repo.deleteRecord",
            is_create=False,
            json={"repo": repo, "collection": collection, "rkey": rkey},
        )
        if response.status_code != 200:
            raise classify(response, is_create=False)

    # Reconciliation

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """Strong: the segment's record key holds our post, or it does not exist. A record
        under the key with other text is not ours (our create cannot have landed there)."""
        xrpc = _Xrpc(ctx)
        kept = _kept_rkey(ctx, segment.position)
        if kept is None:
            legacy = _legacy_post(ctx, xrpc, segment)
            if legacy is not None:
                return legacy
        rkey = kept or _rkey(ctx, segment.position, persist=False)
        found = xrpc.get_record(xrpc.did, POST, rkey)
        if found is not None and _is_ours(found, segment.text):
            return _published(xrpc.did, rkey, found)
        entry = _video_entry(ctx, segment.position)
        if entry is not None and entry.get("job_id"):
            # The video service holds our upload: wait for it, never upload again.
            return PublishedSegment(provider_post_id=f"{VIDEO_JOB}{entry['job_id']}", pending=True)
        return None


class _Xrpc:
    """Authenticated XRPC calls to the account's PDS. A stale access JWT (400 ExpiredToken)
    is refreshed once, stored at once (refreshSession revokes the old refresh JWT), and the
    call repeated: the refusal happened before anything was written."""

    def __init__(self, ctx: PublishContext) -> None:
        self.ctx = ctx
        self.pds = ctx.credentials.get("pds") or ctx.account.settings["pds"]
        self.did = ctx.credentials.get("did") or ctx.account.remote_id
        self._refs: dict[str, dict] = {}

    def call(self, method: str, nsid: str, *, is_create: bool, **kwargs) -> httpx.Response:
        for attempt in range(2):
            headers = {"Authorization": f"Bearer {self.ctx.credentials['access_jwt']}"}
            with httpcall.client(headers=headers, tenant_host=True) as http:
                response = httpcall.send(
                    http, method, f"{self.pds}/xrpc/{nsid}", is_create=is_create, **kwargs
                )
            if attempt == 0 and is_expired_token(response):
                # The pipeline stores them at once: refreshSession revoked the old pair.
                self.ctx.persist_credentials(session.refresh_session(self.ctx.credentials))
                continue
            return response
        return response

    def upload_blob(self, data: bytes, mime_type: str) -> dict:
        response = self.call(
            "POST",
            "com.atproto.repo.uploadBlob",
            is_create=False,  # an unreferenced blob is garbage-collected
            content=data,
            headers={"Content-Type": mime_type},
        )
        if response.status_code != 200:
            raise classify(response, is_create=False)
        return response.json()["blob"]

    def resolve_handles(self, handles: list[str]) -> dict[str, str]:
        """Handle -> DID for each mention; one that does not resolve stays plain text."""
        dids = {}
        for handle in handles:
            try:
                response = self.call(
                    "GET",
                    "com.atproto.identity.resolveHandle",
                    is_create=False,
                    params={"handle": handle},
                )
            except ProviderError:
                continue
            if response.status_code == 200 and response.json().get("did"):
                dids[handle] = response.json()["did"]
        return dids

    def get_record(self, repo: str, collection: str, rkey: str) -> dict | None:
        response = self.call(
            "GET",
            "com.atproto.repo.getRecord",
            is_create=False,
            params={"repo": repo, "collection": collection, "rkey": rkey},
        )
        if response.status_code == 200:
            return response.json()
        if response.status_code == 400 and error_name(response) == "RecordNotFound":
            return None
        raise classify(response, is_create=False)

    def strong_ref(self, uri: str) -> dict:
        """{uri, cid} of a published post: replies must name the exact version they answer."""
        if uri in self._refs:
            return self._refs[uri]
        repo, collection, rkey = uri.removeprefix("at://").split("/", 2)
        found = self.get_record(repo, collection, rkey)
        if found is None:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "The post this reply answers no longer exists on Bluesky.",
                code="reply_parent_missing",
            )
        self._refs[uri] = {"uri": found["uri"], "cid": found["cid"]}
        return self._refs[uri]


class _KeyTaken(Exception):
    """The record key holds a post other than ours."""


def _text_record(ctx: PublishContext, xrpc: _Xrpc, text: str, created_at: datetime) -> dict:
    """A post record's text part: the text, its facets (links, mentions, tags) and langs."""
    record: dict = {
        "$type": POST,
        "text": text,
        "createdAt": created_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }
    langs = post_langs(ctx.settings)
    if langs:
        record["langs"] = langs
    facets = build_facets(text, xrpc.resolve_handles(mention_handles(text)))
    if facets:
        record["facets"] = facets
    return record


def _comment_rkeys(ctx: PublishContext, key: str) -> tuple[str, str]:
    """The comment's record key and its fallback, both derived from the comment's key (so
    every attempt and every lookup knows them without a checkpoint). They sit at the last
    thread position, which the post's own segments never reach in practice."""
    base = f"{installation_id()}:{key}"
    first = segment_rkey(ctx.rendition_id, MAX_POSITION, installation=base)
    fallback = segment_rkey(ctx.rendition_id, MAX_POSITION, installation=f"{base}:{first}")
    return first, fallback


def _kept_rkey(ctx: PublishContext, position: int) -> str | None:
    return (ctx.checkpoint.get("rkeys") or {}).get(str(position))


def _legacy_post(
    ctx: PublishContext, xrpc: _Xrpc, segment: SegmentPayload
) -> PublishedSegment | None:
    """Our post under the legacy key (no installation id), for a segment attempted before
    keys were checkpointed; None for a segment never attempted before (its legacy key could
    be an older installation's post)."""
    if not ctx.attempted_before(segment.position):
        return None
    rkey = legacy_segment_rkey(ctx.rendition_id, segment.position)
    found = xrpc.get_record(xrpc.did, POST, rkey)
    if found is None or not _is_ours(found, segment.text):
        return None
    _keep_rkey(ctx, segment.position, rkey)
    return _published(xrpc.did, rkey, found)


def _video_entry(ctx: PublishContext, position: int) -> dict | None:
    entry = (ctx.checkpoint.get("videos") or {}).get(str(position))
    return dict(entry) if entry else None


def _video_for_job(ctx: PublishContext, job_id: str) -> tuple[int, dict | None]:
    for position, entry in (ctx.checkpoint.get("videos") or {}).items():
        if entry.get("job_id") == job_id:
            return int(position), dict(entry)
    return -1, None


def _keep_video(ctx: PublishContext, position: int, entry: dict) -> None:
    ctx.checkpoint["videos"] = {**(ctx.checkpoint.get("videos") or {}), str(position): entry}
    ctx.persist_checkpoint()


def _drop_video(ctx: PublishContext, position: int) -> None:
    """The job is over without a video: a later attempt uploads the file again."""
    videos = dict(ctx.checkpoint.get("videos") or {})
    if videos.pop(str(position), None) is not None:
        ctx.checkpoint["videos"] = videos
        ctx.persist_checkpoint()


def _rkey(ctx: PublishContext, position: int, *, persist: bool = True) -> str:
    """The segment's record key: the one its first attempt used (kept in the checkpoint, so
    a later change of derivation never moves a key in flight), else derived now and
    persisted before the create leaves."""
    keys = ctx.checkpoint.get("rkeys") or {}
    rkey = keys.get(str(position))
    if rkey is None:
        rkey = segment_rkey(ctx.rendition_id, position, installation=installation_id())
        if persist:
            _keep_rkey(ctx, position, rkey)
    return rkey


def _replace_rkey(ctx: PublishContext, position: int) -> str:
    taken = (ctx.checkpoint.get("rkeys") or {}).get(str(position))
    rkey = segment_rkey(ctx.rendition_id, position, installation=f"{installation_id()}:{taken}")
    _keep_rkey(ctx, position, rkey)
    return rkey


def _keep_rkey(ctx: PublishContext, position: int, rkey: str) -> None:
    ctx.checkpoint["rkeys"] = {**(ctx.checkpoint.get("rkeys") or {}), str(position): rkey}
    ctx.persist_checkpoint()


def _is_ours(found: dict, text: str) -> bool:
    return (found.get("value") or {}).get("text") == text


def _published(did: str, rkey: str, found: dict) -> PublishedSegment:
    created = (found.get("value") or {}).get("createdAt")
    return PublishedSegment(
        provider_post_id=found["uri"],
        provider_url=_post_url(did, rkey),
        published_at=datetime.fromisoformat(created.replace("Z", "+00:00")) if created else None,
    )


def _post_url(did: str, rkey: str) -> str:
    return f"https://bsky.app/profile/{did}/post/{rkey}"


register_adapter(BlueskyAdapter())
