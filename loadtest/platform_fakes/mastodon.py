"""A Mastodon instance as its REST API documents it (and as mastodon/mastodon behaves).

- `POST /api/v1/statuses` honours `Idempotency-Key` per account as PostStatusService does:
  the request runs under a lock on the key (`with_redis_lock`, released after 15 minutes at
  the latest), and a request with the same key meanwhile is refused with 503
  `{"error": "There was a temporary problem serving your request, please try again"}`
  (Mastodon::RaceConditionError as Api::ErrorHandling renders it), nothing created. Inside
  the lock a remembered key returns the first status; otherwise the status is saved and only
  then the key recorded (`redis.setex(key, 3_600, id)`), so a failure between the two
  (`key_not_recorded`: 500) leaves a status whose resend under the same key makes a second
  one. A key is remembered for 3,600 s; after that a repeat creates a new status. A create
  still running when the client gives up (`slow_create`) holds the lock until it ends.
  Mastodon never rejects duplicate text.
- Per account (`switch`), on a share of its keyed creates (`switched_share`, the fake's
  seeded dice): `key_lock`, the create runs `key_lock_hold_s` under its key's lock before the
  status is saved (inside the lock Mastodon resolves the text's mentions and linked posts,
  remote fetches that can take that long) and is answered only then, long after the
  client's timeout: a resend under the key meanwhile meets the lock's 503, and after it gets
  the first status. `key_not_recorded`, the status is saved and the server fails before
  recording the key: a 500 (the lock released), or for `dropped_share` of them the
  connection closed unanswered (the server process died after the save, its lock left to
  the 15-minute autorelease); either way a resend under the key makes a second status.
- `POST /api/v2/media` answers 200 for an image processed at once and 202 (`url` null) for
  media processed in the background; `GET /api/v1/media/:id` answers 206 while processing,
  200 once `url` is set, 422 when processing failed, 404 once the status holding it is saved.
- `GET /api/v1/accounts/:id/statuses` lists newest first (`limit` at most 40, `max_id`).
- 429 carries `X-RateLimit-Limit/Remaining/Reset`, the reset being an ISO 8601 instant.
"""

from __future__ import annotations

import html
import itertools
import random
import time
import uuid
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import HTTP

from loadtest.platform_fakes import engagement
from loadtest.platform_fakes.base import (
    FakeRequest,
    FakeResponse,
    PlatformFake,
    StoredPost,
    json_response,
    route,
)

HOST = "mastodon.fake"
INSTANCE = f"https://{HOST}"
IDEMPOTENCY_TTL_S = 3600.0
# Lockable#with_redis_lock's autorelease: a lock whose request died is freed after this.
KEY_LOCK_AUTORELEASE_S = 900.0
TEMPORARY_PROBLEM = "There was a temporary problem serving your request, please try again"
# How long a `key_lock` create runs: past a client's timeout and the wait for its listing to
# settle (the soak's: 2 s, then 20 s), so that a resend under the key meets the lock.
KEY_LOCK_HOLD_S = 30.0
# The share of a switched account's keyed creates its behaviours strike (the rest run as usual).
SWITCHED_SHARE = 0.5
MAX_CHARACTERS = 500
MAX_MEDIA = 4
RATE_LIMIT = 300


def iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def multipart(request: FakeRequest) -> dict[str, tuple[bytes, str]]:
    """A multipart/form-data body as {field: (bytes, content type)}."""
    head = f"Content-Type: {request.headers.get('content-type', '')}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + request.body)
    fields: dict[str, tuple[bytes, str]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        # An RFC 2231 name comes as a tuple; no client sends one, so it is not a field here.
        if isinstance(name, str) and name:
            payload = part.get_payload(decode=True)
            data = payload if isinstance(payload, bytes) else b""
            fields[name] = (data, part.get_content_type())
    return fields


def _paragraphs(text: str) -> str:
    """Plain text as Mastodon renders it: paragraphs on blank lines, <br /> on single ones."""
    blocks = [b for b in text.replace("\r\n", "\n").split("\n\n") if b.strip()]
    return "".join(
        "<p>" + "<br />".join(html.escape(line, quote=False) for line in b.split("\n")) + "</p>"
        for b in blocks
    )


class MastodonFake(PlatformFake):
    platform = "mastodon"
    hosts = (HOST,)
    account_behaviours = ("key_lock", "key_not_recorded")

    def __init__(
        self,
        faults=None,
        *,
        idempotency_ttl_s: float = IDEMPOTENCY_TTL_S,
        key_lock_hold_s: float = KEY_LOCK_HOLD_S,
        switched_share: float = SWITCHED_SHARE,
        dropped_share: float = 0.5,
    ) -> None:
        super().__init__(faults)
        self.idempotency_ttl_s = idempotency_ttl_s
        self.key_lock_hold_s = key_lock_hold_s
        self.switched_share = switched_share
        # Of the switched `key_not_recorded` failures, those that close the connection.
        self.dropped_share = dropped_share
        self._rng = random.Random(self.faults.seed)  # noqa: S311 - a test's dice
        # The instance's clock; tests move it forward to step past the key's window.
        self.clock = time.time
        self.tokens: dict[str, str] = {}  # access token -> account id
        self.keys: dict[tuple[str, str], tuple[str, float]] = {}  # (account, key) -> (id, at)
        # (account, key) -> when the lock of the request running under that key is released
        self.key_locks: dict[tuple[str, str], float] = {}
        self.media: dict[str, dict] = {}
        self.apps: dict[str, dict] = {}
        self.codes: dict[str, str] = {}  # authorization code -> account id (for connect)
        self._ids = itertools.count(113_000_000_000_000_000)

    # --- accounts ------------------------------------------------------------------------

    def new_account(self, handle: str) -> dict:
        with self.lock:
            account_id = str(next(self._ids))
            token = uuid.uuid4().hex
            self.accounts[account_id] = {"id": account_id, "username": handle}
            self.tokens[token] = account_id
        return {
            "remote_id": f"{account_id}@{HOST}",
            "handle": f"{handle}@{HOST}",
            "credentials": {"access_token": token},
            "settings": {
                "instance": INSTANCE,
                "account_id": account_id,
                "server_version": "4.3.2",
                "honours_idempotency_key": True,
                "max_characters": MAX_CHARACTERS,
            },
        }

    def sample_content(self, rng: random.Random, marker: str) -> dict:
        segments = [{"text": f"{marker} toot {rng.randrange(10**6)}", "media": []}]
        if rng.random() < 0.3:
            segments[0]["media"] = ["image"]
        if rng.random() < 0.3:
            segments.append({"text": f"{marker} reply {rng.randrange(10**6)}", "media": []})
        return {"segments": segments, "settings": {"visibility": "unlisted"}}

    # --- helpers -------------------------------------------------------------------------

    def _account(self, request: FakeRequest) -> str | None:
        with self.lock:
            return self.tokens.get(request.bearer)

    def _unauthorized(self) -> FakeResponse:
        return json_response({"error": "The access token is invalid"}, 401)

    def _throttled(self) -> FakeResponse:
        reset = iso(self.clock() + self.faults.retry_after_s)
        return json_response(
            {"error": "Too many requests"},
            429,
            **{
                "X-RateLimit-Limit": str(RATE_LIMIT),
                "X-RateLimit-Remaining": "0",
                "X-RateLimit-Reset": reset,
            },
        )

    def _status_json(self, post: StoredPost) -> dict:
        account = self.accounts[post.account]
        return {
            "id": post.id,
            "created_at": iso(post.created_at),
            "in_reply_to_id": post.reply_to,
            "visibility": post.extra.get("visibility", "public"),
            "sensitive": post.extra.get("sensitive", False),
            "spoiler_text": post.extra.get("spoiler_text", ""),
            "language": post.extra.get("language"),
            "uri": f"{INSTANCE}/users/{account['username']}/statuses/{post.id}",
            "url": f"{INSTANCE}/@{account['username']}/{post.id}",
            "content": _paragraphs(post.text),
            "account": {
                "id": post.account,
                "username": account["username"],
                "acct": account["username"],
            },
            "media_attachments": [self._media_json(self.media[m]) for m in post.media],
            **self._counts(post),
        }

    def _counts(self, post: StoredPost) -> dict:
        grown = engagement.grown(post, self.clock())
        return {
            "favourites_count": grown["likes"],
            "reblogs_count": grown["reposts"],
            "replies_count": grown["replies"],
        }

    def _media_json(self, media: dict) -> dict:
        ready = media["state"] == "ready"
        return {
            "id": media["id"],
            "type": media["type"],
            "url": f"{INSTANCE}/system/media/{media['id']}/original" if ready else None,
            "preview_url": f"{INSTANCE}/system/media/{media['id']}/small",
            "description": media["description"],
        }

    def _advance(self, media: dict) -> None:
        if media["state"] == "processing" and self.clock() >= media["ready_at"]:
            media["state"] = "failed" if media["fails"] else "ready"

    # --- connect -------------------------------------------------------------------------

    @route("POST", r"/api/v1/apps")
    def create_app(self, request: FakeRequest) -> FakeResponse:
        form = request.form() or request.json()
        client_id = uuid.uuid4().hex
        app = {"client_id": client_id, "client_secret": uuid.uuid4().hex, **form}
        with self.lock:
            self.apps[client_id] = app
        return json_response(
            {
                "id": str(len(self.apps)),
                "name": form.get("client_name", ""),
                "client_id": client_id,
                "client_secret": app["client_secret"],
                "client_secret_expires_at": 0,
            }
        )

    @route("POST", r"/oauth/token")
    def token(self, request: FakeRequest) -> FakeResponse:
        form = request.form()
        with self.lock:
            app = self.apps.get(form.get("client_id", ""))
            account_id = self.codes.pop(form.get("code", ""), None)
        if app is None or app["client_secret"] != form.get("client_secret"):
            return json_response({"error": "invalid_client"}, 401)
        if account_id is None:
            return json_response({"error": "invalid_grant"}, 400)
        token = uuid.uuid4().hex
        with self.lock:
            self.tokens[token] = account_id
        return json_response(
            {"access_token": token, "token_type": "Bearer", "scope": form.get("scope", "")}
        )

    @route("GET", r"/api/v1/accounts/verify_credentials")
    def verify_credentials(self, request: FakeRequest) -> FakeResponse:
        account_id = self._account(request)
        if account_id is None:
            return self._unauthorized()
        account = self.accounts[account_id]
        return json_response(
            {"id": account_id, "username": account["username"], "acct": account["username"]}
        )

    @route("GET", r"/api/v1/accounts/(?P<account_id>\d+)")
    def get_account(self, request: FakeRequest, account_id: str) -> FakeResponse:
        """An account with its follower count (grows with the statuses it made)."""
        with self.lock:
            account = self.accounts.get(account_id)
            made = sum(1 for p in self.posts.values() if p.account == account_id)
        if account is None:
            return json_response({"error": "Record not found"}, 404)
        followers = engagement.followers(account_id, made)
        body = {"id": account_id, "username": account["username"], "followers_count": followers}
        return json_response(body)

    @route("GET", r"/api/v2/instance")
    def instance(self, request: FakeRequest) -> FakeResponse:
        return json_response(
            {
                "domain": HOST,
                "version": "4.3.2",
                "configuration": {
                    "statuses": {
                        "max_characters": MAX_CHARACTERS,
                        "max_media_attachments": MAX_MEDIA,
                        "characters_reserved_per_url": 23,
                    }
                },
            }
        )

    # --- media ---------------------------------------------------------------------------

    @route("POST", r"/api/v2/media")
    def upload_media(self, request: FakeRequest) -> FakeResponse:
        account_id = self._account(request)
        if account_id is None:
            return self._unauthorized()
        if self.faults.strikes("rate_limit"):
            return self._throttled()
        if self.faults.strikes("drop_mid_upload"):
            return FakeResponse(drop=True)
        if self.faults.strikes("server_error_before"):
            return json_response({"error": "Error processing thumbnail for uploaded media"}, 500)
        fields = multipart(request)
        if "file" not in fields:
            return json_response({"error": "Validation failed: File can't be blank"}, 422)
        data, content_type = fields["file"]
        kind = content_type.split("/")[0]
        if kind not in ("image", "video"):
            return json_response({"error": "Validation failed: File has an extension"}, 422)
        # Images are processed in the request; video (and slow images) in the background.
        background = kind == "video" or self.faults.strikes("slow_processing")
        delay = self.faults.processing_s * (3 if kind == "video" else 1)
        media_id = str(next(self._ids))
        media = {
            "id": media_id,
            "account": account_id,
            "type": kind,
            "size": len(data),
            "description": (fields.get("description") or (b"", ""))[0].decode(),
            "state": "processing" if background else "ready",
            "ready_at": self.clock() + delay,
            "fails": self.faults.strikes("processing_fails"),
            "status_id": None,
        }
        with self.lock:
            self.media[media_id] = media
        return json_response(self._media_json(media), 202 if background else 200)

    @route("GET", r"/api/v1/media/(?P<media_id>\d+)")
    def get_media(self, request: FakeRequest, media_id: str) -> FakeResponse:
        account_id = self._account(request)
        if account_id is None:
            return self._unauthorized()
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        with self.lock:
            media = self.media.get(media_id)
            # Only the account's unattached media can be fetched.
            if media is None or media["account"] != account_id or self._attached(media):
                return json_response({"error": "Record not found"}, 404)
            self._advance(media)
        if media["state"] == "failed":
            return json_response({"error": "Error processing thumbnail for uploaded media"}, 422)
        return json_response(self._media_json(media), 206 if media["state"] != "ready" else 200)

    def _attached(self, media: dict) -> bool:
        """Attached once the status holding it is saved: a create still running under its
        key's lock has not saved it yet (Mastodon attaches media in the status's save)."""
        if not media["status_id"]:
            return False
        post = self.posts.get(media["status_id"])
        return post is None or post.created_at <= self.clock()

    # --- statuses ------------------------------------------------------------------------

    @route("POST", r"/api/v1/statuses")
    def create_status(self, request: FakeRequest) -> FakeResponse:
        account_id = self._account(request)
        if account_id is None:
            return self._unauthorized()
        if self.faults.strikes("rate_limit"):
            return self._throttled()
        key = request.headers.get("idempotency-key")
        lock = (account_id, key) if key else None
        if lock is not None:
            with self.lock:
                if self.key_locks.get(lock, 0.0) > self.clock():
                    # Another request under this key is running: refused, nothing created.
                    return json_response({"error": TEMPORARY_PROBLEM}, 503)
                remembered = self.keys.get(lock)
                if remembered and self.clock() - remembered[1] < self.idempotency_ttl_s:
                    return json_response(self._status_json(self.posts[remembered[0]]))
                self.key_locks[lock] = self.clock() + KEY_LOCK_AUTORELEASE_S
        held_until: list[float] = []
        try:
            return self._create_status(request, account_id, key, held_until)
        finally:
            if lock is not None:
                with self.lock:
                    if held_until:  # still running after the answer: held until it ends
                        self.key_locks[lock] = held_until[0]
                    else:
                        self.key_locks.pop(lock, None)

    def _create_status(
        self, request: FakeRequest, account_id: str, key: str | None, held_until: list[float]
    ) -> FakeResponse:
        if self.faults.strikes("server_error_before"):
            return json_response({"error": "We're sorry, but something went wrong"}, 503)
        body = request.json() if "json" in request.headers.get("content-type", "") else {}
        if not body:
            body = request.form()
        text = str(body.get("status") or "")
        media_ids = [str(m) for m in body.get("media_ids") or []]
        if not text.strip() and not media_ids:
            return json_response({"error": "Validation failed: Text can't be blank"}, 422)
        if len(text) > MAX_CHARACTERS:
            return json_response(
                {"error": f"Validation failed: Text character limit of {MAX_CHARACTERS} exceeded"},
                422,
            )
        if len(media_ids) > MAX_MEDIA:
            return json_response({"error": "You can attach at most 4 files"}, 422)
        with self.lock:
            for media_id in media_ids:
                media = self.media.get(media_id)
                if media is None or media["account"] != account_id or media["status_id"]:
                    return json_response({"error": "Record not found"}, 404)
                self._advance(media)
                if media["state"] != "ready":
                    return json_response(
                        {
                            "error": "Cannot attach files that have not finished processing. "
                            "Try again in a moment!"
                        },
                        422,
                    )
            reply_to = body.get("in_reply_to_id")
            if reply_to and str(reply_to) not in self.posts:
                return json_response({"error": "Record not found"}, 404)
            now = self.clock()
            # A create still running when the client gives up is saved (and its key
            # recorded, its lock released) only when it ends.
            hold_s = self._runs_for(account_id, key)
            done = now + hold_s
            post = StoredPost(
                id=str(next(self._ids)),
                account=account_id,
                text=text,
                created_at=done,
                visible_at=done,
                reply_to=str(reply_to) if reply_to else None,
                media=media_ids,
                idempotency_key=key,
                extra={
                    k: body[k]
                    for k in ("visibility", "sensitive", "spoiler_text", "language")
                    if k in body
                },
            )
            self.store(post)
            if post.visible_at != done:  # listing lag, counted on the instance's clock
                post.visible_at = done + self.faults.listing_lag_s
            for media_id in media_ids:
                self.media[media_id]["status_id"] = post.id
            status = self._status_json(post)
            # Saved, then the server fails before `redis.setex`: the key stays unknown.
            failure = self._key_not_recorded(account_id, key)
            if failure is None and key:
                self.keys[(account_id, key)] = (post.id, done)
            if failure is not None and failure.drop:
                held_until.append(now + KEY_LOCK_AUTORELEASE_S)
            elif hold_s:
                held_until.append(done)
        if failure is not None:
            failure.delay_s = hold_s
            return failure
        if hold_s:
            return FakeResponse(200, status, delay_s=hold_s)
        if self.faults.strikes("server_error_after"):
            return json_response({"error": "We're sorry, but something went wrong"}, 500)
        if self.faults.strikes("timeout_after_accept"):
            return FakeResponse(200, status, delay_s=self.faults.hang_s)
        return json_response(status)

    def _runs_for(self, account_id: str, key: str | None) -> float:
        """Seconds this create runs under its key's lock before the status is saved."""
        if key and self._switched_strikes(account_id, "key_lock"):
            return self.key_lock_hold_s
        return self.faults.hang_s if self.faults.strikes("slow_create") else 0.0

    def _key_not_recorded(self, account_id: str, key: str | None) -> FakeResponse | None:
        """The answer of a create that saved its status and failed before recording its
        key, or None when the key is recorded."""
        if key and self._switched_strikes(account_id, "key_not_recorded"):
            with self.lock:
                if self._rng.random() < self.dropped_share:
                    return FakeResponse(drop=True)
        elif not self.faults.strikes("key_not_recorded"):
            return None
        return json_response({"error": "We're sorry, but something went wrong"}, 500)

    def _switched_strikes(self, account_id: str, behaviour: str) -> bool:
        """Whether a behaviour switched on for the account strikes this create (a share
        `switched_share` of them), counted in the soak's `faults_struck` under its name."""
        with self.lock:
            if not self.switched(account_id, behaviour):
                return False
            if self._rng.random() >= self.switched_share:
                return False
            struck = self.faults.struck
            struck[behaviour] = struck.get(behaviour, 0) + 1
        return True

    @route("GET", r"/api/v1/statuses/(?P<status_id>\d+)")
    def get_status(self, request: FakeRequest, status_id: str) -> FakeResponse:
        with self.lock:
            post = self.posts.get(status_id)
            if post is None:
                return json_response({"error": "Record not found"}, 404)
            return json_response(self._status_json(post))

    @route("GET", r"/api/v1/statuses/(?P<status_id>\d+)/context")
    def status_context(self, request: FakeRequest, status_id: str) -> FakeResponse:
        """The status's replies at any depth (descendants), oldest first, as the inbox
        reads them; ancestors are not kept."""
        if self._account(request) is None:
            return self._unauthorized()
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        now = self.clock()
        with self.lock:
            if status_id not in self.posts:
                return json_response({"error": "Record not found"}, 404)
            found, parents = [], {status_id}
            for post in sorted(self.posts.values(), key=lambda p: int(p.id)):
                if post.reply_to in parents and post.visible_at <= now:
                    found.append(post)
                    parents.add(post.id)
            body = {"ancestors": [], "descendants": [self._status_json(p) for p in found]}
        return json_response(body)

    def add_comment(self, status_id: str, handle: str, text: str) -> StoredPost:
        """Someone else's reply under a status (what the inbox reads)."""
        visitor = self.new_account(handle)["settings"]["account_id"]
        with self.lock:
            post = StoredPost(id=str(next(self._ids)), account=visitor, text=text)
            post.reply_to = status_id
        return self.store(post)

    @route("DELETE", r"/api/v1/statuses/(?P<status_id>\d+)")
    def delete_status(self, request: FakeRequest, status_id: str) -> FakeResponse:
        """Mastodon answers the deleted status (its source text); another account's status
        and one that does not exist are both 404 Record not found."""
        account_id = self._account(request)
        if account_id is None:
            return self._unauthorized()
        with self.lock:
            post = self.posts.get(status_id)
            if post is None or post.account != account_id:
                return json_response({"error": "Record not found"}, 404)
            status = self._status_json(post)
            self.remove(status_id)
            # The key's cache names a status that no longer exists.
            self.keys = {k: v for k, v in self.keys.items() if v[0] != status_id}
        return json_response({**status, "text": post.text})

    @route("GET", r"/api/v1/accounts/(?P<account_id>\d+)/statuses")
    def account_statuses(self, request: FakeRequest, account_id: str) -> FakeResponse:
        if self._account(request) is None:
            return self._unauthorized()
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        limit = min(int(request.arg("limit", "20")), 40)
        max_id = request.arg("max_id")
        now = self.clock()
        with self.lock:
            statuses = sorted(
                (
                    p
                    for p in self.posts.values()
                    if p.account == account_id
                    and p.visible_at <= now
                    and (max_id is None or int(p.id) < int(max_id))
                ),
                key=lambda p: int(p.id),
                reverse=True,
            )[:limit]
            return json_response([self._status_json(p) for p in statuses])


FAKE = MastodonFake
