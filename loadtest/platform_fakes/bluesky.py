"""A Bluesky PDS (and the bsky.social entryway) as the AT Protocol lexicons and the PDS behave.

- Sessions: `com.atproto.server.createSession` (app password) and `refreshSession`, which
  rotates both JWTs and revokes the old refresh JWT. A stale access JWT is answered 400
  `ExpiredToken`.
- `com.atproto.repo.createRecord` takes a client-chosen `rkey` (a TID for app.bsky.feed.post).
  A create under an rkey that already holds a record fails: today the PDS answers 500
  `InternalServerError`; an explicit named error (`RecordAlreadyExists`, 400) is proposed
  upstream, so `existing_record_error` picks either.
- `com.atproto.repo.getRecord` is exact: 200 with `{uri, cid, value}` or 400 `RecordNotFound`.
- `uploadBlob` takes the raw bytes and returns a blob ref; replies carry `reply.root/parent`
  strong refs.
- 429 `RateLimitExceeded` carries `RateLimit-Limit/Remaining/Reset` (epoch seconds) and
  `RateLimit-Policy`.
- Reads are limited to 3,000 requests per 5 minutes (docs.bsky.app rate limits, "API
  requests"): every getRecord and getJobStatus answer carries the `RateLimit-*` headers of
  that window, and an account switched to `enforce_limits` is refused past it (429
  `RateLimitExceeded`, the headers naming the reset). Bluesky counts per IP; the fake counts
  per repository DID, so one account can be switched on its own.
- The video service (video.bsky.app), as docs.bsky.app "Uploading video" describes it:
  `com.atproto.server.getServiceAuth` on the PDS signs a token for an audience and one
  method; `app.bsky.video.getUploadLimits` (audience the video service) reports
  `canUpload` and the daily allowances; `app.bsky.video.uploadVideo?did=..&name=..`
  (audience the PDS's did:web, method uploadBlob) takes the bytes and answers a job status
  at the top level (as the live service does); `app.bsky.video.getJobStatus?jobId=..`
  walks the job through its states over the plan's `processing_s` (five times that under
  `slow_processing`) and ends `JOB_STATE_COMPLETED` with the MP4 blob stored on the PDS,
  or `JOB_STATE_FAILED` (`processing_fails`). Bytes already processed answer
  `already_exists` with the earlier blob; `drop_mid_upload` drops the upload unanswered.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import random
import re
import time
import uuid

from loadtest.platform_fakes import engagement
from loadtest.platform_fakes.base import (
    FakeRequest,
    FakeResponse,
    PlatformFake,
    StoredPost,
    json_response,
    route,
)
from loadtest.platform_fakes.limits import ENFORCE, Allowance, LimitedReads, Spent

ENTRYWAY = "bsky.social"
PDS_HOST = "puffball.us-east.host.bsky.network"
VIDEO_HOST = "video.bsky.app"
VIDEO_DID = f"did:web:{VIDEO_HOST}"
VIDEO_TYPES = ("video/mp4", "video/mpeg", "video/webm", "video/quicktime", "image/gif")
VIDEO_STATES = ("JOB_STATE_CREATED", "JOB_STATE_ENCODING", "JOB_STATE_SCANNING")
MAX_VIDEO_BYTES = 100_000_000
DAILY_VIDEOS = 25
DAILY_VIDEO_BYTES = 10_000_000_000
SERVICE_TOKEN_MAX_S = 3600
SLOW_FACTOR = 5
POST = "app.bsky.feed.post"
TID = re.compile(r"^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$")
S32 = "234567abcdefghijklmnopqrstuvwxyz"
ACCESS_TTL_S = 2 * 3600
MAX_GRAPHEMES = 300
MAX_BLOB_BYTES = 2_000_000
INTERNAL_ERROR = "InternalServerError"  # what the PDS answers today for an existing rkey
NAMED_ERROR = "RecordAlreadyExists"  # the explicit error proposed upstream
READS = Allowance(limit=3000, window_s=300)


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def _cid(payload: bytes) -> str:
    digest = hashlib.sha256(payload).digest()
    return "bafyrei" + base64.b32encode(digest).decode().lower().rstrip("=")[:52]


def xrpc_error(name: str, message: str, status: int = 400, /, **headers: str) -> FakeResponse:
    return json_response({"error": name, "message": message}, status, **headers)


class BlueskyFake(LimitedReads, PlatformFake):
    platform = "bluesky"
    hosts = (ENTRYWAY, PDS_HOST, VIDEO_HOST)
    account_behaviours = (ENFORCE,)
    ALLOWANCES = {"read": READS}

    def __init__(self, faults=None, *, existing_record_error: str = INTERNAL_ERROR) -> None:
        super().__init__(faults)
        self.existing_record_error = existing_record_error
        self.clock = time.time
        self.sessions: dict[str, dict] = {}  # jwt -> {"did", "kind", "exp", "revoked"}
        self.blobs: dict[str, dict] = {}
        self.handles: dict[str, str] = {}  # handle -> did
        self.logins: dict[str, list[float]] = {}
        self._tids = itertools.count(int(time.time() * 1_000_000))
        self.service_tokens: dict[str, dict] = {}  # token -> {"did", "aud", "lxm", "exp"}
        self.video_jobs: dict[str, dict] = {}  # job id -> {"did", "digest", "started", ...}
        self.video_uploads: list[str] = []  # job ids in upload order
        self.unverified_email: set[str] = set()  # DIDs the service refuses video for

    # --- accounts ------------------------------------------------------------------------

    def new_account(self, handle: str) -> dict:
        did = "did:plc:" + "".join(random.choices(S32, k=24))  # noqa: S311 - an id, not a secret
        full = f"{handle}.bsky.social"
        password = "-".join(uuid.uuid4().hex[i : i + 4] for i in (0, 4, 8, 12))
        with self.lock:
            self.accounts[did] = {"did": did, "handle": full, "password": password}
            self.handles[full] = did
            access, refresh = self._issue(did)
        return {
            "remote_id": did,
            "handle": full,
            "credentials": {
                "access_jwt": access,
                "refresh_jwt": refresh,
                "did": did,
                "pds": f"https://{PDS_HOST}",
                "expires_at": time.strftime(
                    "%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(self.clock() + ACCESS_TTL_S)
                ),
            },
            "settings": {"did": did, "pds": f"https://{PDS_HOST}"},
        }

    def sample_content(self, rng: random.Random, marker: str) -> dict:
        segments = [{"text": f"{marker} skeet {rng.randrange(10**6)}", "media": []}]
        if rng.random() < 0.3:
            segments[0]["media"] = ["image"]
        if rng.random() < 0.3:
            segments.append({"text": f"{marker} reply {rng.randrange(10**6)}", "media": []})
        return {"segments": segments, "settings": {"langs": ["en"]}}

    def rkey_of(self, post: StoredPost) -> str:
        return post.id.rsplit("/", 1)[-1]

    # --- helpers -------------------------------------------------------------------------

    def _issue(self, did: str) -> tuple[str, str]:
        now = self.clock()
        tokens = []
        for kind, ttl in (("access", ACCESS_TTL_S), ("refresh", 90 * 86400)):
            claims = {"scope": f"com.atproto.{kind}", "sub": did, "iat": int(now)}
            claims["exp"] = int(now + ttl)
            claims["jti"] = uuid.uuid4().hex
            token = f"{_b64({'typ': 'at+jwt', 'alg': 'ES256K'})}.{_b64(claims)}.sig"
            self.sessions[token] = {"did": did, "kind": kind, "exp": now + ttl, "revoked": False}
            tokens.append(token)
        return tokens[0], tokens[1]

    def _session_body(self, did: str, access: str, refresh: str) -> dict:
        return {
            "accessJwt": access,
            "refreshJwt": refresh,
            "did": did,
            "handle": self.accounts[did]["handle"],
            "active": True,
            "didDoc": {
                "id": did,
                "service": [
                    {
                        "id": "#atproto_pds",
                        "type": "AtprotoPersonalDataServer",
                        "serviceEndpoint": f"https://{PDS_HOST}",
                    }
                ],
            },
        }

    def _authed(self, request: FakeRequest, kind: str = "access") -> str | FakeResponse:
        """The DID the bearer token speaks for, or the XRPC refusal."""
        token = request.bearer
        if not token:
            return xrpc_error("AuthenticationRequired", "Authentication Required", 401)
        with self.lock:
            session = self.sessions.get(token)
        if session is None or session["kind"] != kind:
            return xrpc_error("InvalidToken", "Token could not be verified", 400)
        if session["revoked"]:
            return xrpc_error("ExpiredToken", "Token has been revoked", 400)
        if self.clock() >= session["exp"]:
            return xrpc_error("ExpiredToken", "Token has expired", 400)
        return session["did"]

    def _throttled(self) -> FakeResponse:
        reset = int(self.clock() + self.faults.retry_after_s)
        return xrpc_error(
            "RateLimitExceeded",
            "Rate Limit Exceeded",
            429,
            **{
                "RateLimit-Limit": "5000",
                "RateLimit-Remaining": "0",
                "RateLimit-Reset": str(reset),
                "RateLimit-Policy": "5000;w=3600",
            },
        )

    def _read_limit(self, did: str) -> tuple[dict[str, str], FakeResponse | None]:
        """The read window's headers for `did`, and the refusal once it is spent."""
        spent: Spent = self.spend(did, "read")
        headers = {
            "RateLimit-Limit": str(spent.limit),
            "RateLimit-Remaining": str(spent.remaining),
            "RateLimit-Reset": str(int(spent.reset_at)),
            "RateLimit-Policy": f"{READS.limit};w={int(READS.window_s)}",
        }
        if spent.refused:
            return headers, xrpc_error("RateLimitExceeded", "Rate Limit Exceeded", 429, **headers)
        return headers, None

    def _record(self, post: StoredPost) -> dict:
        return {"uri": post.id, "cid": post.extra["cid"], "value": post.extra["record"]}

    # --- sessions ------------------------------------------------------------------------

    @route("POST", r"/xrpc/com\.atproto\.server\.createSession")
    def create_session(self, request: FakeRequest) -> FakeResponse:
        body = request.json()
        identifier = str(body.get("identifier", "")).lower()
        with self.lock:
            did = identifier if identifier in self.accounts else self.handles.get(identifier, "")
            account = self.accounts.get(did)
            if account is None or body.get("password") != account["password"]:
                return xrpc_error("AuthenticationRequired", "Invalid identifier or password", 401)
            # createSession: 30 per 5 minutes per account.
            now = self.clock()
            recent = [t for t in self.logins.get(did, []) if now - t < 300]
            if len(recent) >= 30:
                return self._throttled()
            self.logins[did] = [*recent, now]
            access, refresh = self._issue(did)
        return json_response(self._session_body(did, access, refresh))

    @route("POST", r"/xrpc/com\.atproto\.server\.refreshSession")
    def refresh_session(self, request: FakeRequest) -> FakeResponse:
        did = self._authed(request, kind="refresh")
        if isinstance(did, FakeResponse):
            return did
        with self.lock:
            self.sessions[request.bearer]["revoked"] = True
            access, refresh = self._issue(did)
        return json_response(self._session_body(did, access, refresh))

    @route("GET", r"/xrpc/com\.atproto\.identity\.resolveHandle")
    def resolve_handle(self, request: FakeRequest) -> FakeResponse:
        did = self.handles.get(str(request.arg("handle", "")).lower())
        if did is None:
            return xrpc_error("InvalidRequest", "Unable to resolve handle")
        return json_response({"did": did})

    # --- service auth and the video service ---------------------------------------------

    @route("GET", r"/xrpc/com\.atproto\.server\.getServiceAuth")
    def get_service_auth(self, request: FakeRequest) -> FakeResponse:
        did = self._authed(request)
        if isinstance(did, FakeResponse):
            return did
        aud, lxm = request.arg("aud"), request.arg("lxm")
        if not aud:
            return xrpc_error("InvalidRequest", 'Params must have the property "aud"')
        exp = int(request.arg("exp") or self.clock() + 60)
        if exp - self.clock() > SERVICE_TOKEN_MAX_S:
            return xrpc_error("BadExpiration", "expiration is too far in the future")
        token = f"svc.{uuid.uuid4().hex}"
        with self.lock:
            self.service_tokens[token] = {"did": did, "aud": aud, "lxm": lxm, "exp": exp}
        return json_response({"token": token})

    def _service_authed(self, request: FakeRequest, *, aud: str, lxm: str) -> str | FakeResponse:
        with self.lock:
            grant = self.service_tokens.get(request.bearer)
        if grant is None:
            return xrpc_error("AuthMissing", "Authentication Required", 401)
        if grant["aud"] != aud or grant["lxm"] != lxm:
            return xrpc_error("BadJwtAudience", "jwt audience or method does not match", 401)
        if self.clock() >= grant["exp"]:
            return xrpc_error("JwtExpired", "jwt expired", 401)
        return grant["did"]

    def _uploads_today(self, did: str) -> tuple[int, int]:
        now = self.clock()
        jobs = [
            j for j in self.video_jobs.values() if j["did"] == did and now - j["started"] < 86400
        ]
        return len(jobs), sum(j["size"] for j in jobs)

    @route("GET", r"/xrpc/app\.bsky\.video\.getUploadLimits")
    def get_upload_limits(self, request: FakeRequest) -> FakeResponse:
        did = self._service_authed(request, aud=VIDEO_DID, lxm="app.bsky.video.getUploadLimits")
        if isinstance(did, FakeResponse):
            return did
        with self.lock:
            videos, size = self._uploads_today(did)
        body: dict[str, bool | int | str] = {
            "canUpload": did not in self.unverified_email and videos < DAILY_VIDEOS,
            "remainingDailyVideos": max(DAILY_VIDEOS - videos, 0),
            "remainingDailyBytes": max(DAILY_VIDEO_BYTES - size, 0),
        }
        if did in self.unverified_email:
            body.update(error="unconfirmed_email", message="Please confirm your email")
        return json_response(body)

    @route("POST", r"/xrpc/app\.bsky\.video\.uploadVideo")
    def upload_video(self, request: FakeRequest) -> FakeResponse:
        did = self._service_authed(
            request, aud=f"did:web:{PDS_HOST}", lxm="com.atproto.repo.uploadBlob"
        )
        if isinstance(did, FakeResponse):
            return did
        if request.arg("did") != did:
            return xrpc_error("InvalidRequest", "did does not match the token")
        if did in self.unverified_email:
            return json_response(
                {"jobStatus": {"did": "", "error": "unconfirmed_email", "jobId": "", "state": ""}}
            )
        mime = request.headers.get("content-type", "")
        if mime not in VIDEO_TYPES:
            return xrpc_error(
                "InvalidRequest",
                f"detected file format ({mime}) is not supported ({', '.join(VIDEO_TYPES)})",
            )
        if len(request.body) > MAX_VIDEO_BYTES:
            return xrpc_error("InvalidRequest", "file too large", 413)
        if self.faults.strikes("drop_mid_upload"):
            return FakeResponse(drop=True)
        digest = hashlib.sha256(request.body).hexdigest()
        with self.lock:
            videos, size = self._uploads_today(did)
            if videos >= DAILY_VIDEOS or size + len(request.body) > DAILY_VIDEO_BYTES:
                return xrpc_error("RateLimitExceeded", "daily video limit reached", 429)
            done = next(
                (
                    j
                    for j in self.video_jobs.values()
                    if j["did"] == did and j["digest"] == digest and j.get("blob")
                ),
                None,
            )
            if done is not None:
                return json_response(
                    {
                        "did": did,
                        "jobId": done["job_id"],
                        "state": "JOB_STATE_COMPLETED",
                        "error": "already_exists",
                        "message": "Video already processed",
                        "blob": done["blob"],
                    }
                )
            job_id = uuid.uuid4().hex[:20]
            self.video_jobs[job_id] = {
                "job_id": job_id,
                "did": did,
                "digest": digest,
                "size": len(request.body),
                "started": self.clock(),
                "processing_s": self.faults.processing_s
                * (SLOW_FACTOR if self.faults.strikes("slow_processing") else 1),
                "fails": self.faults.strikes("processing_fails"),
                "blob": None,
            }
            self.video_uploads.append(job_id)
        return json_response({"did": did, "jobId": job_id, "state": "JOB_STATE_CREATED"})

    @route("GET", r"/xrpc/app\.bsky\.video\.getJobStatus")
    def get_job_status(self, request: FakeRequest) -> FakeResponse:
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        with self.lock:
            job = self.video_jobs.get(request.arg("jobId", ""))
        if job is None:
            return xrpc_error("NotFound", "job not found", 404)
        _, refusal = self._read_limit(job["did"])
        if refusal is not None:
            return refusal
        with self.lock:
            status = {"jobId": job["job_id"], "did": job["did"]}
            elapsed = self.clock() - job["started"]
            if elapsed < job["processing_s"]:
                step = int(elapsed / job["processing_s"] * len(VIDEO_STATES))
                progress = int(elapsed / job["processing_s"] * 100)
                return json_response(
                    {"jobStatus": {**status, "state": VIDEO_STATES[step], "progress": progress}}
                )
            if job["fails"]:
                status.update(
                    state="JOB_STATE_FAILED",
                    error=f"video processing error for job: {job['job_id']}",
                    failureCode="encoding_failure",
                    message="Failed to process video",
                )
                return json_response({"jobStatus": status})
            if job["blob"] is None:
                # The service stores the transcoded MP4 on the PDS with the service token.
                cid = _cid(f"mp4:{job['digest']}".encode())
                blob = {
                    "$type": "blob",
                    "ref": {"$link": cid},
                    "mimeType": "video/mp4",
                    "size": job["size"],
                }
                job["blob"] = blob
                self.blobs[cid] = {**blob, "did": job["did"]}
        return json_response(
            {
                "jobStatus": {
                    **status,
                    "state": "JOB_STATE_COMPLETED",
                    "progress": 100,
                    "blob": job["blob"],
                }
            }
        )

    # --- blobs and records ---------------------------------------------------------------

    @route("POST", r"/xrpc/com\.atproto\.repo\.uploadBlob")
    def upload_blob(self, request: FakeRequest) -> FakeResponse:
        did = self._authed(request)
        if isinstance(did, FakeResponse):
            return did
        if self.faults.strikes("rate_limit"):
            return self._throttled()
        if self.faults.strikes("drop_mid_upload"):
            return FakeResponse(drop=True)
        if self.faults.strikes("server_error_before"):
            return xrpc_error(INTERNAL_ERROR, "Internal Server Error", 500)
        if len(request.body) > MAX_BLOB_BYTES:
            return xrpc_error("BlobTooLarge", "This file is too large.", 413)
        cid = _cid(request.body)
        mime = request.headers.get("content-type", "application/octet-stream")
        blob = {"$type": "blob", "ref": {"$link": cid}, "mimeType": mime, "size": len(request.body)}
        with self.lock:
            self.blobs[cid] = {**blob, "did": did}
        return json_response({"blob": blob})

    @route("POST", r"/xrpc/com\.atproto\.repo\.createRecord")
    def create_record(self, request: FakeRequest) -> FakeResponse:
        did = self._authed(request)
        if isinstance(did, FakeResponse):
            return did
        if self.faults.strikes("rate_limit"):
            return self._throttled()
        if self.faults.strikes("server_error_before"):
            return xrpc_error("UpstreamFailure", "Upstream Failure", 502)
        body = request.json()
        if body.get("repo") not in (did, self.accounts[did]["handle"]):
            return xrpc_error("InvalidRequest", "Input/repo must be the authenticated account")
        collection = body.get("collection")
        record = body.get("record")
        if not isinstance(record, dict) or record.get("$type") != collection:
            return xrpc_error("InvalidRequest", "Invalid $type: must match the collection")
        problem = self._invalid_post(record, did) if collection == POST else None
        if problem:
            return xrpc_error("InvalidRequest", f"Invalid {POST} record: {problem}")
        rkey = body.get("rkey") or self._next_tid()
        if collection == POST and body.get("validate", True) and not TID.match(rkey):
            return xrpc_error("InvalidRequest", f"Invalid record key for {POST}")
        uri = f"at://{did}/{collection}/{rkey}"
        with self.lock:
            if uri in self.posts:
                if self.existing_record_error == INTERNAL_ERROR:
                    return xrpc_error(INTERNAL_ERROR, "Internal Server Error", 500)
                return xrpc_error(self.existing_record_error, f"Record already exists: {uri}")
            cid = _cid(json.dumps(record, sort_keys=True).encode())
            reply = record.get("reply") or {}
            post = StoredPost(
                id=uri,
                account=did,
                text=record.get("text", ""),
                created_at=self.clock(),
                visible_at=self.clock(),
                reply_to=(reply.get("parent") or {}).get("uri"),
                media=_media_links(record),
                idempotency_key=rkey,
                extra={"cid": cid, "record": record},
            )
            self.store(post)
        answer = {
            "uri": uri,
            "cid": cid,
            "commit": {"cid": _cid(uri.encode()), "rev": self._next_tid()},
            "validationStatus": "valid",
        }
        if self.faults.strikes("server_error_after"):
            return xrpc_error(INTERNAL_ERROR, "Internal Server Error", 500)
        if self.faults.strikes("timeout_after_accept"):
            return FakeResponse(200, answer, delay_s=self.faults.hang_s)
        return json_response(answer)

    def _invalid_post(self, record: dict, did: str) -> str | None:
        text = record.get("text")
        if not isinstance(text, str):
            return "Record/text must be a string"
        if len(text) > MAX_GRAPHEMES:
            return f"Record/text must not be longer than {MAX_GRAPHEMES} graphemes"
        if not record.get("createdAt"):
            return 'Record must have the property "createdAt"'
        reply = record.get("reply")
        if reply is not None:
            for side in ("root", "parent"):
                ref = reply.get(side) or {}
                if not (ref.get("uri") and ref.get("cid")):
                    return f'Record/reply/{side} must have the properties "uri" and "cid"'
        images = _images(record)
        if len(images) > 4:
            return "Record/embed/images must not have more than 4 elements"
        for image in images:
            if "alt" not in image:
                return 'Record/embed/images/0 must have the property "alt"'
            link = ((image.get("image") or {}).get("ref") or {}).get("$link")
            if link not in self.blobs:
                return f"Could not find blob: {link}"
        embed = record.get("embed") or {}
        if embed.get("$type") == "app.bsky.embed.video":
            blob = embed.get("video") or {}
            stored = self.blobs.get((blob.get("ref") or {}).get("$link", ""))
            if stored is None:
                return f"Could not find blob: {(blob.get('ref') or {}).get('$link')}"
            if stored["mimeType"] != "video/mp4":
                return "Record/embed/video/video has the wrong mime type (video/mp4 only)"
        return None

    def _next_tid(self) -> str:
        value = next(self._tids)
        return "".join(S32[(value >> (5 * i)) & 31] for i in reversed(range(11))) + "22"

    @route("POST", r"/xrpc/com\.atproto\.repo\.deleteRecord")
    def delete_record(self, request: FakeRequest) -> FakeResponse:
        """Deletes the record; one the repository does not hold is no error (the answer
        is the same commit-less success)."""
        did = self._authed(request)
        if isinstance(did, FakeResponse):
            return did
        body = request.json()
        if body.get("repo") not in (did, self.accounts[did]["handle"]):
            return xrpc_error("InvalidRequest", "Input/repo must be the authenticated account")
        uri = f"at://{did}/{body.get('collection')}/{body.get('rkey')}"
        self.remove(uri)
        return json_response({})

    @route("GET", r"/xrpc/com\.atproto\.repo\.getRecord")
    def get_record(self, request: FakeRequest) -> FakeResponse:
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        repo = request.arg("repo", "")
        did = repo if repo in self.accounts else self.handles.get(repo, repo)
        headers, refusal = self._read_limit(did)
        if refusal is not None:
            return refusal
        uri = f"at://{did}/{request.arg('collection')}/{request.arg('rkey')}"
        with self.lock:
            post = self.posts.get(uri)
            if post is None:
                return xrpc_error("RecordNotFound", f"Could not locate record: {uri}", **headers)
            return json_response(self._record(post), **headers)

    # --- the AppView's reads, proxied by the PDS (metrics grow with the post's age) --------

    @route("GET", r"/xrpc/app\.bsky\.feed\.getPosts")
    def get_posts(self, request: FakeRequest) -> FakeResponse:
        authed = self._authed(request)
        if isinstance(authed, FakeResponse):
            return authed
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        views = []
        with self.lock:
            for uri in request.query.get("uris", []):
                post = self.posts.get(uri)
                if post is not None:  # a deleted post is left out, as the AppView does
                    grown = engagement.grown(post, self.clock())
                    views.append(
                        {
                            "uri": uri,
                            "cid": post.extra.get("cid"),
                            "likeCount": grown["likes"],
                            "replyCount": grown["replies"],
                            "repostCount": grown["reposts"],
                            "quoteCount": grown["quotes"],
                        }
                    )
        return json_response({"posts": views})

    @route("GET", r"/xrpc/app\.bsky\.actor\.getProfile")
    def get_profile(self, request: FakeRequest) -> FakeResponse:
        authed = self._authed(request)
        if isinstance(authed, FakeResponse):
            return authed
        actor = request.arg("actor", "")
        did = actor if actor in self.accounts else self.handles.get(actor, actor)
        if did not in self.accounts:
            return xrpc_error("InvalidRequest", "Profile not found")
        with self.lock:
            made = sum(1 for p in self.posts.values() if p.account == did)
        return json_response({"did": did, "followersCount": engagement.followers(did, made)})

    @route("GET", r"/xrpc/app\.bsky\.feed\.getPostThread")
    def get_post_thread(self, request: FakeRequest) -> FakeResponse:
        """The post and its replies, nested, `depth` levels deep (the inbox's read)."""
        authed = self._authed(request)
        if isinstance(authed, FakeResponse):
            return authed
        if self.faults.strikes("poll_rate_limit"):
            return self._throttled()
        uri, depth = request.arg("uri", ""), int(request.arg("depth", "6"))
        now = self.clock()
        with self.lock:
            if uri not in self.posts:
                return xrpc_error("NotFound", f"Post not found: {uri}", 400)
            children: dict[str, list[StoredPost]] = {}
            for post in sorted(self.posts.values(), key=lambda p: p.created_at):
                if post.reply_to and post.visible_at <= now:
                    children.setdefault(post.reply_to, []).append(post)
            thread = self._thread_view(self.posts[uri], children, depth)
        return json_response({"thread": thread})

    def _thread_view(self, post: StoredPost, children: dict, depth: int) -> dict:
        author = self.accounts[post.account]
        view: dict[str, object] = {
            "$type": "app.bsky.feed.defs#threadViewPost",
            "post": {
                "uri": post.id,
                "cid": post.extra["cid"],
                "author": {"did": post.account, "handle": author["handle"]},
                "record": post.extra["record"],
                "indexedAt": iso_time(post.created_at),
            },
        }
        if depth > 0:
            view["replies"] = [
                self._thread_view(child, children, depth - 1) for child in children.get(post.id, [])
            ]
        return view

    def add_comment(self, post_uri: str, handle: str, text: str) -> StoredPost:
        """Someone else's reply under a post (what the inbox reads)."""
        did = self.new_account(handle)["remote_id"]
        with self.lock:
            parent = self.posts[post_uri]
            ref = {"uri": parent.id, "cid": parent.extra["cid"]}
            root = (parent.extra["record"].get("reply") or {}).get("root") or ref
            record = {
                "$type": POST,
                "text": text,
                "createdAt": iso_time(self.clock()),
                "reply": {"root": root, "parent": ref},
            }
            uri = f"at://{did}/{POST}/{self._next_tid()}"
            post = StoredPost(
                id=uri,
                account=did,
                text=text,
                created_at=self.clock(),
                reply_to=post_uri,
                extra={"cid": _cid(json.dumps(record, sort_keys=True).encode()), "record": record},
            )
        return self.store(post)


def iso_time(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(timestamp))


def _media_links(record: dict) -> list[str]:
    embed = record.get("embed") or {}
    if embed.get("$type") == "app.bsky.embed.video":
        return [embed["video"]["ref"]["$link"]]
    return [i["image"]["ref"]["$link"] for i in _images(record)]


def _images(record: dict) -> list[dict]:
    embed = record.get("embed") or {}
    if embed.get("$type") != "app.bsky.embed.images":
        return []
    return list(embed.get("images") or [])


FAKE = BlueskyFake
