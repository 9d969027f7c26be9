"""Pinterest API v5 (api.pinterest.com) as its OpenAPI description and the rate-limit and
OAuth guides document it.

- `POST /v5/pins` `{board_id, title?, description?, link?, alt_text?, media_source}` answers
  201 with the Pin; `media_source` is `image_url`, `multiple_image_urls` (2-5),
  `image_base64`, `multiple_image_base64` or `video_id` (a media that `succeeded`, with a
  cover).
- Videos: `POST /v5/media {media_type: "video"}` registers one and hands out `upload_url`
  and `upload_parameters` (a presigned storage form: every parameter as a field, then the
  `file`; the storage answers 204). `GET /v5/media/{media_id}` says `registered` until the
  upload lands, then `processing`, then `succeeded` or `failed`.
- `GET /v5/boards`, `GET /v5/boards/{board_id}/pins` (`items`, `bookmark`).
- `POST /v5/oauth/token` with HTTP Basic client credentials: `refresh_token` grants return
  a new access token and (continuous refresh) a new refresh token.
- Errors are `{"code", "message"}`; a 429 carries `x-ratelimit-limit`,
  `x-ratelimit-remaining` and `x-ratelimit-reset`.
- `enforce_limits` (per account): the reads our lookups and polls make (a Pin, a board's
  Pins, a video's status) are held to Trial access's documented 1,000 requests a day, the
  strictest tier; past it Pinterest answers 429 code 8 with the headers. When Trial's day
  starts and what `x-ratelimit-reset` holds are not documented: the fake counts 24 h from
  the first call and gives the seconds left, as field reports show.

Every account the fake opens is a collaborator of one group board, which the sample content
names, so a soak publication can pin to it from any account.
"""

from __future__ import annotations

import base64
import random
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from loadtest.platform_fakes import engagement, multipart
from loadtest.platform_fakes.base import (
    FakeRequest,
    FakeResponse,
    PlatformFake,
    StoredPost,
    json_response,
    route,
)
from loadtest.platform_fakes.limits import ENFORCE, Allowance, LimitedReads

STORAGE_HOST = "pinterest-media-upload.s3-accelerate.amazonaws.com"
TOKEN_TTL_S = 30 * 24 * 3600
REFRESH_TTL_S = 60 * 24 * 3600
RATE_LIMIT = 100
TRIAL_READS = Allowance(limit=1000, window_s=24 * 3600)


@dataclass
class Media:
    id: str
    account: str
    key: str
    uploaded_at: float | None = None
    ready_at: float = 0.0
    fails: bool = False
    used: bool = field(default=False)

    def status(self) -> str:
        if self.uploaded_at is None:
            return "registered"
        if time.time() < self.ready_at:
            return "processing"
        return "failed" if self.fails else "succeeded"


class PinterestFake(LimitedReads, PlatformFake):
    platform = "pinterest"
    hosts = ("api.pinterest.com", STORAGE_HOST)
    account_behaviours = (ENFORCE,)
    ALLOWANCES = {"read": TRIAL_READS}

    def __init__(self, faults=None) -> None:
        super().__init__(faults)
        self.clock = time.time
        self.tokens: dict[str, str] = {}  # access token -> account
        self.refresh_tokens: dict[str, str] = {}  # refresh token -> account
        self.media: dict[str, Media] = {}
        self.group_board = self._number()
        self.boards: dict[str, dict] = {
            self.group_board: {"name": "Soak", "owner": "", "collaborators": set()}
        }

    def _number(self) -> str:
        return str(random.randint(10**17, 10**18 - 1))  # noqa: S311 - an id, not a secret

    # --- accounts ----------------------------------------------------------------------

    def new_account(self, handle: str) -> dict:
        account = self._number()
        access, refresh = self._tokens_for(account)
        with self.lock:
            self.accounts[account] = {"handle": handle}
            board = self.boards[self.group_board]
            board["owner"] = board["owner"] or account
            board["collaborators"].add(account)
        expires = datetime.fromtimestamp(time.time() + TOKEN_TTL_S, tz=UTC)
        return {
            "remote_id": account,
            "handle": handle,
            "credentials": {
                "access_token": access,
                "refresh_token": refresh,
                "expires_at": expires.isoformat(),
            },
            "settings": {"board_id": self.group_board},
        }

    def sample_content(self, rng: random.Random, marker: str) -> dict:
        media = ["video"] if rng.random() < 0.15 else ["image"]
        return {
            "segments": [{"text": f"{marker} pinned", "media": media}],
            "settings": {"board_id": self.group_board, "title": "Soak pin"},
        }

    def _tokens_for(self, account: str) -> tuple[str, str]:
        access, refresh = f"pina_{self.new_id()}", f"pinr_{self.new_id()}"
        with self.lock:
            self.tokens[access] = account
            self.refresh_tokens[refresh] = account
        return access, refresh

    # --- answers -----------------------------------------------------------------------

    def _error(self, status: int, code: int, message: str, **headers: str) -> FakeResponse:
        return json_response({"code": code, "message": message}, status, **headers)

    def _throttled(self) -> FakeResponse:
        return self._error(
            429,
            8,
            "You have exceeded your rate limit. Try again later.",
            **{
                "x-ratelimit-limit": str(RATE_LIMIT),
                "x-ratelimit-remaining": "0",
                "x-ratelimit-reset": str(self.faults.retry_after_s),
            },
        )

    def _ok(self, body: dict, status: int = 200, /, **limits: str) -> FakeResponse:
        headers = {"x-ratelimit-limit": str(RATE_LIMIT), "x-ratelimit-remaining": "97"}
        return json_response(body, status, **{**headers, **limits})

    def _read(self, account: str) -> tuple[dict[str, str], FakeResponse | None]:
        """A read's rate-limit headers, and the refusal once the day's reads are spent."""
        spent = self.spend(account, "read")
        headers = {
            "x-ratelimit-limit": str(spent.limit),
            "x-ratelimit-remaining": str(spent.remaining),
            "x-ratelimit-reset": str(spent.reset_in(self.clock())),
        }
        if spent.refused:
            message = "You have exceeded your rate limit. Try again later."
            return headers, self._error(429, 8, message, **headers)
        return headers, None

    def _caller(self, request: FakeRequest) -> str | None:
        with self.lock:
            return self.tokens.get(request.bearer)

    def _unauthorized(self) -> FakeResponse:
        return self._error(401, 2, "Authentication failed.")

    def _write_fault(self) -> FakeResponse | None:
        if self.faults.strikes("rate_limit"):
            return self._throttled()
        if self.faults.strikes("server_error_before"):
            return self._error(503, 3, "Service unavailable")
        return None

    def _after_store(self, response: FakeResponse) -> FakeResponse:
        if self.faults.strikes("server_error_after"):
            return self._error(500, 1, "Internal error")
        if self.faults.strikes("timeout_after_accept"):
            response.delay_s = self.faults.hang_s
        return response

    # --- pins --------------------------------------------------------------------------

    @route("POST", r"/v5/pins")
    def create_pin(self, request: FakeRequest) -> FakeResponse:
        account = self._caller(request)
        if account is None:
            return self._unauthorized()
        if fault := self._write_fault():
            return fault
        body = request.json()
        board = self.boards.get(str(body.get("board_id")))
        if board is None or account not in board["collaborators"]:
            return self._error(404, 2, "Board not found.")
        media, problem = self._media_of(account, body.get("media_source") or {})
        if problem:
            return self._error(400, 1, problem)
        with self.lock:
            pin = StoredPost(
                id=self._number(),
                account=account,
                text=body.get("description") or "",
                media=media,
                extra={
                    "board_id": str(body["board_id"]),
                    "title": body.get("title"),
                    "link": body.get("link"),
                },
            )
            self.store(pin)
        return self._after_store(self._ok(self._pin(pin), 201))

    def _media_of(self, account: str, source: dict) -> tuple[list[str], str | None]:
        kind = source.get("source_type")
        if kind == "image_url" and source.get("url"):
            return ["image"], None
        if kind == "image_base64":
            return self._base64([source])
        if kind in ("multiple_image_urls", "multiple_image_base64"):
            items = source.get("items") or []
            if not 2 <= len(items) <= 5:
                return [], "media_source.items: constraint: minItems=2, maxItems=5"
            if kind == "multiple_image_base64":
                return self._base64(items)
            return ["image"] * len(items), None
        if kind == "video_id":
            media = self.media.get(str(source.get("media_id")))
            if media is None or media.account != account or media.status() != "succeeded":
                return [], "The video is not ready or does not exist."
            if not (source.get("cover_image_url") or "cover_image_key_frame_time" in source):
                return [], "cover_image_url or cover_image_key_frame_time is required."
            return ["video"], None
        return [], f"Unsupported media_source: {kind!r}"

    @staticmethod
    def _base64(items: list[dict]) -> tuple[list[str], str | None]:
        for item in items:
            if item.get("content_type") not in ("image/jpeg", "image/png"):
                return [], "content_type must be image/jpeg or image/png"
            try:
                base64.b64decode(item.get("data") or "", validate=True)
            except ValueError:
                return [], "data is not base64"
        return ["image"] * len(items), None

    @route("GET", r"/v5/pins/(?P<pin_id>\d+)")
    def read_pin(self, request: FakeRequest, pin_id: str) -> FakeResponse:
        account = self._caller(request)
        if account is None:
            return self._unauthorized()
        limits, refusal = self._read(account)
        if refusal is not None:
            return refusal
        pin = self.posts.get(pin_id)
        if pin is None or pin.visible_at > time.time():
            return self._error(404, 50, "Pin not found.", **limits)
        return self._ok(self._pin(pin), **limits)

    @route("GET", r"/v5/pins/(?P<pin_id>\d+)/analytics")
    def pin_analytics(self, request: FakeRequest, pin_id: str) -> FakeResponse:
        """A Pin's lifetime metrics (`all.lifetime_metrics`), growing with its age."""
        account = self._caller(request)
        if account is None:
            return self._unauthorized()
        pin = self.posts.get(pin_id)
        if pin is None or pin.account != account:
            return self._error(404, 50, "Pin not found.")
        grown = engagement.grown(pin, self.clock())
        counts = {
            "IMPRESSION": grown["views"],
            "SAVE": grown["reposts"],
            "PIN_CLICK": grown["likes"],
            "OUTBOUND_CLICK": grown["replies"],
        }
        wanted = (request.arg("metric_types") or "").split(",")
        lifetime = {name: value for name, value in counts.items() if name in wanted}
        return self._ok({"all": {"lifetime_metrics": lifetime}})

    @route("GET", r"/v5/user_account")
    def user_account(self, request: FakeRequest) -> FakeResponse:
        account = self._caller(request)
        if account is None:
            return self._unauthorized()
        with self.lock:
            made = sum(1 for p in self.posts.values() if p.account == account)
        return self._ok(
            {"username": account, "follower_count": engagement.followers(account, made)}
        )

    @route("DELETE", r"/v5/pins/(?P<pin_id>\d+)")
    def delete_pin(self, request: FakeRequest, pin_id: str) -> FakeResponse:
        """204 without a body; another account's Pin or one that is not there: 404."""
        account = self._caller(request)
        if account is None:
            return self._unauthorized()
        with self.lock:
            pin = self.posts.get(pin_id)
            if pin is None or pin.account != account:
                return self._error(404, 50, "Pin not found.")
            self.remove(pin_id)
        return FakeResponse(204, None)

    @route("GET", r"/v5/boards")
    def list_boards(self, request: FakeRequest) -> FakeResponse:
        account = self._caller(request)
        if account is None:
            return self._unauthorized()
        items = [
            {"id": board_id, "name": b["name"], "privacy": "PUBLIC"}
            for board_id, b in self.boards.items()
            if account in b["collaborators"]
        ]
        return self._ok({"items": items, "bookmark": None})

    @route("GET", r"/v5/boards/(?P<board_id>\d+)/pins")
    def board_pins(self, request: FakeRequest, board_id: str) -> FakeResponse:
        account = self._caller(request)
        if account is None:
            return self._unauthorized()
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        limits, refusal = self._read(account)
        if refusal is not None:
            return refusal
        board = self.boards.get(board_id)
        if board is None or account not in board["collaborators"]:
            return self._error(404, 2, "Board not found.")
        now = time.time()
        with self.lock:
            pins = [
                p
                for p in self.posts.values()
                if p.extra.get("board_id") == board_id and p.visible_at <= now
            ]
        pins.sort(key=lambda p: p.created_at, reverse=True)
        size = int(request.arg("page_size", "25") or 25)
        if not 1 <= size <= 250:
            return self._error(400, 1, "page_size must be between 1 and 250.")
        # The bookmark is opaque to clients; here it is the offset of the next page.
        start = int(request.arg("bookmark", "0") or 0)
        page = pins[start : start + size]
        more = start + size < len(pins)
        return self._ok(
            {
                "items": [self._pin(p) for p in page],
                "bookmark": str(start + size) if more else None,
            },
            **limits,
        )

    def _pin(self, pin: StoredPost) -> dict:
        created = datetime.fromtimestamp(pin.created_at, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
        return {
            "id": pin.id,
            "created_at": created,
            "board_id": pin.extra["board_id"],
            "title": pin.extra.get("title"),
            "description": pin.text,
            "link": pin.extra.get("link"),
            "media": {"media_type": "video" if pin.media == ["video"] else "image"},
        }

    # --- video media -------------------------------------------------------------------

    @route("POST", r"/v5/media")
    def register_media(self, request: FakeRequest) -> FakeResponse:
        account = self._caller(request)
        if account is None:
            return self._unauthorized()
        if fault := self._write_fault():
            return fault
        if request.json().get("media_type") != "video":
            return self._error(400, 1, "media_type must be video")
        media = Media(id=self._number(), account=account, key=f"uploads/{self.new_id()}.mp4")
        with self.lock:
            self.media[media.id] = media
        body = {
            "media_id": media.id,
            "media_type": "video",
            "upload_url": f"https://{STORAGE_HOST}/",
            "upload_parameters": {
                "x-amz-date": "20260301T000000Z",
                "x-amz-signature": self.new_id(),
                "x-amz-security-token": self.new_id(),
                "x-amz-algorithm": "AWS4-HMAC-SHA256",
                "key": media.key,
                "policy": self.new_id(),
                "x-amz-credential": "AKIA/20260301/us-east-1/s3/aws4_request",
                "Content-Type": "multipart/form-data",
            },
        }
        return self._ok(body, 201)

    @route("POST", r"/")
    def storage_upload(self, request: FakeRequest) -> FakeResponse:
        """The presigned storage form (no Pinterest token): the `key` names the media."""
        if request.host != STORAGE_HOST:
            return self._error(404, 404, "Not found")
        if self.faults.strikes("drop_mid_upload"):
            return FakeResponse(drop=True)
        fields = multipart.form_fields(request)
        key = fields.get("key", b"").decode()
        media = next((m for m in self.media.values() if m.key == key), None)
        if media is None or not fields.get("policy") or not fields.get("file"):
            return FakeResponse(status=403, body="<Error><Code>AccessDenied</Code></Error>")
        seconds = self.faults.processing_s * (5 if self.faults.strikes("slow_processing") else 1)
        with self.lock:
            media.uploaded_at = time.time()
            media.ready_at = media.uploaded_at + seconds
            media.fails = self.faults.strikes("processing_fails")
        return FakeResponse(status=204)

    @route("GET", r"/v5/media/(?P<media_id>\d+)")
    def media_status(self, request: FakeRequest, media_id: str) -> FakeResponse:
        account = self._caller(request)
        if account is None:
            return self._unauthorized()
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        limits, refusal = self._read(account)
        if refusal is not None:
            return refusal
        media = self.media.get(media_id)
        if media is None or media.account != account:
            return self._error(404, 2, "Media not found.")
        body = {"media_id": media_id, "media_type": "video", "status": media.status()}
        return self._ok(body, **limits)

    # --- OAuth -------------------------------------------------------------------------

    @route("POST", r"/v5/oauth/token")
    def token(self, request: FakeRequest) -> FakeResponse:
        keyword, _, creds = request.headers.get("authorization", "").partition(" ")
        if keyword.lower() != "basic" or not creds:
            return self._error(401, 2, "Authentication failed.")
        form = request.form()
        if form.get("grant_type") != "refresh_token":
            return self._error(400, 1, "Unsupported grant_type")
        with self.lock:
            # Continuous refresh: the used refresh token is spent, a new one is handed out.
            account = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
        if account is None:
            return self._error(400, 283, "Invalid refresh token.")
        access, refresh = self._tokens_for(account)
        body = {
            "access_token": access,
            "token_type": "bearer",
            "expires_in": TOKEN_TTL_S,
            "refresh_token": refresh,
            "refresh_token_expires_in": REFRESH_TTL_S,
            "scope": "boards:read,pins:read,pins:write,user_accounts:read",
        }
        return self._ok(body)


FAKE = PinterestFake
