"""What the Meta fakes (Instagram, Threads, Facebook Pages) share: the Graph error
envelope, the usage headers, tokens, and container publishing.

As documented (developers.facebook.com graph-api error handling and rate limiting,
instagram-platform content publishing, threads posts):
- errors are `{"error": {"message", "type", "code", "error_subcode"?, "is_transient"?,
  "fbtrace_id"}}`, classified by code, usually with HTTP 400;
- every answer carries `X-App-Usage` (percentages of the app's budget), and Business Use
  Case calls `X-Business-Use-Case-Usage` (per business id, with
  `estimated_time_to_regain_access` in minutes once throttled);
- a container is made by one call, is IN_PROGRESS while Meta fetches and processes the
  media, then FINISHED (or ERROR, with the platform's reason), and EXPIRED 24 h after
  creation unless published (`container_ttl_s` shortens that, counted on the fake's
  `clock`); an EXPIRED or ERROR container is refused at publishing and never becomes a
  post; publishing is the one call that makes a post, and a container publishes once.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from loadtest.platform_fakes import multipart
from loadtest.platform_fakes.base import (
    FakeRequest,
    FakeResponse,
    PlatformFake,
    StoredPost,
    json_response,
)

VERSION = r"(?:/v\d+\.\d+)?"  # Graph paths may name a version
CONTAINER_TTL_S = 24 * 3600
TOKEN_TTL_S = 60 * 24 * 3600  # long-lived tokens: 60 days

IN_PROGRESS, FINISHED, PUBLISHED, ERROR, EXPIRED = (
    "IN_PROGRESS",
    "FINISHED",
    "PUBLISHED",
    "ERROR",
    "EXPIRED",
)

_ids = itertools.count(17_841_000_000_000_000)


def graph_id() -> str:
    """Graph ids are numeric strings."""
    return str(next(_ids))


def graph_time(epoch: float) -> str:
    """Graph timestamps look like 2026-03-01T10:00:00+0000."""
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")


@dataclass
class Container:
    """A media container: invisible on the platform until published."""

    id: str
    account: str
    params: dict
    created_at: float = field(default_factory=time.time)
    ready_at: float = 0.0
    fails: bool = False
    published_id: str | None = None
    children: list[str] = field(default_factory=list)
    ttl_s: float = CONTAINER_TTL_S
    # The platform's clock (the fake's, which tests move forward).
    clock: Callable[[], float] = field(default=time.time, repr=False)

    def status(self, now: float | None = None) -> str:
        now = self.clock() if now is None else now
        if self.published_id:
            return PUBLISHED
        if now - self.created_at > self.ttl_s:
            return EXPIRED
        if now < self.ready_at:
            return IN_PROGRESS
        return ERROR if self.fails else FINISHED


class MetaGraphFake(PlatformFake):
    """Graph plumbing for one Meta platform. Subclasses set `buc_type` (the usage header's
    `type`), `throttle_code` (the code of their rate-limit error) and their routes."""

    buc_type = "pages"
    throttle_code = 4
    throttle_message = "Application request limit reached"
    # Seconds a media container takes to process (text containers are ready at once).
    slow_factor = 5.0

    def __init__(self, faults=None, *, container_ttl_s: float = CONTAINER_TTL_S) -> None:
        super().__init__(faults)
        self.container_ttl_s = container_ttl_s
        self.clock: Callable[[], float] = time.time
        self.containers: dict[str, Container] = {}
        self.tokens: dict[str, str] = {}  # access token -> account id
        self.container_creations = 0

    # --- accounts and tokens -----------------------------------------------------------

    def new_account(self, handle: str) -> dict:
        account_id = graph_id()
        token = f"{self.platform}-token-{self.new_id()}"
        with self.lock:
            self.accounts[account_id] = {"handle": handle, "access_token": token}
            self.tokens[token] = account_id
        expires = datetime.fromtimestamp(time.time() + TOKEN_TTL_S, tz=UTC)
        return {
            "remote_id": account_id,
            "handle": handle,
            "credentials": {"access_token": token, "expires_at": expires.isoformat()},
            "settings": {},
        }

    def token_of(self, request: FakeRequest) -> str:
        return request.bearer or multipart.params(request).get("access_token", "")

    def caller(self, request: FakeRequest) -> str | None:
        """The account whose token signs the request, or None."""
        with self.lock:
            return self.tokens.get(self.token_of(request))

    def refresh_token(self, request: FakeRequest, grant_type: str) -> FakeResponse:
        """`GET /refresh_access_token?grant_type=<ig|th>_refresh_token&access_token=`: a
        new 60-day token for an unexpired one (the old one stays good until it expires)."""
        args = multipart.params(request)
        if args.get("grant_type") != grant_type:
            return self.error(100, "Unsupported grant_type")
        account = self.tokens.get(args.get("access_token", ""))
        if account is None:
            return self.error(190, "Invalid OAuth access token.", status=400)
        token = f"{self.platform}-token-{self.new_id()}"
        with self.lock:
            self.tokens[token] = account
            self.accounts[account]["access_token"] = token
        return self.ok({"access_token": token, "token_type": "bearer", "expires_in": TOKEN_TTL_S})

    # --- answers -----------------------------------------------------------------------

    def usage_headers(self, account: str | None = None, *, regain_min: int = 0) -> dict:
        headers = {
            "X-App-Usage": json.dumps(
                {"call_count": 28, "total_cputime": 15, "total_time": 20}
                if not regain_min
                else {"call_count": 100, "total_cputime": 40, "total_time": 60}
            )
        }
        if account:
            usage = {
                "type": self.buc_type,
                "call_count": 100 if regain_min else 12,
                "total_cputime": 30,
                "total_time": 25,
                "estimated_time_to_regain_access": regain_min,
            }
            headers["X-Business-Use-Case-Usage"] = json.dumps({account: [usage]})
        return headers

    def ok(self, body: dict, status: int = 200, account: str | None = None) -> FakeResponse:
        return json_response(body, status, **self.usage_headers(account))

    def error(
        self,
        code: int,
        message: str,
        *,
        status: int = 400,
        subcode: int | None = None,
        transient: bool | None = None,
        headers: dict | None = None,
    ) -> FakeResponse:
        error = {"message": message, "type": "OAuthException", "code": code}
        if subcode is not None:
            error["error_subcode"] = subcode
        if transient is not None:
            error["is_transient"] = transient
        error["fbtrace_id"] = "A" + self.new_id()
        return json_response({"error": error}, status, **(headers or self.usage_headers()))

    def throttled(self, account: str | None) -> FakeResponse:
        minutes = max(1, math.ceil(self.faults.retry_after_s / 60))
        return self.error(
            self.throttle_code,
            self.throttle_message,
            transient=True,
            headers=self.usage_headers(account, regain_min=minutes),
        )

    def server_error(self) -> FakeResponse:
        return self.error(2, "Service temporarily unavailable", status=500, transient=True)

    def unauthorized(self) -> FakeResponse:
        return self.error(190, "Invalid OAuth access token - Cannot parse access token")

    def write_fault(self, account: str) -> FakeResponse | None:
        """The faults that strike a write before anything is stored."""
        if self.faults.strikes("rate_limit"):
            return self.throttled(account)
        if self.faults.strikes("server_error_before"):
            return self.server_error()
        return None

    def after_store(self, response: FakeResponse) -> FakeResponse:
        """The faults that strike a write after it was stored."""
        if self.faults.strikes("server_error_after"):
            return self.server_error()
        if self.faults.strikes("timeout_after_accept"):
            response.delay_s = self.faults.hang_s
        return response

    # --- containers --------------------------------------------------------------------

    def processing_time(self, params: dict) -> float:
        """How long a container takes: media takes `processing_s`, several polls longer
        under `slow_processing`."""
        if not (params.get("image_url") or params.get("video_url") or params.get("children")):
            return 0.0
        seconds = self.faults.processing_s
        if self.faults.strikes("slow_processing"):
            seconds *= self.slow_factor
        return seconds

    def make_container(self, account: str, params: dict) -> Container:
        fails = bool(params.get("image_url") or params.get("video_url")) and (
            self.faults.strikes("processing_fails") or self.switched(account, "containers_fail")
        )
        container = Container(
            id=graph_id(),
            account=account,
            params=dict(params),
            created_at=self.clock(),
            fails=fails,
            # An account switched to `containers_expire`: each container expires at once.
            ttl_s=0.0 if self.switched(account, "containers_expire") else self.container_ttl_s,
            clock=lambda: self.clock(),
        )
        container.ready_at = container.created_at + self.processing_time(params)
        with self.lock:
            self.containers[container.id] = container
            self.container_creations += 1
        return container

    def publish_container(
        self, account: str, container_id: str, *, text: str, reply_to: str | None = None
    ) -> FakeResponse:
        """The irreversible call: a FINISHED container becomes a post, exactly once."""
        with self.lock:
            container = self.containers.get(container_id)
            if container is None or container.account != account:
                return self.error(100, "Media ID is not available", subcode=2207006)
            state = container.status()
            if state == IN_PROGRESS:
                return self.error(9007, "Media ID is not available", subcode=2207027)
            if state == ERROR:
                return self.error(
                    100, "Media upload has failed with error code 2207026", subcode=2207026
                )
            if state == EXPIRED:
                return self.error(100, "The media container has expired", subcode=2207008)
            if state == PUBLISHED:
                # Undocumented on Meta's side; what matters is that no second post appears.
                return self.error(100, "This media container has already been published")
            post = StoredPost(
                id=graph_id(),
                account=account,
                text=text,
                reply_to=reply_to,
                media=self.media_of(container),
                extra={"container": container.id, "params": container.params},
            )
            container.published_id = post.id
            self.store(post)
        return self.after_store(self.ok({"id": post.id}, account=account))

    def media_of(self, container: Container) -> list[str]:
        if container.children:
            children = [self.containers[child] for child in container.children]
            return [kind for child in children for kind in self.media_of(child)]
        kind = "video" if container.params.get("video_url") else "image"
        return [kind] if container.params.get(f"{kind}_url") else []

    def container_status(self, container: Container) -> dict:
        return {"status": container.status(), "id": container.id}

    def visible(self, account: str) -> list[StoredPost]:
        """The account's posts a listing shows now, newest first (listing lag applies)."""
        now = time.time()
        with self.lock:
            posts = [
                p
                for p in self.posts.values()
                if p.account == account and p.state == "published" and p.visible_at <= now
            ]
        return sorted(posts, key=lambda p: p.created_at, reverse=True)

    def published_in_window(self, account: str) -> int:
        cutoff = time.time() - 24 * 3600
        with self.lock:
            return sum(
                1
                for p in self.posts.values()
                if p.account == account and p.created_at >= cutoff and not p.reply_to
            )
