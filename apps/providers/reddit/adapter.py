"""Reddit: self, link, image and video posts to a chosen subreddit, with title, flair and
body text (Reddit takes body text with every kind of post).

A submit always makes a new post and Reddit has no idempotency handle, so a submit whose
answer is lost is never repeated: it is reconciled by listing the user's recent
submissions. Refusals come back as HTTP 200 with `json.errors`; RATELIMIT among them says
how long to wait in words ("try again in 9 minutes").
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import httpx
from django.conf import settings
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.providers import httpcall, oauth
from apps.providers.base import (
    Adapter,
    ConnectedIdentity,
    PollSchedule,
    PublishContext,
    PublishedSegment,
    ReplyTarget,
    SegmentPayload,
    register_adapter,
)
from apps.providers.errors import (
    ErrorKind,
    ProviderError,
    classify_status,
    classify_transport,
    parse_retry_after,
)

API = "https://oauth.reddit.com"
AUTHORIZE = "https://www.reddit.com/api/v1/authorize"
TOKEN = "https://www.reddit.com/api/v1/access_token"
SCOPES = ["identity", "submit", "read", "history", "flair"]
REFRESH_MARGIN = timedelta(minutes=5)
KINDS = ("self", "link", "image", "video")
MEDIA_KINDS = ("image", "video")
# A video post needs a poster image. Without a thumbnail of the video to hand, a plain one
# is uploaded (as Reddit's reference client does); Reddit shows it until playback starts.
VIDEO_POSTER = (  # a 1x1 white PNG
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00"
    b"\x00\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\r\xefF\xb8"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)
# Image posts finish asynchronously (Reddit announces them on a websocket); without one,
# the post is looked for in the user's submissions every 15 s for up to 15 minutes.
POLL_SCHEDULE = PollSchedule(initial_delay_s=5, interval_s=15, max_wait_s=900)

# json.errors codes; any other code is a refusal of the content as well.
DUPLICATE_CODES = frozenset({"ALREADY_SUB"})
CONTENT_CODES = frozenset(
    {
        "SUBREDDIT_NOEXIST",
        "SUBREDDIT_NOTALLOWED",
        "NO_SELFS",
        "NO_LINKS",
        "TOO_LONG",
        "NO_TEXT",
        "BAD_URL",
        "SUBMIT_VALIDATION_FLAIR_REQUIRED",
    }
)
_WAIT = re.compile(r"(\d+)\s*(millisecond|second|minute|hour)s?", re.IGNORECASE)
_UNITS = {"millisecond": 0.001, "second": 1, "minute": 60, "hour": 3600}


def ratelimit_wait(message: str) -> timedelta | None:
    """The wait in "you are doing that too much. try again in 9 minutes."."""
    match = _WAIT.search(message or "")
    if match is None:
        return None
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2).lower()])


def _json_errors(errors: list) -> ProviderError:
    code, message = (list(errors[0]) + ["", ""])[:2]
    message = message or code
    if code == "RATELIMIT":
        wait = ratelimit_wait(message)
        return ProviderError(
            ErrorKind.RATE_LIMITED,
            message,
            code=code,
            http_status=200,
            retry_at=datetime.now(UTC) + wait if wait else None,
        )
    if code in DUPLICATE_CODES:
        return ProviderError(ErrorKind.DUPLICATE_CONTENT, message, code=code, http_status=200)
    return ProviderError(ErrorKind.CONTENT_REJECTED, message, code=code, http_status=200)


def _http_error(response: httpx.Response, *, is_create: bool) -> ProviderError:
    try:
        body = response.json()
    except ValueError:
        body = {}  # 5xx pages are often HTML
    message = body.get("message", "") if isinstance(body, dict) else ""
    if response.status_code == 429:
        reset = response.headers.get("X-Ratelimit-Reset", "")
        retry_at = (
            datetime.now(UTC) + timedelta(seconds=float(reset))
            if reset.replace(".", "", 1).isdigit()
            else parse_retry_after(response.headers.get("Retry-After"))
        )
        return ProviderError(
            ErrorKind.RATE_LIMITED,
            message or "Reddit is rate limiting this client.",
            http_status=429,
            retry_at=retry_at,
        )
    return classify_status(response, is_create=is_create, message=message)


def _client(credentials: dict) -> httpx.Client:
    return httpcall.client(
        headers={
            "Authorization": f"Bearer {credentials.get('access_token', '')}",
            "User-Agent": settings.REDDIT_USER_AGENT,
        },
        timeout=settings.PROVIDER_TIMEOUT_S,
    )


def _call(client: httpx.Client, method: str, url: str, *, is_create: bool, **kwargs) -> dict:
    try:
        response = client.request(method, url, **kwargs)
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=is_create) from exc
    if response.status_code != 200:
        raise _http_error(response, is_create=is_create)
    try:
        return response.json()
    except ValueError:
        return {}


class RedditAdapter(Adapter):
    platform = "reddit"
    poll_schedule = POLL_SCHEDULE
    retry_safe_after_unknown = False

    def publish_segment(
        self, ctx: PublishContext, segment: SegmentPayload, *, reply_to: ReplyTarget | None
    ) -> PublishedSegment:
        data = self._submission(ctx, segment, reply_to)
        with _client(ctx.credentials) as client:
            if data["kind"] in MEDIA_KINDS:
                media = segment.media[0]
                data["url"] = self._upload(client, media.mime_type, media.open)
                if data["kind"] == "video":
                    data["video_poster_url"] = self._upload(
                        client, "image/png", lambda: io.BytesIO(VIDEO_POSTER)
                    )
            ctx.checkpoint["submitted_at"] = int(timezone.now().timestamp())
            body = _call(client, "POST", f"{API}/api/submit", data=data, is_create=True)
        result = body.get("json") or {}
        if result.get("errors"):
            raise _json_errors(result["errors"])
        post = result.get("data") or {}
        if post.get("name") or post.get("id"):
            return PublishedSegment(
                provider_post_id=post.get("name") or f"t3_{post['id']}",
                provider_url=post.get("url", ""),
                published_at=timezone.now(),
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
    def _upload(client: httpx.Client, mime_type: str, open_file: Callable) -> str:
        """Lease an upload slot, POST the file to Reddit's storage, return its URL."""
        kind, _, extension = mime_type.partition("/")
        filename = f"{kind}.{extension}"
        lease = _call(
            client,
            "POST",
            f"{API}/api/media/asset.json",
            data={"filepath": filename, "mimetype": mime_type},
            is_create=False,
        )
        action = "https:" + lease["args"]["action"]
        fields = {f["name"]: f["value"] for f in lease["args"]["fields"]}
        with open_file() as fh, httpcall.client(timeout=settings.PROVIDER_TIMEOUT_S) as storage:
            try:
                response = storage.post(
                    action, data=fields, files={"file": (filename, fh, mime_type)}
                )
            except httpx.HTTPError as exc:
                raise classify_transport(exc, is_create=False) from exc
        if response.status_code >= 300:
            raise ProviderError(
                ErrorKind.PROVIDER_UNAVAILABLE,
                "The media upload to Reddit's storage failed.",
                code="upload_failed",
                http_status=response.status_code,
            )
        return f"{action}/{fields['key']}"

    @staticmethod
    def _find(
        ctx: PublishContext, *, subreddit: str, title: str, since: int
    ) -> PublishedSegment | None:
        subreddit = subreddit.removeprefix("r/").strip().lower()
        with _client(ctx.credentials) as client:
            body = _call(
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
                return PublishedSegment(
                    provider_post_id=post.get("name") or f"t3_{post['id']}",
                    provider_url=f"https://www.reddit.com{post.get('permalink', '')}",
                    published_at=datetime.fromtimestamp(float(post["created_utc"]), tz=UTC),
                )
        return None

    # Tokens and connect ----------------------------------------------------------------

    def refresh_credentials(self, account: SocialAccount, credentials: dict) -> dict | None:
        expiry = account.token_expires_at or oauth.parse_expires_at(credentials.get("expires_at"))
        if not oauth.is_near_expiry(expiry, REFRESH_MARGIN):
            return None
        tokens = self._token(
            {"grant_type": "refresh_token", "refresh_token": credentials.get("refresh_token", "")}
        )
        return {**credentials, **tokens}

    def authorization_url(
        self, *, state: str, code_challenge: str, redirect_uri: str, instance: str | None = None
    ) -> str:
        # duration=permanent is what yields a refresh token.
        query = {
            "client_id": settings.REDDIT_CLIENT_ID,
            "response_type": "code",
            "state": state,
            "redirect_uri": redirect_uri,
            "duration": "permanent",
            "scope": " ".join(SCOPES),
        }
        return f"{AUTHORIZE}?{urlencode(query)}"

    def complete_connect(
        self, *, code: str, code_verifier: str, redirect_uri: str, instance: str | None = None
    ) -> ConnectedIdentity:
        tokens = self._token(
            {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        )
        with _client(tokens) as client:
            me = _call(client, "GET", f"{API}/api/v1/me", is_create=False)
        return ConnectedIdentity(
            remote_id=str(me["id"]),
            handle=me["name"],
            display_name=me["name"],
            credentials=tokens,
            token_expires_at=oauth.parse_expires_at(tokens["expires_at"]),
        )

    @staticmethod
    def _token(data: dict) -> dict:
        body = oauth.token_request(
            TOKEN,
            data,
            auth=(settings.REDDIT_CLIENT_ID, settings.REDDIT_CLIENT_SECRET),
            headers={"User-Agent": settings.REDDIT_USER_AGENT},
        )
        if "access_token" not in body:
            # Reddit answers a refused code or refresh token with 200 {"error": ...}.
            raise ProviderError(
                ErrorKind.AUTH_EXPIRED,
                "Reddit refused the authorization; reconnect the account.",
                code=str(body.get("error") or "invalid_grant"),
            )
        expires = oauth.expires_at(body.get("expires_in"))
        tokens = {
            "access_token": body["access_token"],
            "expires_at": expires.isoformat() if expires else None,
        }
        if body.get("refresh_token"):
            tokens["refresh_token"] = body["refresh_token"]
        return tokens


register_adapter(RedditAdapter())
