"""Reddit's OAuth API (oauth.reddit.com) as its reference and client libraries describe it:
`POST /api/submit` for self, link, image, video and videogif posts (body text is accepted
with every kind), business refusals as HTTP 200 with `json.errors`, media leased through
`/api/media/asset.json` and uploaded as an S3 form POST to the lease's action host, media
posts answered only with a websocket URL and listed once Reddit has made them, the user's
submissions listing, `X-Ratelimit-*` headers on every answer, and the token endpoint.
"""

from __future__ import annotations

import random
import threading
import time
from datetime import UTC, datetime, timedelta

from loadtest.platform_fakes import engagement
from loadtest.platform_fakes.base import (
    FakeRequest,
    FakeResponse,
    PlatformFake,
    StoredPost,
    json_response,
    route,
)
from loadtest.platform_fakes.limits import ENFORCE, Allowance, LimitedReads
from loadtest.platform_fakes.reddit_comments import CommentsMixin

API_HOST = "oauth.reddit.com"
WWW_HOST = "www.reddit.com"
MEDIA_HOST = "reddit-uploaded-media.s3-accelerate.amazonaws.com"
KINDS = ("self", "link", "image", "video", "videogif")
MEDIA_KINDS = {"image": "image/", "video": "video/", "videogif": "video/"}
WINDOW_S = 600  # the rate-limit window the headers describe
WINDOW_REQUESTS = 1000  # 100 a minute, averaged over ten minutes


def _multipart(request: FakeRequest) -> dict[str, bytes]:
    """A multipart/form-data body as {field name: value} (files included)."""
    content_type = request.headers.get("content-type", "")
    if "boundary=" not in content_type:
        return {}
    boundary = content_type.split("boundary=", 1)[1].strip('"').encode()
    fields = {}
    for part in request.body.split(b"--" + boundary):
        head, _, value = part.partition(b"\r\n\r\n")
        for line in head.decode("utf-8", "replace").split("\r\n"):
            if line.lower().startswith("content-disposition") and 'name="' in line:
                name = line.split('name="', 1)[1].split('"', 1)[0]
                fields[name] = value.removesuffix(b"\r\n")
    return fields


class RedditFake(CommentsMixin, LimitedReads, PlatformFake):
    """Per account (`switch`): `enforce_limits`, the account's calls are counted in a window of
    their own and refused past Reddit's documented 100 a minute averaged over ten minutes
    (1,000 per 600 s; Reddit counts per OAuth client, which the soak's accounts share);
    `media_fails`, every media post's processing fails (Reddit
    says so only on the submission's websocket, kept here in `extra["websocket"]`; no post
    is made, none is listed); `spam_removed`, Reddit's spam filter removes each new post at
    once: it exists and its author still sees it in their submissions and `/api/info`, with
    `removed_by_category` "reddit" and `is_robot_indexable` false (how a removal reads to
    the author is what field reports describe; Reddit documents neither field)."""

    platform = "reddit"
    hosts = (API_HOST, WWW_HOST, MEDIA_HOST)
    account_behaviours = ("media_fails", "spam_removed", ENFORCE)
    ALLOWANCES = {"client": Allowance(limit=WINDOW_REQUESTS, window_s=WINDOW_S)}

    def __init__(self, faults=None) -> None:
        super().__init__(faults)
        self.clock = time.time
        self.assets: dict[str, dict] = {}  # key -> {"mime", "uploaded", "account"}
        self._window_start = self.clock()
        self._window_used = 0
        self._ids = threading.Lock()
        self._next = 0

    # --- accounts ----------------------------------------------------------------------

    def new_account(self, handle: str) -> dict:
        user_id = self.new_id()[:8]
        access, refresh = f"eyJ.{self.new_id()}", f"{self.new_id()}-rf"
        with self.lock:
            self.accounts[user_id] = {
                "name": handle,
                "access_tokens": {access},
                "refresh_token": refresh,
            }
        return {
            "remote_id": user_id,
            "handle": handle,
            "credentials": {
                "access_token": access,
                "refresh_token": refresh,
                "expires_at": (datetime.now(UTC) + timedelta(hours=1)).isoformat(),
            },
            "settings": {},
        }

    def sample_content(self, rng: random.Random, marker: str) -> dict:
        media = rng.choice([[], ["image"], ["video"]])
        return {
            "segments": [{"text": f"{marker} Crumb shot and method below.", "media": media}],
            "settings": {"subreddit": "Breadit", "title": f"{marker} My first rye"},
        }

    def _user(self, request: FakeRequest) -> tuple[str, dict] | None:
        with self.lock:
            for user_id, account in self.accounts.items():
                if request.bearer in account["access_tokens"]:
                    return user_id, account
        return None

    def _caller(self, request: FakeRequest) -> tuple[str, dict]:
        """The signed-in caller of an oauth.reddit.com route: `handle` answers 401 before
        routing anyone else."""
        found = self._user(request)
        if found is None:
            raise LookupError("An oauth.reddit.com route was reached without a valid token.")
        return found

    # --- the oauth.reddit.com envelope -------------------------------------------------

    def handle(self, request: FakeRequest) -> FakeResponse:
        if request.host != API_HOST:
            return super().handle(request)
        found = self._user(request)
        if found is not None and self.switched(found[0], ENFORCE):
            return self._handle_enforced(request, found[0])
        with self.lock:
            now = self.clock()
            if now - self._window_start >= WINDOW_S:
                self._window_start, self._window_used = now, 0
            self._window_used += 1
            used = self._window_used
            reset = int(WINDOW_S - (now - self._window_start))
        limited = used > WINDOW_REQUESTS or self.faults.strikes("rate_limit")
        if limited:
            response = self._too_many()
        elif found is None:
            response = json_response({"message": "Unauthorized", "error": 401}, 401)
        else:
            response = super().handle(request)
        # A 429 from an endpoint's own fault (a throttled listing) says so in the headers too.
        limited = limited or response.status == 429
        remaining = 0 if limited else max(WINDOW_REQUESTS - used, 0)
        response.headers.update(
            {
                "X-Ratelimit-Used": str(used),
                "X-Ratelimit-Remaining": f"{float(remaining):.1f}",
                "X-Ratelimit-Reset": str(reset if not limited else self.faults.retry_after_s),
            }
        )
        return response

    def _handle_enforced(self, request: FakeRequest, user_id: str) -> FakeResponse:
        """An account switched to `enforce_limits` has the client's window to itself: past
        its 1,000 requests Reddit answers 429 until the window's reset, which the headers
        give in seconds from now."""
        spent = self.spend(user_id, "client")
        response = self._too_many() if spent.refused else super().handle(request)
        response.headers.update(
            {
                "X-Ratelimit-Used": str(spent.used),
                "X-Ratelimit-Remaining": f"{float(spent.remaining):.1f}",
                "X-Ratelimit-Reset": str(spent.reset_in(self.clock())),
            }
        )
        return response

    def _too_many(self) -> FakeResponse:
        return json_response({"message": "Too Many Requests", "error": 429}, 429)

    # --- media -------------------------------------------------------------------------

    @route("POST", r"/api/media/asset\.json")
    def media_lease(self, request: FakeRequest) -> FakeResponse:
        form = request.form()
        filepath, mime = form.get("filepath", ""), form.get("mimetype", "")
        if not filepath or "/" not in mime:
            return json_response({"json": {"errors": [["BAD_FILE", "bad file", "filepath"]]}})
        user_id, _ = self._caller(request)
        asset_id = self.new_id()
        folder = "rte_videos" if mime.startswith("video/") else "rte_images"
        key = f"{folder}/{asset_id}/{filepath}"
        with self.lock:
            self.assets[key] = {"mime": mime, "uploaded": False, "account": user_id}
        fields = [
            ("acl", "private"),
            ("key", key),
            ("X-Amz-Credential", "AKIA/20261203/us-east-1/s3/aws4_request"),
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            ("X-Amz-Date", "20261203T000000Z"),
            ("success_action_status", "201"),
            ("content-type", mime),
            ("x-amz-storage-class", "STANDARD"),
            ("x-amz-meta-ext", filepath.rsplit(".", 1)[-1]),
            ("policy", "eyJleHBpcmF0aW9uIjoi"),
            ("X-Amz-Signature", self.new_id()),
            ("x-amz-security-token", "IQo"),
        ]
        return json_response(
            {
                "args": {
                    "action": f"//{MEDIA_HOST}",
                    "fields": [{"name": n, "value": v} for n, v in fields],
                },
                "asset": {
                    "asset_id": asset_id,
                    "processing_state": "incomplete",
                    "payload": {"filepath": filepath},
                    "websocket_url": f"wss://ws-{self.new_id()}.wss.redditmedia.com/{folder}/"
                    f"{asset_id}?m=AQAA",
                },
            }
        )

    @route("POST", r"/")
    def media_upload(self, request: FakeRequest) -> FakeResponse:
        """The S3 form POST: every leased field plus the file, answered 201 with XML."""
        if request.host != MEDIA_HOST:
            return json_response({"error": "not_found"}, 404)
        fields = _multipart(request)
        key = fields.get("key", b"").decode()
        with self.lock:
            asset = self.assets.get(key)
        if asset is None or "policy" not in fields or not fields.get("file"):
            return FakeResponse(status=403, body="<Error><Code>AccessDenied</Code></Error>")
        if self.faults.strikes("drop_mid_upload"):
            return FakeResponse(drop=True)
        with self.lock:
            asset["uploaded"] = True
        location = f"https://{MEDIA_HOST}/{key}"
        return FakeResponse(
            status=201,
            body=f"<PostResponse><Location>{location}</Location><Key>{key}</Key></PostResponse>",
            headers={"Content-Type": "application/xml"},
        )

    def _asset(self, url: str, prefix: str, user_id: str) -> dict | None:
        key = url.removeprefix(f"https://{MEDIA_HOST}/")
        with self.lock:
            asset = self.assets.get(key)
        if asset is None or not (asset["uploaded"] and asset["account"] == user_id):
            return None
        return asset if asset["mime"].startswith(prefix) else None

    # --- submitting --------------------------------------------------------------------

    @route("POST", r"/api/submit")
    def submit(self, request: FakeRequest) -> FakeResponse:
        user_id, account = self._caller(request)
        form = request.form()
        refusal = self._refusal(form, user_id)
        if refusal:
            return json_response({"json": {"errors": [refusal]}})
        if self.faults.strikes("server_error_before"):
            return FakeResponse(status=500, body="<html><body>all our servers are busy</body>")
        kind, sr = form["kind"], form["sr"].removeprefix("r/")
        post_id = self._new_post_id()
        is_media = kind in MEDIA_KINDS
        post = StoredPost(
            id=f"t3_{post_id}",
            account=user_id,
            text=form.get("text", ""),
            media=[kind] if is_media else [],
            state="processing" if is_media else "published",
            extra={
                "subreddit": sr,
                "title": form["title"],
                "kind": kind,
                "url": form.get("url", ""),
                "author": account["name"],
                "video_poster_url": form.get("video_poster_url", ""),
            },
        )
        self.store(post)
        if is_media:
            # Reddit makes a media post once the upload is processed; it is listed then.
            slow = 4 if self.faults.strikes("slow_processing") else 1
            made_at = post.created_at + self.faults.processing_s * slow
            post.visible_at = max(post.visible_at, made_at)
            if self.faults.strikes("processing_fails") or self.switched(user_id, "media_fails"):
                post.state = "failed"
                post.extra["websocket"] = {"type": "failed", "payload": {}}
        if self.switched(user_id, "spam_removed"):
            post.extra["removed_by_category"] = "reddit"
        if self.faults.strikes("server_error_after"):
            return FakeResponse(status=500, body="<html><body>all our servers are busy</body>")
        response = json_response({"json": {"errors": [], "data": self._submitted(post)}})
        if self.faults.strikes("timeout_after_accept"):
            response.delay_s = self.faults.hang_s
        return response

    def _refusal(self, form: dict, user_id: str) -> list | None:
        kind, title, sr = form.get("kind"), form.get("title", ""), form.get("sr", "")
        if not sr:
            return ["SUBREDDIT_REQUIRED", "you must specify a subreddit", "sr"]
        if sr.lower().startswith("nosuch"):
            return ["SUBREDDIT_NOEXIST", "that subreddit doesn't exist", "sr"]
        if not title.strip():
            return ["NO_TEXT", "we need something here", "title"]
        if len(title) > 300:
            return ["TOO_LONG", "this is too long (max: 300)", "title"]
        if len(form.get("text", "")) > 40000:
            return ["TOO_LONG", "this is too long (max: 40000)", "text"]
        if kind not in KINDS:
            return ["INVALID_OPTION", "that option is not valid", "kind"]
        url = form.get("url", "")
        if kind == "link" and not url.startswith(("http://", "https://")):
            return ["BAD_URL", "you should check that url", "url"]
        if kind in MEDIA_KINDS and self._asset(url, MEDIA_KINDS[kind], user_id) is None:
            return ["BAD_URL", "you should check that url", "url"]
        poster = form.get("video_poster_url")
        if poster and self._asset(poster, "image/", user_id) is None:
            return ["BAD_URL", "you should check that url", "video_poster_url"]
        if kind == "link" and form.get("resubmit") == "false":
            with self.lock:
                seen = any(
                    p.extra["url"] == url and p.extra["subreddit"] == sr.removeprefix("r/")
                    for p in self.posts.values()
                )
            if seen:
                return ["ALREADY_SUB", "that link has already been submitted", "url"]
        return None

    def _new_post_id(self) -> str:
        with self._ids:
            self._next += 1
            number = 1_000_000 + self._next
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"
        text = ""
        while number:
            number, rest = divmod(number, 36)
            text = digits[rest] + text
        return text

    def _submitted(self, post: StoredPost) -> dict:
        if post.extra["kind"] in MEDIA_KINDS:  # no id: it comes on the websocket
            return {
                "user_submitted_page": f"https://www.reddit.com/user/{post.extra['author']}"
                "/submitted/",
                "websocket_url": f"wss://ws-{self.new_id()}.wss.redditmedia.com/"
                f"rte_images/{self.new_id()}?m=AQAA",
            }
        return {"url": self._permalink(post, absolute=True), "drafts_count": 0,
                "id": post.id.removeprefix("t3_"), "name": post.id}  # fmt: skip

    @staticmethod
    def _permalink(post: StoredPost, *, absolute: bool = False) -> str:
        slug = "_".join(post.extra["title"].lower().split())[:50]
        path = f"/r/{post.extra['subreddit']}/comments/{post.id.removeprefix('t3_')}/{slug}/"
        return f"https://www.reddit.com{path}" if absolute else path

    @route("POST", r"/api/del")
    def delete(self, request: FakeRequest) -> FakeResponse:
        """Deletes the user's own post: 200 with an empty object, also when the post is
        no longer there; another user's post is 403."""
        user_id, _ = self._caller(request)
        fullname = request.form().get("id", "")
        with self.lock:
            post = self.posts.get(fullname)
            if post is not None and post.account != user_id:
                return json_response({"message": "Forbidden", "error": 403}, 403)
            self.remove(fullname)
        return json_response({})

    # --- reading -----------------------------------------------------------------------

    @route("GET", r"/user/(?P<name>[^/]+)/submitted")
    def submitted(self, request: FakeRequest, name: str) -> FakeResponse:
        if self.faults.strikes("poll_rate_limit"):
            return self._too_many()
        limit = min(int(request.arg("limit", "25")), 100)
        now = self.clock()
        with self.lock:
            posts = [
                p
                for p in self.posts.values()
                if p.extra["author"].lower() == name.lower()
                and p.state != "failed"
                and p.visible_at <= now
            ]
        posts.sort(key=lambda p: -p.created_at)
        children = [{"kind": "t3", "data": self._listed(p)} for p in posts[:limit]]
        return json_response(
            {"kind": "Listing", "data": {"after": None, "dist": len(children),
                                         "children": children, "before": None}}
        )  # fmt: skip

    def _listed(self, post: StoredPost) -> dict:
        kind = post.extra["kind"]
        return {
            "id": post.id.removeprefix("t3_"),
            "name": post.id,
            "title": post.extra["title"],
            "subreddit": post.extra["subreddit"],
            "author": post.extra["author"],
            "selftext": post.text,
            "created_utc": float(int(post.created_at)),
            "permalink": self._permalink(post),
            "url": post.extra["url"] if kind == "link" else self._permalink(post, absolute=True),
            "is_self": kind == "self",
            "is_video": kind in ("video", "videogif"),
            "removed_by_category": post.extra.get("removed_by_category"),
            "is_robot_indexable": not post.extra.get("removed_by_category"),
            **self._votes(post),
        }

    def _votes(self, post: StoredPost) -> dict:
        grown = engagement.grown(post, self.clock())
        return {
            "score": grown["likes"],
            "upvote_ratio": 0.95,
            "num_comments": grown["replies"],
            "num_crossposts": grown["quotes"],
        }

    @route("GET", r"/api/info")
    def info(self, request: FakeRequest) -> FakeResponse:
        """`/api/info?id=t3_a,t3_b`: the things named that exist (a removed post too; a
        media post whose processing failed was never made)."""
        wanted = [i for i in (request.arg("id") or "").split(",") if i]
        with self.lock:
            posts = [self.posts[i] for i in wanted if i in self.posts]
        children = [{"kind": "t3", "data": self._listed(p)} for p in posts if p.state != "failed"]
        return json_response(
            {"kind": "Listing", "data": {"after": None, "dist": len(children),
                                         "children": children, "before": None}}
        )  # fmt: skip

    @route("GET", r"/api/v1/me")
    def me(self, request: FakeRequest) -> FakeResponse:
        user_id, account = self._caller(request)
        with self.lock:
            made = sum(1 for p in self.posts.values() if p.account == user_id)
        subreddit = {"subscribers": engagement.followers(user_id, made)}
        return json_response({"id": user_id, "name": account["name"], "subreddit": subreddit})

    # --- tokens (www.reddit.com) -------------------------------------------------------

    @route("POST", r"/api/v1/access_token")
    def token(self, request: FakeRequest) -> FakeResponse:
        if not request.headers.get("authorization", "").startswith("Basic "):
            return json_response({"message": "Unauthorized", "error": 401}, 401)
        form = request.form()
        with self.lock:
            found = next(
                (
                    (user_id, a)
                    for user_id, a in self.accounts.items()
                    if a["refresh_token"] == form.get("refresh_token")
                ),
                None,
            )
            if form.get("grant_type") != "refresh_token" or found is None:
                return json_response({"error": "invalid_grant"})
            access = f"eyJ.{self.new_id()}"
            found[1]["access_tokens"].add(access)
        return json_response(
            {
                "access_token": access,
                "token_type": "bearer",
                "expires_in": 86400,
                "scope": "identity submit read history flair",
            }
        )


FAKE = RedditFake
