"""Reddit: self, link, image and video posts to a chosen subreddit, with title, flair and
body text (Reddit takes body text with every kind of post).

A submit always makes a new post and Reddit has no idempotency handle, so a submit whose
answer is lost is never repeated: it is reconciled by listing the user's recent
submissions. Refusals come back as HTTP 200 with `json.errors`; RATELIMIT among them says
how long to wait in words ("try again in 9 minutes").
"""

from __future__ import annotations

import io
from datetime import UTC, datetime

from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers import oauth
from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    Implements,
    PollSchedule,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.reddit import api, connect, media
from apps.providers.reddit.api import API

KINDS = ("self", "link", "image", "video")
MEDIA_KINDS = ("image", "video")
# Media posts finish asynchronously (Reddit announces them on a websocket); without one,
# the post is looked for in the user's submissions every 15 s for up to 10 minutes. Reddit
# makes an image post in seconds and a video post in a few minutes; one whose processing
# failed never appears, so past the budget a person is asked to look.
POLL_SCHEDULE = PollSchedule(initial_delay_s=5, interval_s=15, max_wait_s=600)
# Reddit announces a media post's failed processing only on the submission's websocket,
# which a poll job cannot hold open; a post that failed is never made, so the listing
# cannot tell "failed" from "late" and a person is asked, with this reason.
MEDIA_NOT_MADE = (
    "Reddit did not make the media post within {minutes} minutes. When Reddit fails to process "
    "an upload it makes no post and says so only on the submission's websocket, which this app "
    "does not read, so the upload most likely failed. Check the subreddit: if the post is not "
    "there, nothing was published and the post can be sent again."
)
# How a post removed at once reads to its author: removed_by_category names who removed it.
REMOVED_BY = {
    "reddit": "Reddit's spam filter",
    "anti_evil_ops": "Reddit's safety team",
    "automod_filtered": "the subreddit's AutoModerator",
    "moderator": "a moderator of the subreddit",
    "content_takedown": "Reddit (a content takedown)",
    "copyright_takedown": "Reddit (a copyright takedown)",
}
REMOVED = (
    "Reddit published this post, then {who} removed it: it still exists, but only you and the "
    "subreddit's moderators can see it. Ask the moderators to approve it if it was a mistake."
)


class RedditAdapter(Adapter):
    platform = "reddit"
    implements = Implements(
        media_kinds=frozenset({"image", "video", "gif"}),
        max_images=1,  # one image (or GIF) post; galleries are not built
        max_videos=1,
        settings=frozenset(
            {
                "subreddit",
                "title",
                "kind",
                "url",
                "flair_id",
                "flair_text",
                "nsfw",
                "spoiler",
                "sendreplies",
                "resubmit",
            }
        ),
    )
    poll_schedule = POLL_SCHEDULE
    retry_safe_after_unknown = False
    processing_timeout_message = MEDIA_NOT_MADE.format(minutes=POLL_SCHEDULE.max_wait_s // 60)

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        data = self._submission(ctx, segment, reply_to)
        with api.client(ctx.credentials) as client:
            if data["kind"] in MEDIA_KINDS:
                file = segment.media[0]
                data["url"] = media.upload(client, file.mime_type, file.open)
                if data["kind"] == "video":
                    data["video_poster_url"] = media.upload(
                        client, "image/png", lambda: io.BytesIO(media.VIDEO_POSTER)
                    )
            ctx.checkpoint["submitted_at"] = int(timezone.now().timestamp())
            # A refusal (json.errors in a 200) raises here.
            body = api.call(client, "POST", f"{API}/api/submit", data=data, is_create=True)
        post = (body.get("json") or {}).get("data") or {}
        if post.get("name") or post.get("id"):
            name = post.get("name") or f"t3_{post['id']}"
            self._check_removal(ctx, name)
            return PublishedSegment(
                provider_post_id=name, provider_url=post.get("url", ""), published_at=timezone.now()
            )
        # A media post: Reddit finishes it later and names it only on its websocket.
        return PublishedSegment(provider_post_id=f"pending:{data['sr']}", pending=True)

    def poll_segment(self, ctx: PublishContext, pending: PublishedSegment) -> PublishedSegment:
        """The media post appears in the user's submissions once Reddit has made it."""
        submitted_at = ctx.checkpoint.get("submitted_at")
        if submitted_at is None:
            raise ProviderError(
                ErrorKind.UNKNOWN,
                "The submission's saved details were lost; check the subreddit.",
                code="checkpoint_missing",
            )
        found = self._find(
            ctx,
            subreddit=ctx.settings.get("subreddit", ""),
            title=ctx.settings.get("title", ""),
            since=int(submitted_at),
        )
        return found or pending

    def lookup_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, not_before: datetime
    ) -> PublishedSegment | None:
        """Best effort: the user's newest submissions, same subreddit and exact title,
        created no earlier than the attempt (media posts can take minutes to appear)."""
        return self._find(
            ctx,
            subreddit=ctx.settings.get("subreddit", ""),
            title=ctx.settings.get("title", ""),
            since=int(not_before.timestamp()),
        )

    # Deletion (the live validation's clean-up) ---------------------------------------

    def delete_post(self, ctx: PublishContext, post: PublishedSegment) -> None:
        """POST /api/del with the post's fullname (the `edit` scope). Reddit answers 200
        with an empty object whether or not the post was still there."""
        if not post.provider_post_id.startswith("t3_"):
            raise ProviderError(
                ErrorKind.UNKNOWN,
                "Reddit has not named this media post yet, so it cannot be deleted here; "
                "delete it on Reddit.",
                code="post_unidentified",
                retryable=False,
            )
        with api.client(ctx.credentials) as client:
            api.call(
                client,
                "POST",
                f"{API}/api/del",
                data={"id": post.provider_post_id},
                is_create=False,
            )

    # Steps -----------------------------------------------------------------------------

    @staticmethod
    def _submission(
        ctx: PublishContext, segment: SegmentPayload, reply_to: ReplyTarget | None
    ) -> dict:
        subreddit = (ctx.settings.get("subreddit") or "").removeprefix("r/").strip()
        title = (ctx.settings.get("title") or "").strip()
        kind = ctx.settings.get("kind") or (
            ("video" if segment.media[0].kind == "video" else "image")
            if segment.media
            else "link"
            if ctx.settings.get("url")
            else "self"
        )
        if reply_to is not None:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "Reddit posts have no threads here; publish one segment.",
                code="threads_unsupported",
            )
        if not subreddit or not title:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "A Reddit post needs a subreddit and a title.",
                code="subreddit_and_title_required",
            )
        media_kind = {"image": ("image", "gif"), "video": ("video",)}.get(kind, ())
        if kind not in KINDS or (
            kind in MEDIA_KINDS
            and (len(segment.media) != 1 or segment.media[0].kind not in media_kind)
        ):
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED,
                "A Reddit post here is a text post, a link, one image or one video.",
                code="unsupported_kind",
            )
        data = {
            "sr": subreddit,
            "title": title,
            "kind": kind,
            "api_type": "json",
            "resubmit": "true" if ctx.settings.get("resubmit", True) else "false",
            "sendreplies": "true" if ctx.settings.get("sendreplies", True) else "false",
            "nsfw": "true" if ctx.settings.get("nsfw") else "false",
            "spoiler": "true" if ctx.settings.get("spoiler") else "false",
        }
        # Body text goes with every kind; a self post always carries it (even empty).
        if kind == "self" or segment.text:
            data["text"] = segment.text
        if kind == "link":
            data["url"] = ctx.settings.get("url", "")
        for key in ("flair_id", "flair_text"):
            if ctx.settings.get(key):
                data[key] = ctx.settings[key]
        return data

    @staticmethod
    def _find(
        ctx: PublishContext, *, subreddit: str, title: str, since: int
    ) -> PublishedSegment | None:
        subreddit = subreddit.removeprefix("r/").strip().lower()
        with api.client(ctx.credentials) as client:
            body = api.call(
                client,
                "GET",
                f"{API}/user/{ctx.account.handle}/submitted",
                params={"sort": "new", "limit": 25},
                is_create=False,
            )
        for child in (body.get("data") or {}).get("children", []):
            post = child.get("data") or {}
            if (
                post.get("subreddit", "").lower() == subreddit
                and post.get("title") == title.strip()
                and float(post.get("created_utc", 0)) >= since
            ):
                _record_removal(ctx, post)
                return PublishedSegment(
                    provider_post_id=post.get("name") or f"t3_{post['id']}",
                    provider_url=f"https://www.reddit.com{post.get('permalink', '')}",
                    published_at=datetime.fromtimestamp(float(post["created_utc"]), tz=UTC),
                )
        return None

    @staticmethod
    def _check_removal(ctx: PublishContext, name: str) -> None:
        """Read the new post back (`/api/info`) for a removal by Reddit's spam filter, which
        strikes as the post is made. Best effort: the post exists either way."""
        try:
            with api.client(ctx.credentials) as client:
                body = api.call(
                    client, "GET", f"{API}/api/info", params={"id": name}, is_create=False
                )
        except ProviderError:
            return
        for child in (body.get("data") or {}).get("children", []):
            if (child.get("data") or {}).get("name") == name:
                _record_removal(ctx, child["data"])

    # Tokens and connect ----------------------------------------------------------------

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        return connect.refresh(account, credentials)

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        return connect.authorization_url(state=state, redirect_uri=redirect_uri)

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        tokens = connect.exchange_code(code=code, redirect_uri=redirect_uri)
        with api.client(tokens) as client:
            me = api.call(client, "GET", f"{API}/api/v1/me", is_create=False)
        return ConnectedIdentity(
            remote_id=str(me["id"]),
            handle=me["name"],
            display_name=me["name"],
            credentials=tokens,
            token_expires_at=oauth.parse_expires_at(tokens["expires_at"]),
        )


def _record_removal(ctx: PublishContext, post: dict) -> None:
    """A post that exists but was removed (``removed_by_category``, or no longer indexable)
    is published, with a notice on the rendition saying who removed it."""
    category = post.get("removed_by_category")
    if not category and post.get("is_robot_indexable", True):
        return
    who = REMOVED_BY.get(category or "", "Reddit")
    ctx.checkpoint["result"] = {
        "removed_by_category": category,
        "notices": [{"code": "removed", "message": REMOVED.format(who=who)}],
    }
    ctx.persist_checkpoint()


register_adapter(RedditAdapter())
