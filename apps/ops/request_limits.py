"""Limits every request meets before Django sees it, in the ASGI web process.

The site and the API are Django's WSGI handler run by a2wsgi in a pool of threads; the body
streams to Django as it arrives (a2wsgi hands each piece over when Django reads it), so
nothing here spools it to memory or disk. This middleware sits in front of a2wsgi:

- **A ceiling per path.** Each path has a ceiling for its body (the media uploads theirs,
  the rest DATA_UPLOAD_MAX_MEMORY_SIZE; see ``Ceilings``). A declared Content-Length over
  it is answered 413 before a byte of the body is read (the application is not called, so
  the server never asks the client to go on); a body without one (chunked) is counted as it
  streams and cut off the moment it passes the ceiling.
- **A body-read timeout.** Waiting for the next piece of a body is bounded by
  WEB_BODY_IDLE_TIMEOUT_S, and a whole body outside the upload paths by WEB_BODY_TIMEOUT_S:
  a client that stops sending gets 408 instead of holding a thread.
- **Header hygiene.** Header names with ``_`` are dropped, as gunicorn does: in the WSGI
  environ ``X_Forwarded_For`` and ``X-Forwarded-For`` are the same key, and a client could
  otherwise add its own entry after the trusted proxy's. Repeated ``Cookie`` headers (HTTP/2
  sends one per cookie) are joined with ``; ``, the one separator a cookie header knows.

A body refused while it streams reaches Django as ``BodyNotRead`` (a SuspiciousOperation:
Django answers 400 and logs it on django.security); whatever Django answers is replaced by
the 413 or 408, which closes the connection.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.urls import Resolver404, get_resolver
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Threads per process: gunicorn's --threads (apps.ops.asgi_worker sets it), else this.
THREADS_ENV = "WEB_THREADS"
DEFAULT_THREADS = 8
# Room for the multipart boundaries and the small form fields beside an uploaded file.
MULTIPART_OVERHEAD_BYTES = 64 * 1024


def web_threads() -> int:
    return int(os.environ.get(THREADS_ENV) or DEFAULT_THREADS)


class BodyNotRead(SuspiciousOperation):
    """The body was refused while it streamed in: too large, too slow, or the client left."""


@dataclass(frozen=True)
class Ceiling:
    """The most a request body may be on some paths, and whether it is an upload (an upload
    may take as long as it keeps arriving; any other body has WEB_BODY_TIMEOUT_S)."""

    name: str
    max_bytes: int | None  # None: no ceiling
    upload: bool = False


class Ceilings:
    """The ceiling of each path, by the name of the view it resolves to.

    ``by_view`` maps a view name (``"v1:media-list"``, ``"media-upload"``) to a function of
    the settings giving its Ceiling (read at each request, so a setting's change holds);
    every other path, and a path that resolves to nothing, has ``rest``.
    """

    def __init__(self, by_view: Mapping[str, Callable[[], Ceiling]], rest: Callable[[], Ceiling]):
        self.by_view = dict(by_view)
        self.rest = rest

    def for_path(self, path: str) -> Ceiling:
        try:
            match = get_resolver().resolve(path)
        except Resolver404:
            return self.rest()
        found = self.by_view.get(match.view_name)
        return found() if found is not None else self.rest()


def rest_ceiling() -> Ceiling:
    """What Django itself accepts in a form or JSON body (the API's JSON parser too)."""
    return Ceiling("request", settings.DATA_UPLOAD_MAX_MEMORY_SIZE)


def media_ceiling() -> Ceiling:
    """A media upload: the largest file accepted, with its multipart wrapping."""
    return Ceiling("upload", settings.MEDIA_MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD_BYTES, True)


def clean_headers(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The request's headers without names holding ``_``, its cookies in one header."""
    kept: list[tuple[bytes, bytes]] = []
    cookies: list[bytes] = []
    for name, value in headers:
        if b"_" in name:
            continue
        if name.lower() == b"cookie":
            cookies.append(value)
            continue
        kept.append((name, value))
    if cookies:
        kept.append((b"cookie", b"; ".join(cookies)))
    return kept


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


async def _answer(send: Send, scope: Scope, status: int, code: str, message: str, **details):
    """The refusal: the API's error envelope under /api/ and /sandbox/, plain text elsewhere;
    the connection closes (the rest of the body is never read)."""
    path = scope.get("path", "")
    if path.startswith(("/api/", "/sandbox/")):
        body = json.dumps({"error": {"code": code, "message": message, "details": details}})
        content_type = b"application/json"
    else:
        body = message + "\n"
        content_type = b"text/plain; charset=utf-8"
    data = body.encode()
    headers = [
        (b"content-type", content_type),
        (b"content-length", str(len(data)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


class _Body:
    """The request's receive, counted against the ceiling and timed."""

    def __init__(self, receive: Receive, ceiling: Ceiling, *, idle_s: float, total_s: float):
        self._receive = receive
        self.ceiling = ceiling
        self.idle_s = idle_s
        self.deadline = None if ceiling.upload else time.monotonic() + total_s
        self.size = 0
        self.done = False
        # (status, code, message) once the body is refused.
        self.refused: tuple[int, str, str] | None = None

    def _refuse(self, status: int, code: str, message: str) -> BodyNotRead:
        self.refused = (status, code, message)
        return BodyNotRead(message)

    async def receive(self) -> Message:
        if self.refused is not None:
            raise BodyNotRead(self.refused[2])
        if self.done:
            # The body is whole: the only thing left to hear is the client leaving.
            return await self._receive()
        wait = self.idle_s
        if self.deadline is not None:
            wait = min(wait, self.deadline - time.monotonic())
        try:
            async with asyncio.timeout(max(wait, 0.0)):
                message = await self._receive()
        except TimeoutError:
            raise self._refuse(
                408, "REQUEST_TIMEOUT", "The request body did not arrive in time."
            ) from None
        if message["type"] == "http.disconnect":
            self.refused = (0, "", "The client left before its body was read.")
            raise BodyNotRead(self.refused[2])
        self.size += len(message.get("body", b""))
        limit = self.ceiling.max_bytes
        if limit is not None and self.size > limit:
            raise self._refuse(
                413, "PAYLOAD_TOO_LARGE", f"Request bodies here are limited to {limit} bytes."
            )
        self.done = not message.get("more_body", False)
        return message


class RequestLimits:
    """The ASGI middleware of the module docstring, in front of ``app``."""

    def __init__(self, app: ASGIApp, ceilings: Ceilings) -> None:
        self.app = app
        self.ceilings = ceilings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = clean_headers(scope.get("headers") or [])
        scope = {**scope, "headers": headers}
        declared = _header(headers, b"content-length")
        chunked = _header(headers, b"transfer-encoding") is not None
        if declared is None and not chunked or declared == b"0":
            await self.app(scope, receive, send)  # no body: nothing to guard
            return
        ceiling = self.ceilings.for_path(scope.get("path", ""))
        limit = ceiling.max_bytes
        if declared is not None and (
            not declared.isdigit() or (limit is not None and int(declared) > limit)
        ):
            await _answer(
                send,
                scope,
                413,
                "PAYLOAD_TOO_LARGE",
                f"Request bodies here are limited to {limit} bytes.",
                limit_bytes=limit,
            )
            return
        body = _Body(
            receive,
            ceiling,
            idle_s=settings.WEB_BODY_IDLE_TIMEOUT_S,
            total_s=settings.WEB_BODY_TIMEOUT_S,
        )
        started = False

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if body.refused is not None and not started:
                return  # Django's answer to a refused body: ours goes instead
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, body.receive, guarded_send)
        except BodyNotRead:
            # Django turns it into a 400; an application that lets it out answered nothing.
            if body.refused is None:
                raise
        if body.refused is not None and not started and body.refused[0]:
            status, code, message = body.refused
            details = {"limit_bytes": limit} if status == 413 else {}
            await _answer(send, scope, status, code, message, **details)
