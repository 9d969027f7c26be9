"""X (API v2) as docs.x.com documents it.

- `POST /2/tweets` `{text, media?:{media_ids}, reply?:{in_reply_to_tweet_id}}` answers 201
  `{"data":{"id","text","edit_history_tweet_ids"}}`. X has no idempotency key: the same text
  again from the same account is refused with 403 "You are not allowed to create a Tweet
  with duplicate content." (problem+json, `type` about:blank), naming no post.
- Media: one-shot `POST /2/media/upload` (multipart `media` + `media_category`, images
  only); chunked `POST /2/media/upload/initialize` (JSON `{media_type, total_bytes,
  media_category}`), `POST /2/media/upload/{id}/append` (multipart `segment_index`, `media`),
  `POST /2/media/upload/{id}/finalize`; video and GIFs then process over time, read with
  `GET /2/media/upload?command=STATUS&media_id=` (`processing_info` `pending` ->
  `in_progress` -> `succeeded|failed`, with `check_after_secs`). The retired
  `command=INIT|APPEND|FINALIZE` form is refused. Alt text: `POST /2/media/metadata`.
  A post may attach only media whose processing succeeded.
- `GET /2/users/{id}/tweets` lists newest first (`max_results` 5..100, `start_time`,
  `pagination_token`); text reads back as X renders it: links (and a post's media) as t.co
  links, `&`, `<` and `>` escaped. Lookups of a missing resource answer 200 with `errors`.
- A post over 280 weighted characters (a Premium account's long post) reads back with
  `text` cut short: whole words up to about 275 characters and "…", as field reports show
  (the exact cut is not documented; this is the shortest reported). The full text is only
  in `note_tweet.text`, returned when `tweet.fields` asks for `note_tweet`.
- OAuth 2: access tokens live 7,200 s; `POST /2/oauth2/token` with
  `grant_type=refresh_token` rotates the pair, and a spent refresh token is refused.
- Every answer carries `x-rate-limit-limit/remaining/reset` (reset in epoch seconds, per
  user and endpoint over 15 minutes); a 429 has no Retry-After.
- Replies from others, the conversation search and hiding replies: x_comments.
"""

from __future__ import annotations

import base64
import html
import itertools
import math
import random
import time
import uuid
from datetime import UTC, datetime

from apps.providers.text_counting import count_x_weighted, find_urls
from loadtest.platform_fakes import engagement
from loadtest.platform_fakes.base import (
    FakeRequest,
    FakeResponse,
    PlatformFake,
    StoredPost,
    json_response,
    route,
)
from loadtest.platform_fakes.multipart import form_fields
from loadtest.platform_fakes.x_comments import CommentsMixin

HOST = "api.x.com"
TOKEN_TTL_S = 7200
WINDOW_S = 15 * 60
# Per-user allowances over 15 minutes, as documented.
LIMITS = {
    "tweets": 100,
    "timeline": 900,
    "lookup": 900,
    "media_simple": 500,
    "media_chunked": 1875,
    "metadata": 500,
    "me": 75,
    "delete": 50,
    "search": 300,
    "hide": 50,
}
MEDIA_TTL_S = 86400
MAX_MEDIA_BYTES = {"tweet_image": 5 * 1024**2, "tweet_gif": 15 * 1024**2}
MAX_VIDEO_BYTES = 512 * 1024**2
SIMPLE_CATEGORIES = ("tweet_image", "dm_image", "subtitles")
CHUNKED_CATEGORIES = (
    "tweet_image",
    "tweet_gif",
    "tweet_video",
    "amplify_video",
    "dm_image",
    "dm_gif",
    "dm_video",
    "subtitles",
)
KEY_PREFIX = {"image": "3", "gif": "16", "video": "7"}
ALT_TEXT_MAX = 1000
DUPLICATE = "You are not allowed to create a Tweet with duplicate content."
# Past this weighted length a post is a long post: `text` holds only its start.
SHORT_POST_MAX = 280
TRUNCATED_AT = 275

_ids = itertools.count(1)


def snowflake(now: float) -> str:
    """An id shaped like X's: milliseconds since X's epoch, shifted, plus a sequence."""
    return str((int(now * 1000) - 1288834974657) << 22 | (next(_ids) & 0x3FFFFF))


def iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def problem(status: int, title: str, detail: str, kind: str = "about:blank", **extra) -> dict:
    return {"title": title, "detail": detail, "type": kind, "status": status, **extra}


def invalid(message: str, **parameters) -> dict:
    return problem(
        400,
        "Invalid Request",
        "One or more parameters to your request was invalid.",
        "https://api.x.com/2/problems/invalid-request",
        errors=[{"parameters": parameters, "message": message}],
    )


def not_found(resource: str, value: str) -> dict:
    """X answers a lookup of a missing resource with 200 and an `errors` list."""
    return {
        "errors": [
            {
                "value": value,
                "detail": f"Could not find {resource} with id: [{value}].",
                "title": "Not Found Error",
                "resource_type": resource,
                "parameter": "id",
                "resource_id": value,
                "type": "https://api.x.com/2/problems/resource-not-found",
            }
        ]
    }


class XFake(CommentsMixin, PlatformFake):
    platform = "x"
    hosts = (HOST,)

    # `enforce_limits` for one account at a time (`switch`).
    account_behaviours = ("enforce_limits",)

    def __init__(self, faults=None, *, enforce_limits: bool = False) -> None:
        super().__init__(faults)
        # The documented allowances are counted and reported always; refusing past them is
        # off by default, since a soak posts far more per account than a real user may.
        self.enforce_limits = enforce_limits
        self.clock = time.time  # tests move it to step through processing and lag
        self.tokens: dict[str, tuple[str, float]] = {}  # access token -> (user, expires)
        self.refresh_tokens: dict[str, str] = {}  # live refresh token -> user
        self.media: dict[str, dict] = {}
        self.usage: dict[tuple[str, str], tuple[float, int]] = {}  # (user, endpoint) -> window

    # --- what the soak and tests use ------------------------------------------------------

    def new_account(self, handle: str) -> dict:
        now = self.clock()
        user = snowflake(now)
        access, refresh = self._issue(user)
        with self.lock:
            self.accounts[user] = {"handle": handle, "name": handle.title()}
        return {
            "remote_id": user,
            "handle": handle,
            "display_name": handle.title(),
            "credentials": {
                "access_token": access,
                "refresh_token": refresh,
                "expires_at": datetime.fromtimestamp(now + TOKEN_TTL_S, UTC).isoformat(),
            },
            "settings": {"username": handle},
        }

    def expire_access_tokens(self, user: str) -> None:
        """Every access token of `user` expires now (the next call answers 401)."""
        with self.lock:
            for token, (owner, _) in list(self.tokens.items()):
                if owner == user:
                    self.tokens[token] = (owner, 0.0)

    def sample_content(self, rng: random.Random, marker: str) -> dict:
        words = rng.choice(["launch notes", "weekly digest", "field report", "team update"])
        first = {"text": f"{marker} {words} {rng.randrange(10**6)}", "media": []}
        roll = rng.random()
        if roll < 0.25:
            first["media"] = ["image"]
        elif roll < 0.35:
            first["media"] = ["video"]
        segments = [first]
        if rng.random() < 0.3:  # a short thread: each reply's text differs, or X refuses it
            segments.append({"text": f"{marker} (2/2) {rng.randrange(10**6)}", "media": []})
        return {"segments": segments, "settings": {}}

    # --- helpers -------------------------------------------------------------------------

    def _issue(self, user: str) -> tuple[str, str]:
        access, refresh = f"x-at-{uuid.uuid4().hex}", f"x-rt-{uuid.uuid4().hex}"
        with self.lock:
            self.tokens[access] = (user, self.clock() + TOKEN_TTL_S)
            self.refresh_tokens[refresh] = user
        return access, refresh

    def _user(self, request: FakeRequest) -> str | None:
        with self.lock:
            owner, expires = self.tokens.get(request.bearer, (None, 0.0))
        return owner if owner and expires > self.clock() else None

    def _unauthorized(self) -> FakeResponse:
        return json_response(problem(401, "Unauthorized", "Unauthorized"), 401)

    def _count(self, user: str, endpoint: str) -> tuple[dict[str, str], bool]:
        """This call's rate-limit headers, and whether the allowance was already spent."""
        now = self.clock()
        with self.lock:
            start, used = self.usage.get((user, endpoint), (now, 0))
            if now - start >= WINDOW_S:
                start, used = now, 0
            limit = LIMITS[endpoint]
            spent = used >= limit
            if not spent:
                used += 1
            self.usage[(user, endpoint)] = (start, used)
        headers = {
            "x-rate-limit-limit": str(limit),
            "x-rate-limit-remaining": str(max(0, limit - used)),
            "x-rate-limit-reset": str(math.ceil(start + WINDOW_S)),
        }
        return headers, spent and (self.enforce_limits or self.switched(user, "enforce_limits"))

    def _throttled(self, endpoint: str, reset: float | None = None) -> FakeResponse:
        reset = reset if reset is not None else self.clock() + self.faults.retry_after_s
        return json_response(
            problem(
                429,
                "Too Many Requests",
                "Too Many Requests",
                "https://api.x.com/2/problems/rate-limit-exceeded",
            ),
            429,
            **{
                "x-rate-limit-limit": str(LIMITS[endpoint]),
                "x-rate-limit-remaining": "0",
                "x-rate-limit-reset": str(math.ceil(reset)),
            },
        )

    def _gate(
        self, request: FakeRequest, endpoint: str, *, fault: str = "rate_limit"
    ) -> tuple[str, dict[str, str], FakeResponse | None]:
        """(user, rate-limit headers, refusal): authentication, then the allowance. The user
        is empty when authentication refused."""
        user = self._user(request)
        if user is None:
            return "", {}, self._unauthorized()
        headers, spent = self._count(user, endpoint)
        if spent:
            return user, headers, self._throttled(endpoint, float(headers["x-rate-limit-reset"]))
        if self.faults.strikes(fault):
            return user, headers, self._throttled(endpoint)
        return user, headers, None

    def _unavailable(self, headers: dict[str, str]) -> FakeResponse:
        body = problem(503, "Service Unavailable", "Service Unavailable")
        return json_response(body, 503, **headers)

    def _rendered(self, post: StoredPost) -> str:
        """The text as X gives it back: links shortened, the media link appended, &<> escaped."""
        text = post.text
        out, last = [], 0
        for start, end in find_urls(text, bare_domains=True):
            out += [text[last:start], f"https://t.co/{post.id[-10:]}"]
            last = end
        text = "".join(out) + text[last:]
        if post.media:
            text = f"{text} https://t.co/m{post.id[-9:]}".strip()
        if post.extra.get("mention"):
            text = f"@{post.extra['mention']} {text}"
        return html.escape(text, quote=False)

    def _post_json(self, post: StoredPost, fields: set[str]) -> dict:
        rendered = self._rendered(post)
        data: dict[str, object] = {
            "id": post.id,
            "text": rendered,
            "edit_history_tweet_ids": [post.id],
        }
        if count_x_weighted(post.text) > SHORT_POST_MAX:
            data["text"] = _truncated(rendered)
            if "note_tweet" in fields:
                data["note_tweet"] = {"text": rendered}
        if "created_at" in fields:
            data["created_at"] = iso(post.created_at)
        if "author_id" in fields:
            data["author_id"] = post.account
        if "public_metrics" in fields:
            grown = engagement.grown(post, self.clock())
            data["public_metrics"] = {
                "retweet_count": grown["reposts"],
                "reply_count": grown["replies"],
                "like_count": grown["likes"],
                "quote_count": grown["quotes"],
                "bookmark_count": grown["likes"] // 5,
                "impression_count": grown["views"],
            }
        return data

    def _processing(self, media: dict) -> dict | None:
        """Where a file's processing stands now (None: nothing to process)."""
        if media.get("started_at") is None:
            return None
        elapsed = self.clock() - media["started_at"]
        duration = media["duration_s"]
        if elapsed >= duration:
            if media["fails"]:
                return {
                    "state": "failed",
                    "progress_percent": 100,
                    "error": {"code": 1, "name": "InvalidMedia", "message": "Unsupported video."},
                }
            return {"state": "succeeded", "progress_percent": 100}
        return {
            "state": "pending" if elapsed < duration / 4 else "in_progress",
            "check_after_secs": max(1, math.ceil(duration - elapsed)),
            "progress_percent": int(elapsed / duration * 100),
        }

    def _media_json(self, media: dict) -> dict:
        data = {
            "id": media["id"],
            "media_key": media["key"],
            "size": media["size"],
            "expires_after_secs": max(0, int(media["expires_at"] - self.clock())),
        }
        info = self._processing(media)
        if info:
            data["processing_info"] = info
        return data

    def _usable(self, media_id: str, user: str) -> bool:
        with self.lock:
            media = self.media.get(str(media_id))
        if media is None or media["owner"] != user or media["expires_at"] < self.clock():
            return False
        if not media["finalized"]:
            return False
        info = self._processing(media)
        return info is None or info["state"] == "succeeded"

    def _new_media(self, user: str, *, category: str, media_type: str, total: int) -> dict:
        kind = "video" if "video" in category else "gif" if "gif" in category else "image"
        now = self.clock()
        media_id = snowflake(now)
        media = {
            "id": media_id,
            "key": f"{KEY_PREFIX[kind]}_{media_id}",
            "owner": user,
            "kind": kind,
            "category": category,
            "media_type": media_type,
            "total_bytes": total,
            "segments": {},  # index -> size (the bytes are not kept)
            "size": 0,
            "finalized": False,
            "started_at": None,
            "duration_s": 0.0,
            "fails": False,
            "alt_text": "",
            "expires_at": now + MEDIA_TTL_S,
        }
        with self.lock:
            self.media[media_id] = media
        return media

    def _too_big(self, category: str, size: int) -> bool:
        ceiling = MAX_MEDIA_BYTES.get(category, MAX_VIDEO_BYTES if "video" in category else None)
        return ceiling is not None and size > ceiling

    # --- OAuth 2 -----------------------------------------------------------------------------

    @route("POST", r"/2/oauth2/token")
    def token(self, request: FakeRequest) -> FakeResponse:
        form = request.form()
        basic = request.headers.get("authorization", "").lower().startswith("basic ")
        if not (basic or form.get("client_id")):
            return json_response(
                {
                    "error": "unauthorized_client",
                    "error_description": "Missing valid authorization header",
                },
                401,
            )
        if form.get("grant_type") != "refresh_token":
            return json_response(
                {"error": "unsupported_grant_type", "error_description": "Unsupported grant."},
                400,
            )
        with self.lock:
            user = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
        if user is None:
            return json_response(
                {
                    "error": "invalid_request",
                    "error_description": "Value passed for the token was invalid.",
                },
                400,
            )
        access, refresh = self._issue(user)
        return json_response(
            {
                "token_type": "bearer",
                "expires_in": TOKEN_TTL_S,
                "access_token": access,
                "scope": "tweet.read tweet.write users.read offline.access media.write",
                "refresh_token": refresh,
            }
        )

    # --- users -------------------------------------------------------------------------------

    @route("GET", r"/2/users/me")
    def me(self, request: FakeRequest) -> FakeResponse:
        user, headers, refused = self._gate(request, "me", fault="poll_rate_limit")
        if refused:
            return refused
        account = self.accounts[user]
        body = {"data": {"id": user, "name": account["name"], "username": account["handle"]}}
        if "public_metrics" in (request.arg("user.fields") or ""):
            made = sum(1 for p in self.posts.values() if p.account == user)
            body["data"]["public_metrics"] = {"followers_count": engagement.followers(user, made)}
        return json_response(body, **headers)

    @route("GET", r"/2/users/(?P<user_id>\d+)/tweets")
    def timeline(self, request: FakeRequest, user_id: str) -> FakeResponse:
        user, headers, refused = self._gate(request, "timeline", fault="poll_rate_limit")
        if refused:
            return refused
        if user_id not in self.accounts:
            return json_response(not_found("user", user_id), **headers)
        try:
            limit = int(request.arg("max_results", "10"))
            offset = int(request.arg("pagination_token", "0") or 0)
            start = _parse_time(request.arg("start_time"))
            end = _parse_time(request.arg("end_time"))
        except ValueError:
            return json_response(invalid("Invalid query parameter."), 400, **headers)
        if not 5 <= limit <= 100:
            message = f"The `max_results` query parameter value [{limit}] is not between 5 and 100"
            return json_response(invalid(message, max_results=[str(limit)]), 400, **headers)
        now = self.clock()
        with self.lock:
            posts = [
                p
                for p in self.posts.values()
                if p.account == user_id
                and p.state != "failed"
                and p.visible_at <= now
                and (start is None or p.created_at >= start)
                and (end is None or p.created_at < end)
            ]
        posts.sort(key=lambda p: int(p.id), reverse=True)
        page = posts[offset : offset + limit]
        fields = set((request.arg("tweet.fields") or "").split(","))
        if not page:
            return json_response({"meta": {"result_count": 0}}, **headers)
        meta = {"result_count": len(page), "newest_id": page[0].id, "oldest_id": page[-1].id}
        if offset + limit < len(posts):
            meta["next_token"] = str(offset + limit)
        body = {"data": [self._post_json(p, fields) for p in page], "meta": meta}
        return json_response(body, **headers)

    # --- posts -------------------------------------------------------------------------------

    @route("GET", r"/2/tweets/(?P<post_id>\d+)")
    def lookup(self, request: FakeRequest, post_id: str) -> FakeResponse:
        user, headers, refused = self._gate(request, "lookup", fault="poll_rate_limit")
        if refused:
            return refused
        with self.lock:
            post = self.posts.get(post_id)
        if post is None or post.state == "failed" or post.visible_at > self.clock():
            return json_response(not_found("tweet", post_id), **headers)
        fields = set((request.arg("tweet.fields") or "").split(","))
        return json_response({"data": self._post_json(post, fields)}, **headers)

    @route("POST", r"/2/tweets")
    def create(self, request: FakeRequest) -> FakeResponse:
        user, headers, refused = self._gate(request, "tweets")
        if refused:
            return refused
        payload = request.json()
        text = payload.get("text") or ""
        media_ids = [str(m) for m in (payload.get("media") or {}).get("media_ids") or []]
        reply_to = (payload.get("reply") or {}).get("in_reply_to_tweet_id")
        if not text and not media_ids:
            return json_response(invalid("Text or media is required."), 400, **headers)
        if len(media_ids) > 4 or not all(self._usable(m, user) for m in media_ids):
            body = invalid("Your media IDs are invalid.", **{"media.media_ids": media_ids})
            return json_response(body, 400, **headers)
        mention = None
        if reply_to is not None:
            with self.lock:
                parent = self.posts.get(str(reply_to))
            if parent is None or parent.state == "failed":
                detail = "You attempted to reply to a Tweet that is deleted or not visible to you."
                return json_response(problem(403, "Forbidden", detail), 403, **headers)
            if parent.account != user:
                mention = self.accounts.get(parent.account, {}).get("handle")
        if self.faults.strikes("server_error_before"):
            return self._unavailable(headers)
        now = self.clock()
        with self.lock:
            if text and any(
                p.account == user and p.text == text and p.state != "failed"
                for p in self.posts.values()
            ):
                return json_response(problem(403, "Forbidden", DUPLICATE), 403, **headers)
            post = StoredPost(
                id=snowflake(now),
                account=user,
                text=text,
                created_at=now,
                visible_at=now,
                reply_to=str(reply_to) if reply_to is not None else None,
                media=media_ids,
                extra={"mention": mention} if mention else {},
            )
            if self.faults.strikes("listing_lag"):
                post.visible_at = now + self.faults.listing_lag_s
            self.posts[post.id] = post
        if self.faults.strikes("server_error_after"):
            return self._unavailable(headers)
        body = {
            "data": {
                "id": post.id,
                "text": self._rendered(post),
                "edit_history_tweet_ids": [post.id],
            }
        }
        if self.faults.strikes("timeout_after_accept"):
            return FakeResponse(201, body, headers, delay_s=self.faults.hang_s)
        return json_response(body, 201, **headers)

    @route("DELETE", r"/2/tweets/(?P<post_id>\d+)")
    def delete(self, request: FakeRequest, post_id: str) -> FakeResponse:
        """DELETE /2/tweets/:id: {"data": {"deleted": true}}; a post that is not there is a
        404 problem, another user's a 403."""
        user, headers, refused = self._gate(request, "delete")
        if refused:
            return refused
        with self.lock:
            post = self.posts.get(post_id)
            if post is None or post.state == "failed":
                return json_response(not_found("tweet", post_id), 404, **headers)
            if post.account != user:
                detail = "You are not allowed to delete this Tweet."
                return json_response(problem(403, "Forbidden", detail), 403, **headers)
            self.remove(post_id)
        return json_response({"data": {"deleted": True}}, **headers)

    # --- media -------------------------------------------------------------------------------

    @route("POST", r"/2/media/upload")
    def upload_simple(self, request: FakeRequest) -> FakeResponse:
        user, headers, refused = self._gate(request, "media_simple")
        if refused:
            return refused
        if request.headers.get("content-type", "").startswith("application/json"):
            payload = request.json()
            fields = {k: str(v).encode() for k, v in payload.items() if k != "media"}
            try:
                fields["media"] = base64.b64decode(payload.get("media") or "", validate=True)
            except ValueError:
                fields["media"] = b""
        else:
            fields = form_fields(request)
        if "command" in fields or request.arg("command"):
            # The v1.1-style command form, refused since 30 May 2025.
            message = "The command parameter is no longer supported; use the upload endpoints."
            return json_response(
                invalid(message, command=[request.arg("command") or ""]), 400, **headers
            )
        category = fields.get("media_category", b"").decode("utf-8", "replace")
        data = fields.get("media") or b""
        if category not in SIMPLE_CATEGORIES or not data:
            body = invalid(
                "media and media_category (tweet_image, dm_image, subtitles) are required."
            )
            return json_response(body, 400, **headers)
        if self._too_big(category, len(data)):
            return json_response(invalid("File size exceeds the limit."), 400, **headers)
        if self.faults.strikes("drop_mid_upload"):
            return FakeResponse(drop=True)
        if self.faults.strikes("server_error_before"):
            return self._unavailable(headers)
        media_type = fields.get("media_type", b"image/jpeg").decode("utf-8", "replace")
        media = self._new_media(user, category=category, media_type=media_type, total=len(data))
        media.update(segments={0: len(data)}, size=len(data), finalized=True)
        return json_response({"data": self._media_json(media)}, **headers)

    @route("POST", r"/2/media/upload/initialize")
    def upload_initialize(self, request: FakeRequest) -> FakeResponse:
        user, headers, refused = self._gate(request, "media_chunked")
        if refused:
            return refused
        payload = request.json()
        category = payload.get("media_category") or "tweet_image"
        media_type = payload.get("media_type") or ""
        total = payload.get("total_bytes")
        if category not in CHUNKED_CATEGORIES or not isinstance(total, int) or total < 0:
            return json_response(invalid("Invalid media_category or total_bytes."), 400, **headers)
        expected = (
            "video/" if "video" in category else "image/gif" if "gif" in category else "image/"
        )
        if not media_type.startswith(expected):
            body = invalid(f"media_type {media_type!r} does not fit {category}.")
            return json_response(body, 400, **headers)
        if self._too_big(category, total):
            return json_response(invalid("File size exceeds the limit."), 400, **headers)
        if self.faults.strikes("server_error_before"):
            return self._unavailable(headers)
        media = self._new_media(user, category=category, media_type=media_type, total=total)
        data = {"id": media["id"], "media_key": media["key"], "expires_after_secs": MEDIA_TTL_S}
        return json_response({"data": data}, **headers)

    def _session(self, user: str, media_id: str) -> dict | None:
        with self.lock:
            media = self.media.get(media_id)
        if media is None or media["owner"] != user or media["expires_at"] < self.clock():
            return None
        return media

    @route("POST", r"/2/media/upload/(?P<media_id>\d+)/append")
    def upload_append(self, request: FakeRequest, media_id: str) -> FakeResponse:
        user, headers, refused = self._gate(request, "media_chunked")
        if refused:
            return refused
        media = self._session(user, media_id)
        if media is None or media["finalized"]:
            return json_response(invalid("Invalid media id.", id=[media_id]), 400, **headers)
        fields = form_fields(request)
        try:
            index = int(fields.get("segment_index", b""))
        except ValueError:
            index = -1
        if not 0 <= index <= 999 or "media" not in fields:
            return json_response(invalid("segment_index and media are required."), 400, **headers)
        if self.faults.strikes("drop_mid_upload"):
            return FakeResponse(drop=True)  # the chunk never arrived
        with self.lock:
            media["segments"][index] = len(fields["media"])  # a re-sent index replaces it
        return json_response({"data": {"expires_at": int(media["expires_at"])}}, **headers)

    @route("POST", r"/2/media/upload/(?P<media_id>\d+)/finalize")
    def upload_finalize(self, request: FakeRequest, media_id: str) -> FakeResponse:
        user, headers, refused = self._gate(request, "media_chunked")
        if refused:
            return refused
        media = self._session(user, media_id)
        if media is None:
            return json_response(invalid("Invalid media id.", id=[media_id]), 400, **headers)
        if not media["finalized"]:
            size = sum(media["segments"].values())
            if size != media["total_bytes"]:
                message = "Segments do not add up to provided total file size."
                return json_response(invalid(message), 400, **headers)
            if self.faults.strikes("server_error_before"):
                return self._unavailable(headers)
            with self.lock:
                media.update(size=size, finalized=True)
                if media["kind"] in ("video", "gif"):
                    slow = 4 if self.faults.strikes("slow_processing") else 1
                    media.update(
                        started_at=self.clock(),
                        duration_s=self.faults.processing_s * slow,
                        fails=self.faults.strikes("processing_fails"),
                    )
        return json_response({"data": self._media_json(media)}, **headers)

    @route("GET", r"/2/media/upload")
    def upload_status(self, request: FakeRequest) -> FakeResponse:
        user, headers, refused = self._gate(request, "media_chunked", fault="poll_rate_limit")
        if refused:
            return refused
        command = request.arg("command")
        media_id = request.arg("media_id") or ""
        if command not in (None, "STATUS") or not media_id:
            return json_response(
                invalid("media_id is required.", media_id=[media_id]), 400, **headers
            )
        media = self._session(user, media_id)
        if media is None or not media["finalized"]:
            return json_response(invalid("Invalid media id.", media_id=[media_id]), 400, **headers)
        return json_response({"data": self._media_json(media)}, **headers)

    @route("POST", r"/2/media/metadata")
    def metadata(self, request: FakeRequest) -> FakeResponse:
        user, headers, refused = self._gate(request, "metadata")
        if refused:
            return refused
        payload = request.json()
        media = self._session(user, str(payload.get("id") or ""))
        text = ((payload.get("metadata") or {}).get("alt_text") or {}).get("text")
        if media is None:
            return json_response(
                invalid("Invalid media id.", id=[str(payload.get("id"))]), 400, **headers
            )
        if text is not None and len(text) > ALT_TEXT_MAX:
            return json_response(
                invalid("Alt text is longer than 1000 characters."), 400, **headers
            )
        with self.lock:
            media["alt_text"] = text or ""
        data = {"id": media["id"], "associated_metadata": {"alt_text": {"text": text or ""}}}
        return json_response({"data": data}, **headers)


def _truncated(text: str) -> str:
    """A long post's `text`: its start, cut at a space, and an ellipsis."""
    head = text[:TRUNCATED_AT]
    if " " in head and len(text) > TRUNCATED_AT:
        head = head.rsplit(" ", 1)[0]
    return head.rstrip() + "…"


def _parse_time(value: str | None) -> float | None:
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


FAKE = XFake
