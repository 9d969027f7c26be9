"""What every platform fake is: a request router over one shared store of what it published."""

from __future__ import annotations

import json
import random
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import overload
from urllib.parse import parse_qs

from loadtest.platform_fakes.faults import FaultPlan


@dataclass
class FakeRequest:
    method: str
    host: str  # the platform host the adapter addressed (graph.facebook.com)
    path: str  # the path on that host, starting with "/"
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-cased names
    body: bytes = b""

    def json(self) -> dict:
        try:
            value = json.loads(self.body or b"{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def form(self) -> dict[str, str]:
        """A urlencoded body (or the query string), one value per name."""
        if self.headers.get("content-type", "").startswith("multipart/"):
            return {}
        parsed = parse_qs(self.body.decode("utf-8", "replace"), keep_blank_values=True)
        return {k: v[-1] for k, v in parsed.items()}

    @overload
    def arg(self, name: str, default: str) -> str: ...

    @overload
    def arg(self, name: str, default: None = None) -> str | None: ...

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    @property
    def bearer(self) -> str:
        keyword, _, token = self.headers.get("authorization", "").partition(" ")
        return token.strip() if keyword.lower() in ("bearer", "oauth") else ""


@dataclass
class FakeResponse:
    status: int = 200
    body: bytes | str | dict | list | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # Seconds to hold the answer (a `timeout_after_accept` sleeps past the client timeout).
    delay_s: float = 0.0
    # Close the connection without answering (a dropped upload).
    drop: bool = False

    def encoded(self) -> tuple[bytes, str]:
        if self.body is None:
            return b"", "application/json"
        if isinstance(self.body, dict | list):
            return json.dumps(self.body).encode(), "application/json"
        if isinstance(self.body, str):
            return self.body.encode(), "text/plain; charset=utf-8"
        return self.body, "application/octet-stream"


# `status` is positional-only so that `**headers` (a fake's rate-limit headers) can never fill it.
def json_response(body: dict | list, status: int = 200, /, **headers: str) -> FakeResponse:
    return FakeResponse(status=status, body=body, headers=dict(headers))


@dataclass
class StoredPost:
    """One post as the platform holds it: the witness that counts duplicates."""

    id: str
    account: str  # the platform's id of the account that posted
    text: str
    created_at: float = field(default_factory=time.time)
    # Visible in listings/lookups from this time on (listing lag).
    visible_at: float = field(default_factory=time.time)
    reply_to: str | None = None
    media: list[str] = field(default_factory=list)
    state: str = "published"  # or "processing", "failed" for asynchronous platforms
    idempotency_key: str | None = None
    extra: dict = field(default_factory=dict)


Route = tuple[str, re.Pattern, Callable[..., FakeResponse]]


class PlatformFake:
    """Base of a platform fake. Subclasses set `platform` and `hosts` and declare routes
    with `route(method, path_regex)` on handler methods taking (request, **groups)."""

    platform: str = ""
    hosts: tuple[str, ...] = ()
    # Behaviours one account can be switched to (`switch`), beside the seeded faults that
    # strike any call: what a platform does to some accounts only (Reddit's spam filter).
    account_behaviours: tuple[str, ...] = ()

    def __init__(self, faults: FaultPlan | None = None) -> None:
        self.faults = faults or FaultPlan.calm()
        self.lock = threading.RLock()
        self.posts: dict[str, StoredPost] = {}
        # Posts deleted through the platform's API (the live validation's clean-up), by id.
        self.deleted: dict[str, StoredPost] = {}
        self.accounts: dict[str, dict] = {}  # remote id -> {"access_token", "refresh_token", ...}
        self.calls: list[tuple[str, str]] = []  # (method, path) in arrival order
        self.switches: dict[str, set[str]] = {}  # account id -> behaviours switched on
        self._routes: list[Route] = []
        for name in dir(type(self)):
            handler = getattr(self, name)
            spec = getattr(handler, "_fake_route", None)
            if spec:
                method, pattern = spec
                self._routes.append((method, re.compile(pattern + r"\Z"), handler))

    # --- what the soak and tests use ------------------------------------------------------

    def new_account(self, handle: str) -> dict:
        """Open an account on the platform; returns what our SocialAccount stores:
        {"remote_id", "handle", "credentials": {...}, "settings": {...}}."""
        raise NotImplementedError

    def sample_content(self, rng: random.Random, marker: str) -> dict:
        """What the soak posts here, its text carrying `marker`:
        {"segments": [{"text", "media": ["image" | "video", ...]}, ...], "settings": {...}}."""
        raise NotImplementedError

    def switch(self, account: str, behaviour: str, on: bool = True) -> None:
        """Switch one of `account_behaviours` on (or off) for one account."""
        if behaviour not in self.account_behaviours:
            raise ValueError(
                f"The {self.platform} fake has no account behaviour {behaviour!r} "
                f"(it has: {', '.join(self.account_behaviours) or 'none'})."
            )
        with self.lock:
            switched = self.switches.setdefault(str(account), set())
            (switched.add if on else switched.discard)(behaviour)

    def switched(self, account: str, behaviour: str) -> bool:
        with self.lock:
            return behaviour in self.switches.get(str(account), ())

    def published(self) -> list[StoredPost]:
        """Every post that exists on the platform (any state but failed)."""
        with self.lock:
            return [p for p in self.posts.values() if p.state != "failed"]

    # --- serving ---------------------------------------------------------------------------

    def handle(self, request: FakeRequest) -> FakeResponse:
        with self.lock:
            self.calls.append((request.method, request.path))
        for method, pattern, handler in self._routes:
            if method != request.method:
                continue
            match = pattern.match(request.path)
            if match:
                return handler(request, **match.groupdict())
        return json_response({"error": "not_found", "path": request.path}, 404)

    def remove(self, post_id: str) -> StoredPost | None:
        """Delete a post: it leaves every listing and lookup, and is kept in `deleted`."""
        with self.lock:
            post = self.posts.pop(post_id, None)
            if post is not None:
                self.deleted[post_id] = post
        return post

    def new_id(self) -> str:
        return uuid.uuid4().hex[:16]

    def store(self, post: StoredPost) -> StoredPost:
        with self.lock:
            if self.faults.strikes("listing_lag"):
                post.visible_at = time.time() + self.faults.listing_lag_s
            self.posts[post.id] = post
        return post


def route(method: str, pattern: str):
    """Declare a handler for `method` on paths matching `pattern` (named groups become
    keyword arguments)."""

    def decorate(func):
        func._fake_route = (method, pattern)
        return func

    return decorate
