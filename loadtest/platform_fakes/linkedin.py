"""LinkedIn's versioned REST API (Posts, Images) and OAuth as Microsoft Learn documents them.

- Every `/rest/` call needs `LinkedIn-Version: YYYYMM` (a version is live for about a year;
  a missing one is 400 VERSION_MISSING, a retired or future one 426 NONEXISTENT_VERSION)
  and `X-Restli-Protocol-Version: 2.0.0`.
- `POST /rest/posts` answers 201 with an empty body; the new post's URN is in `x-restli-id`
  (and the Rest.li `Location`). The header is sometimes missing although the post exists:
  `restli_id_missing` is how often, `send_location` whether `Location` is sent.
- Re-posting the same commentary as the same author is refused 422 DUPLICATE_POST, the
  message naming the existing URN. There is no idempotency handle. LinkedIn documents no
  rule for this; what the fake does follows field reports, each part switchable:
  - the rule holds for a window (`duplicate_window_s`, 24 h by default; reports say roughly
    24 to 48 h), after which the same text makes a second post;
  - it may compare the media as well (`duplicate_compares_media`): the same text with other
    image or video URNs (a re-upload of the same file makes a new URN) is a new post;
  - empty commentary (an image-only post) is never a duplicate of anything;
  - a refusal may name a post that no longer answers (`refusal_names_ghost`: the URN it
    names answers 404, its id dated earlier), as reports of refusals naming deleted posts
    describe.
- Post ids carry their creation time (milliseconds since 1970 above the lowest 22 bits), as
  every LinkedIn id seen in the field does; LinkedIn documents nothing about it.
- Images: `POST /rest/images?action=initializeUpload`, then one `PUT` of the bytes to the
  returned upload URL. Member tokens (w_member_social) cannot read image status or posts
  (reading needs r_member_social, granted to few apps); organization reads need
  r_organization_social.
- Videos: `POST /rest/videos?action=initializeUpload` with the file size answers the video
  URN, an upload token and one upload URL per 4 MB byte range; each part's `PUT` answers an
  `ETag`; `action=finalizeUpload` must name every part's ETag in order. The video is then
  PROCESSING until it is AVAILABLE; a post may not reference a video not finalized.
- `GET /rest/posts?q=author&author=<urn>` lists an author's posts, newest first.
- `DELETE /rest/posts/{urn}` answers 204 and takes the post's comments with it.
- Comments: `POST /rest/socialActions/{post urn}/comments` with `{actor, object, message}`
  answers 201 with the comment (`id`, `commentUrn`) and its id in `x-restli-id`;
  `GET` on the same path lists them oldest first (`start`, `count`). Reading needs the same
  read permission as the post.
- OAuth refresh at www.linkedin.com/oauth/v2/accessToken: a new 60-day access token; the
  refresh token keeps its 365-day life counted from the first authorization.
- 429 carries no rate-limit headers and no Retry-After (limits are daily, reset 00:00 UTC).
- `enforce_limits` (per member, switched by the member's URN): LinkedIn publishes no
  figures (each app sees its own daily application and member limits in the Developer
  Portal) and no field report gives one we could check, so the fake picks a deliberately
  low one: 100 reads a day per member (`MEMBER_DAY_READS`) of the endpoints our lookups
  and polls use (a post, an author's posts, a post's comments, an image's or a video's
  status), counted until 00:00 UTC; past it, 429 "Resource level throttle MEMBER DAY limit
  for calls to this resource is reached." with no header, as reported.
"""

from __future__ import annotations

import itertools
import random
import string
import time
import uuid
from datetime import UTC, datetime
from urllib.parse import quote, unquote

from loadtest.platform_fakes import engagement
from loadtest.platform_fakes.base import (
    FakeRequest,
    FakeResponse,
    PlatformFake,
    StoredPost,
    json_response,
    route,
)
from loadtest.platform_fakes.limits import ENFORCE, Allowance, LimitedReads, next_midnight

API = "api.linkedin.com"
WWW = "www.linkedin.com"
ACCESS_TTL_S = 60 * 86400
REFRESH_TTL_S = 365 * 86400
MEMBER_SCOPES = frozenset({"openid", "profile", "w_member_social"})
VIDEO_PART_BYTES = 4 * 1024 * 1024
REQUIRED = ("author", "commentary", "visibility", "distribution", "lifecycleState")
DUPLICATE_WINDOW_S = 24 * 3600
MEMBER_DAY_READS = 100


def li_error(status: int, message: str, code: str | None = None, **extra) -> FakeResponse:
    body = {"status": status, "message": message, **extra}
    if code:
        body["code"] = code
    return json_response(body, status)


class LinkedInFake(LimitedReads, PlatformFake):
    platform = "linkedin"
    hosts = (API, WWW)
    # The constructor's duplicate options, for one account at a time (`switch`), and the
    # member's daily read limit (`enforce_limits`).
    account_behaviours = ("duplicate_compares_media", "refusal_names_ghost", ENFORCE)
    ALLOWANCES = {"reads": Allowance(limit=MEMBER_DAY_READS, resets_at=next_midnight("UTC"))}

    def __init__(
        self,
        faults=None,
        *,
        restli_id_missing: float = 0.0,
        send_location: bool = True,
        video_part_bytes: int = VIDEO_PART_BYTES,
        duplicate_window_s: float = DUPLICATE_WINDOW_S,
        duplicate_compares_media: bool = False,
        refusal_names_ghost: bool = False,
    ) -> None:
        super().__init__(faults)
        self.restli_id_missing = restli_id_missing
        self.send_location = send_location
        self.duplicate_window_s = duplicate_window_s
        self.duplicate_compares_media = duplicate_compares_media
        self.refusal_names_ghost = refusal_names_ghost
        self.clock = time.time
        self.tokens: dict[str, dict] = {}  # access token -> {"member", "scopes", "exp"}
        self.refresh_tokens: dict[str, dict] = {}  # refresh token -> {"member", "exp"}
        self.images: dict[str, dict] = {}
        self.videos: dict[str, dict] = {}
        self.video_part_bytes = video_part_bytes
        self.admins: dict[str, set[str]] = {}  # member -> organization URNs it administers
        self.comments: dict[str, list[dict]] = {}  # post URN -> its comments, oldest first
        self._comment_ids = itertools.count(7_100_000_000_000_000_000)
        self._rng = random.Random(self.faults.seed)  # noqa: S311 - a test's dice
        self._shares = itertools.count()

    # --- accounts ------------------------------------------------------------------------

    def new_account(self, handle: str, *, scopes: frozenset[str] = MEMBER_SCOPES) -> dict:
        member = "".join(random.choices(string.ascii_letters + string.digits, k=10))  # noqa: S311
        with self.lock:
            # Keyed by the author URN a post names, so posts map back to their account.
            self.accounts[f"urn:li:person:{member}"] = {"id": member, "name": handle}
            access = self._grant(member, scopes)
            refresh = uuid.uuid4().hex
            self.refresh_tokens[refresh] = {
                "member": member,
                "scopes": scopes,
                "exp": self.clock() + REFRESH_TTL_S,
            }
        return {
            "remote_id": member,
            "handle": handle,
            "credentials": {
                "access_token": access,
                "expires_at": _iso(self.clock() + ACCESS_TTL_S),
                "refresh_token": refresh,
                "refresh_token_expires_at": _iso(self.clock() + REFRESH_TTL_S),
                "scope": ",".join(sorted(scopes)),
            },
            "settings": {"author_urn": f"urn:li:person:{member}"},
        }

    def sample_content(self, rng: random.Random, marker: str) -> dict:
        draw = rng.random()
        media = ["image"] if draw < 0.3 else ["video"] if draw < 0.4 else []
        text = f"{marker} update {rng.randrange(10**6)}"
        return {"segments": [{"text": text, "media": media}], "settings": {"visibility": "PUBLIC"}}

    def _grant(self, member: str, scopes: frozenset[str]) -> str:
        token = "AQ" + uuid.uuid4().hex
        self.tokens[token] = {
            "member": member,
            "scopes": scopes,
            "exp": self.clock() + ACCESS_TTL_S,
        }
        return token

    # --- request checks ------------------------------------------------------------------

    def _caller(self, request: FakeRequest) -> dict | FakeResponse:
        with self.lock:
            token = self.tokens.get(request.bearer)
        if token is None:
            return li_error(401, "Invalid access token", serviceErrorCode=65600)
        if self.clock() >= token["exp"]:
            return li_error(
                401, "The token used in the request has expired", "EXPIRED_ACCESS_TOKEN"
            )
        return token

    def _rest(self, request: FakeRequest) -> dict | FakeResponse:
        """The caller of a versioned /rest/ call, or the refusal of its headers or token."""
        version = request.headers.get("linkedin-version", "")
        if not version:
            return li_error(
                400,
                "A version must be present. Please specify a version by adding the "
                "LinkedIn-Version header.",
                "VERSION_MISSING",
            )
        if version not in self.live_versions():
            return li_error(
                426, f"Requested version {version} is not active", "NONEXISTENT_VERSION"
            )
        if request.headers.get("x-restli-protocol-version") != "2.0.0":
            return li_error(400, "X-Restli-Protocol-Version 2.0.0 is required", "ILLEGAL_ARGUMENT")
        return self._caller(request)

    def live_versions(self) -> set[str]:
        """The twelve monthly versions up to the current month (each lives about a year)."""
        today = datetime.fromtimestamp(self.clock(), UTC)
        months = today.year * 12 + today.month - 1
        return {f"{m // 12}{m % 12 + 1:02d}" for m in range(months - 11, months + 1)}

    def _may_post_as(self, caller: dict, author: str) -> bool:
        member = caller["member"]
        if author == f"urn:li:person:{member}":
            return "w_member_social" in caller["scopes"]
        return author in self.admins.get(member, set()) and (
            "w_organization_social" in caller["scopes"]
        )

    def _may_read(self, caller: dict, author: str) -> bool:
        if author.startswith("urn:li:organization:"):
            return "r_organization_social" in caller["scopes"] and author in self.admins.get(
                caller["member"], set()
            )
        return (
            "r_member_social" in caller["scopes"] and author == f"urn:li:person:{caller['member']}"
        )

    def _denied(self, what: str) -> FakeResponse:
        return li_error(
            403, f"Not enough permissions to access: {what}", "ACCESS_DENIED", serviceErrorCode=100
        )

    def _throttled(self) -> FakeResponse:
        return li_error(429, "Resource level throttle limit for calls to this resource is reached.")

    def _read_refused(self, caller: dict) -> FakeResponse | None:
        """One of the member's daily reads, or LinkedIn's refusal once they are spent."""
        if self.spend(f"urn:li:person:{caller['member']}", "reads").refused:
            return li_error(
                429,
                "Resource level throttle MEMBER DAY limit for calls to this resource is reached.",
            )
        return None

    # --- OAuth and identity --------------------------------------------------------------

    @route("POST", r"/oauth/v2/accessToken")
    def access_token(self, request: FakeRequest) -> FakeResponse:
        form = request.form()
        if not form.get("client_id") or not form.get("client_secret"):
            return json_response(
                {
                    "error": "invalid_request",
                    "error_description": "A required parameter is missing",
                },
                400,
            )
        if form.get("grant_type") != "refresh_token":
            return json_response({"error": "unsupported_grant_type"}, 400)
        with self.lock:
            grant = self.refresh_tokens.get(form.get("refresh_token", ""))
            if grant is None or self.clock() >= grant["exp"]:
                return json_response(
                    {
                        "error": "invalid_grant",
                        "error_description": "The provided authorization grant or refresh "
                        "token is invalid, expired or revoked.",
                    },
                    400,
                )
            access = self._grant(grant["member"], grant["scopes"])
        return json_response(
            {
                "access_token": access,
                "expires_in": ACCESS_TTL_S,
                "refresh_token": form["refresh_token"],
                # The refresh token's life is not extended by a refresh.
                "refresh_token_expires_in": int(grant["exp"] - self.clock()),
                "scope": ",".join(sorted(grant["scopes"])),
            }
        )

    @route("GET", r"/v2/userinfo")
    def userinfo(self, request: FakeRequest) -> FakeResponse:
        caller = self._caller(request)
        if isinstance(caller, FakeResponse):
            return caller
        account = self.accounts[f"urn:li:person:{caller['member']}"]
        return json_response({"sub": account["id"], "name": account["name"]})

    # --- images --------------------------------------------------------------------------

    @route("POST", r"/rest/images")
    def initialize_upload(self, request: FakeRequest) -> FakeResponse:
        caller = self._rest(request)
        if isinstance(caller, FakeResponse):
            return caller
        if request.arg("action") != "initializeUpload":
            return li_error(400, "Unknown action", "ILLEGAL_ARGUMENT")
        if self.faults.strikes("rate_limit"):
            return self._throttled()
        owner = (request.json().get("initializeUploadRequest") or {}).get("owner", "")
        if not self._may_post_as(caller, owner):
            return self._denied("images.initializeUpload")
        image_id = "D4E" + uuid.uuid4().hex[:20]
        urn = f"urn:li:image:{image_id}"
        with self.lock:
            self.images[urn] = {"owner": owner, "status": "WAITING_UPLOAD", "size": 0}
        return json_response(
            {
                "value": {
                    "uploadUrlExpiresAt": int((self.clock() + 86400) * 1000),
                    "uploadUrl": f"https://{WWW}/dms-uploads/sp/{image_id}/uploaded-image/0",
                    "image": urn,
                }
            }
        )

    @route("PUT", r"/dms-uploads/sp/(?P<image_id>\w+)/uploaded-image/0")
    def upload_image(self, request: FakeRequest, image_id: str) -> FakeResponse:
        caller = self._caller(request)
        if isinstance(caller, FakeResponse):
            return caller
        if self.faults.strikes("drop_mid_upload"):
            return FakeResponse(drop=True)
        with self.lock:
            image = self.images.get(f"urn:li:image:{image_id}")
            if image is None:
                return FakeResponse(404)
            image["size"] = len(request.body)
            slow = self.faults.strikes("slow_processing")
            image["status"] = "PROCESSING" if slow else "AVAILABLE"
            image["ready_at"] = self.clock() + self.faults.processing_s
        return FakeResponse(201)

    @route("GET", r"/rest/images/(?P<encoded>[^/]+)")
    def get_image(self, request: FakeRequest, encoded: str) -> FakeResponse:
        caller = self._rest(request)
        if isinstance(caller, FakeResponse):
            return caller
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        if refusal := self._read_refused(caller):
            return refusal
        urn = unquote(encoded)
        with self.lock:
            image = self.images.get(urn)
            if image is None:
                return li_error(404, f"Not found: {urn}")
            if not self._may_read(caller, image["owner"]):
                return self._denied("images.GET")
            if image["status"] == "PROCESSING" and self.clock() >= image["ready_at"]:
                image["status"] = "AVAILABLE"
            return json_response({"id": urn, "owner": image["owner"], "status": image["status"]})

    # --- videos --------------------------------------------------------------------------

    @route("POST", r"/rest/videos")
    def video_action(self, request: FakeRequest) -> FakeResponse:
        caller = self._rest(request)
        if isinstance(caller, FakeResponse):
            return caller
        if self.faults.strikes("rate_limit"):
            return self._throttled()
        action = request.arg("action")
        if action == "initializeUpload":
            return self._initialize_video(caller, request.json().get("initializeUploadRequest"))
        if action == "finalizeUpload":
            return self._finalize_video(caller, request.json().get("finalizeUploadRequest"))
        return li_error(400, "Unknown action", "ILLEGAL_ARGUMENT")

    def _initialize_video(self, caller: dict, spec: dict | None) -> FakeResponse:
        spec = spec or {}
        owner, size = spec.get("owner", ""), spec.get("fileSizeBytes")
        if not isinstance(size, int) or size <= 0:
            return li_error(422, "ERROR :: /fileSizeBytes :: field is required", "ILLEGAL_ARGUMENT")
        if not self._may_post_as(caller, owner):
            return self._denied("videos.initializeUpload")
        video_id = "D5F" + uuid.uuid4().hex[:20]
        urn = f"urn:li:video:{video_id}"
        step = self.video_part_bytes
        instructions = [
            {
                "uploadUrl": f"https://{WWW}/dms-uploads/sp/v2/{video_id}/part/{n}",
                "firstByte": first,
                "lastByte": min(first + step, size) - 1,
            }
            for n, first in enumerate(range(0, size, step))
        ]
        token = uuid.uuid4().hex
        with self.lock:
            self.videos[urn] = {
                "owner": owner,
                "size": size,
                "status": "WAITING_UPLOAD",
                "token": token,
                "parts": {},  # part number -> (bytes, etag)
                "ranges": [(i["firstByte"], i["lastByte"]) for i in instructions],
            }
        return json_response(
            {
                "value": {
                    "uploadUrlsExpireAt": int((self.clock() + 86400) * 1000),
                    "video": urn,
                    "uploadInstructions": instructions,
                    "uploadToken": token,
                }
            }
        )

    @route("PUT", r"/dms-uploads/sp/v2/(?P<video_id>\w+)/part/(?P<part>\d+)")
    def upload_video_part(self, request: FakeRequest, video_id: str, part: str) -> FakeResponse:
        if self.faults.strikes("drop_mid_upload"):
            return FakeResponse(drop=True)
        with self.lock:
            video = self.videos.get(f"urn:li:video:{video_id}")
            if video is None or int(part) >= len(video["ranges"]):
                return FakeResponse(404)
            first, last = video["ranges"][int(part)]
            if len(request.body) != last - first + 1:
                return FakeResponse(400)
            etag = f"/ETag{uuid.uuid4().hex[:12]}"
            video["parts"][int(part)] = (len(request.body), etag)
        return FakeResponse(201, None, {"ETag": etag})

    def _finalize_video(self, caller: dict, spec: dict | None) -> FakeResponse:
        spec = spec or {}
        with self.lock:
            video = self.videos.get(spec.get("video", ""))
            if video is None or not self._may_post_as(caller, video["owner"]):
                return self._denied("videos.finalizeUpload")
            etags = [video["parts"][n][1] for n in sorted(video["parts"])]
            if (
                len(video["parts"]) != len(video["ranges"])
                or spec.get("uploadedPartIds") != etags
                or spec.get("uploadToken", "") != video["token"]
            ):
                return li_error(
                    400, "Upload parts do not match the upload instructions", "ILLEGAL_ARGUMENT"
                )
            slow = self.faults.strikes("slow_processing")
            video["status"] = "PROCESSING" if slow else "AVAILABLE"
            video["ready_at"] = self.clock() + self.faults.processing_s
        return FakeResponse(200)

    @route("GET", r"/rest/videos/(?P<encoded>[^/]+)")
    def get_video(self, request: FakeRequest, encoded: str) -> FakeResponse:
        caller = self._rest(request)
        if isinstance(caller, FakeResponse):
            return caller
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        if refusal := self._read_refused(caller):
            return refusal
        urn = unquote(encoded)
        with self.lock:
            video = self.videos.get(urn)
            if video is None:
                return li_error(404, f"Not found: {urn}")
            if not self._may_read(caller, video["owner"]):
                return self._denied("videos.GET")
            if video["status"] == "PROCESSING" and self.clock() >= video["ready_at"]:
                video["status"] = "AVAILABLE"
            return json_response({"id": urn, "owner": video["owner"], "status": video["status"]})

    # --- posts ---------------------------------------------------------------------------

    @route("POST", r"/rest/posts")
    def create_post(self, request: FakeRequest) -> FakeResponse:
        caller = self._rest(request)
        if isinstance(caller, FakeResponse):
            return caller
        if self.faults.strikes("rate_limit"):
            return self._throttled()
        if self.faults.strikes("server_error_before"):
            return li_error(503, "Service Unavailable")
        post = request.json()
        missing = [f for f in REQUIRED if f not in post]
        if missing:
            return li_error(
                422,
                "".join(
                    f"ERROR :: /{f} :: field is required but not found and has no default value\n"
                    for f in missing
                ),
            )
        author = post["author"]
        if not self._may_post_as(caller, author):
            return self._denied("partnerApiPostsExternal.CREATE")
        if post["visibility"] not in ("PUBLIC", "CONNECTIONS", "LOGGED_IN"):
            return li_error(422, "ERROR :: /visibility :: invalid enum value", "ILLEGAL_ARGUMENT")
        media = _media_ids(post.get("content") or {})
        with self.lock:
            for urn in media:
                item = self.images.get(urn) or self.videos.get(urn)
                if item is None or item["owner"] != author or item["status"] == "WAITING_UPLOAD":
                    return li_error(422, f"ERROR :: /content :: media {urn} is not uploaded")
            existing = self._duplicate_of(author, post["commentary"], media)
            if existing is not None:
                # A ghost is a deleted post's id: made earlier, within the window.
                named = (
                    self._share_urn(self.clock() - self._rng.uniform(600, 20 * 3600))
                    if self.refusal_names_ghost or self.switched(author, "refusal_names_ghost")
                    else existing
                )
                return li_error(
                    422,
                    f"Content is a duplicate of {named}",
                    errorDetailType="com.linkedin.common.error.BadRequest",
                    errorDetails={
                        "inputErrors": [
                            {
                                "description": "Duplicate post is detected",
                                "code": "DUPLICATE_POST",
                            }
                        ]
                    },
                )
            urn = self._share_urn(self.clock())
            self.store(
                StoredPost(
                    id=urn,
                    account=author,
                    text=post["commentary"],
                    created_at=self.clock(),
                    visible_at=self.clock(),
                    media=media,
                    extra={"post": post},
                )
            )
        headers = {}
        if self._rng.random() >= self.restli_id_missing:
            headers["x-restli-id"] = urn
        if self.send_location:
            headers["Location"] = f"/rest/posts/{quote(urn, safe='')}"
        if self.faults.strikes("server_error_after"):
            return li_error(504, "Gateway Timeout")
        if self.faults.strikes("timeout_after_accept"):
            return FakeResponse(201, None, headers, delay_s=self.faults.hang_s)
        return FakeResponse(201, None, headers)

    def _share_urn(self, made_at: float) -> str:
        """A post id as LinkedIn's read (undocumented, but every id seen so far does): the
        creation time in milliseconds since 1970 above the lowest 22 bits."""
        return f"urn:li:share:{(int(made_at * 1000) << 22) | (next(self._shares) & 0x3FFFFF)}"

    def _duplicate_of(self, author: str, text: str, media: list[str]) -> str | None:
        """The URN of the author's post this one duplicates: the same non-empty commentary
        within the window (and, when media are compared, the same media). Under the lock."""
        if not text.strip():
            return None
        since = self.clock() - self.duplicate_window_s
        compares = self.duplicate_compares_media or self.switched(
            author, "duplicate_compares_media"
        )
        for existing in self.posts.values():
            if (
                existing.account == author
                and existing.text == text
                and existing.created_at >= since
                and (not compares or existing.media == media)
            ):
                return existing.id
        return None

    def _post_json(self, post: StoredPost) -> dict:
        return {
            **post.extra["post"],
            "id": post.id,
            "createdAt": int(post.created_at * 1000),
            "publishedAt": int(post.created_at * 1000),
            "lastModifiedAt": int(post.created_at * 1000),
        }

    @route("GET", r"/rest/posts/(?P<encoded>[^/]+)")
    def get_post(self, request: FakeRequest, encoded: str) -> FakeResponse:
        caller = self._rest(request)
        if isinstance(caller, FakeResponse):
            return caller
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        if refusal := self._read_refused(caller):
            return refusal
        urn = unquote(encoded)
        with self.lock:
            post = self.posts.get(urn)
            if post is None:
                return li_error(404, f"Not found: {urn}")
            if not self._may_read(caller, post.account):
                return self._denied("partnerApiPostsExternal.GET")
            return json_response(self._post_json(post))

    @route("GET", r"/rest/posts")
    def find_by_author(self, request: FakeRequest) -> FakeResponse:
        caller = self._rest(request)
        if isinstance(caller, FakeResponse):
            return caller
        if request.arg("q") != "author":
            return li_error(400, "Unknown finder", "ILLEGAL_ARGUMENT")
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        if refusal := self._read_refused(caller):
            return refusal
        author = unquote(request.arg("author", ""))
        if not self._may_read(caller, author):
            return self._denied("partnerApiPostsExternal.FINDER-author")
        count = min(int(request.arg("count", "10")), 100)
        start = int(request.arg("start", "0"))
        now = self.clock()
        with self.lock:
            mine = sorted(
                (p for p in self.posts.values() if p.account == author and p.visible_at <= now),
                key=lambda p: p.created_at,
                reverse=True,
            )
            page = [self._post_json(p) for p in mine[start : start + count]]
        return json_response(
            {"elements": page, "paging": {"start": start, "count": count, "total": len(mine)}}
        )

    @route("DELETE", r"/rest/posts/(?P<encoded>[^/]+)")
    def delete_post(self, request: FakeRequest, encoded: str) -> FakeResponse:
        caller = self._rest(request)
        if isinstance(caller, FakeResponse):
            return caller
        urn = unquote(encoded)
        with self.lock:
            post = self.posts.get(urn)
            if post is None:
                return li_error(404, f"Not found: {urn}")
            if not self._may_post_as(caller, post.account):
                return self._denied("partnerApiPostsExternal.DELETE")
            self.remove(urn)
            self.comments.pop(urn, None)
        return FakeResponse(204, None)

    # --- social actions and followers (metrics grow with the post's age) ---------------

    @route("GET", r"/rest/socialActions/(?P<encoded>[^/]+)")
    def social_actions(self, request: FakeRequest, encoded: str) -> FakeResponse:
        """A post's likes and comments: r_member_social for a member's post (a scope LinkedIn
        grants partners only), r_organization_social for a page's."""
        caller = self._rest(request)
        if isinstance(caller, FakeResponse):
            return caller
        urn = unquote(encoded)
        with self.lock:
            post = self.posts.get(urn)
            if post is None:
                return li_error(404, f"Not found: {urn}")
            if not self._may_read(caller, post.account):
                return self._denied("partnerApiSocialActions.GET")
            grown = engagement.grown(post, self.clock())
            comments = grown["replies"] + len(self.comments.get(urn, []))
        return json_response(
            {
                "target": urn,
                "likesSummary": {"totalLikes": grown["likes"], "likedByCurrentUser": False},
                "commentsSummary": {
                    "aggregatedTotalComments": comments,
                    "totalFirstLevelComments": comments,
                },
            }
        )

    @route("GET", r"/rest/memberFollowersCount")
    def member_followers(self, request: FakeRequest) -> FakeResponse:
        """The caller's followers (q=me), with r_member_followers only."""
        caller = self._rest(request)
        if isinstance(caller, FakeResponse):
            return caller
        if "r_member_followers" not in caller["scopes"]:
            return self._denied("partnerApiMemberFollowersCount.FINDER-me")
        author = f"urn:li:person:{caller['member']}"
        with self.lock:
            made = sum(1 for p in self.posts.values() if p.account == author)
        followers = engagement.followers(caller["member"], made)
        return json_response({"elements": [{"memberFollowersCount": followers}]})

    # --- comments ------------------------------------------------------------------------

    @route("POST", r"/rest/socialActions/(?P<encoded>[^/]+)/comments")
    def create_comment(self, request: FakeRequest, encoded: str) -> FakeResponse:
        caller = self._rest(request)
        if isinstance(caller, FakeResponse):
            return caller
        if self.faults.strikes("rate_limit"):
            return self._throttled()
        urn = unquote(encoded)
        body = request.json()
        actor = str(body.get("actor") or "")
        text = str((body.get("message") or {}).get("text") or "")
        if not actor or not text:
            return li_error(422, "ERROR :: /message/text :: field is required", "ILLEGAL_ARGUMENT")
        if not self._may_post_as(caller, actor):
            return self._denied("partnerApiSocialActions.CREATE-comments")
        with self.lock:
            if urn not in self.posts:
                return li_error(404, f"Not found: {urn}")
            comment_id = str(next(self._comment_ids))
            comment = {
                "id": comment_id,
                "commentUrn": f"urn:li:comment:({urn},{comment_id})",
                "actor": actor,
                "object": urn,
                "message": {"text": text},
                "created": {"actor": actor, "time": int(self.clock() * 1000)},
            }
            self.comments.setdefault(urn, []).append(comment)
        return FakeResponse(201, comment, {"x-restli-id": comment_id})

    @route("GET", r"/rest/socialActions/(?P<encoded>[^/]+)/comments")
    def list_comments(self, request: FakeRequest, encoded: str) -> FakeResponse:
        caller = self._rest(request)
        if isinstance(caller, FakeResponse):
            return caller
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        if refusal := self._read_refused(caller):
            return refusal
        urn = unquote(encoded)
        count = min(int(request.arg("count", "10")), 100)
        start = int(request.arg("start", "0"))
        with self.lock:
            post = self.posts.get(urn)
            if post is None:
                return li_error(404, f"Not found: {urn}")
            if not self._may_read(caller, post.account):
                return self._denied("partnerApiSocialActions.GET-comments")
            comments = list(self.comments.get(urn, []))
        page = comments[start : start + count]
        return json_response(
            {"elements": page, "paging": {"start": start, "count": count, "total": len(comments)}}
        )


def _media_ids(content: dict) -> list[str]:
    if "media" in content:
        return [content["media"].get("id", "")]
    if "multiImage" in content:
        return [i.get("id", "") for i in content["multiImage"].get("images", [])]
    return []


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat()


FAKE = LinkedInFake
