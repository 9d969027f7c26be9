"""Django's plain HTTP requests served by its WSGI handler, from a pool of threads, inside
the ASGI server.

The ASGI server is there for /mcp; the site and the API are sync Django code. Served by
Django's ASGI handler, each such request crosses between the event loop and threads three
times (sync-only middleware in a thread, the async core on the loop, the sync view in a
thread again) and starts a thread of its own. Here a request's body is read on the loop,
the whole request runs in one thread of a fixed pool, as under gunicorn's threaded WSGI
worker, and its answer comes back to the loop once (a long streamed answer is sent as it
is produced, a part at a time).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from tempfile import SpooledTemporaryFile
from typing import IO, Any

from django.conf import settings

# Threads per process: gunicorn's --threads (apps.ops.asgi_worker sets it), else this.
THREADS_ENV = "WEB_THREADS"
DEFAULT_THREADS = 8
# Answer bytes held in the thread before they are sent on (a streamed file, say).
FLUSH_BYTES = 256 * 1024

Message = dict[str, Any]
Send = Callable[[Message], Any]


class ThreadedWsgi:
    """An ASGI application (HTTP only) running ``wsgi_app`` in a pool of threads."""

    def __init__(self, wsgi_app: Callable[..., Iterable[bytes]]) -> None:
        self.wsgi_app = wsgi_app
        self._executor: ThreadPoolExecutor | None = None

    @property
    def executor(self) -> ThreadPoolExecutor:
        # Made on first use, in the worker process (never before a fork).
        if self._executor is None:
            threads = int(os.environ.get(THREADS_ENV) or DEFAULT_THREADS)
            self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="web")
        return self._executor

    async def __call__(self, scope: dict, receive: Callable, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"ThreadedWsgi serves HTTP, not {scope['type']!r}")
        # As Django's ASGI handler does: in memory up to the upload limit, then on disk.
        with SpooledTemporaryFile(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE) as body:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return  # the client left before sending its body
                body.write(message.get("body", b""))
                if not message.get("more_body"):
                    break
            body.seek(0)
            loop = asyncio.get_running_loop()
            run = _Request(self.wsgi_app, environ(scope, body), send, loop)
            for message in await loop.run_in_executor(self.executor, run):
                await send(message)


class _Request:
    """One request in its thread; returns the answer's messages not sent yet."""

    def __init__(
        self,
        wsgi_app: Callable[..., Iterable[bytes]],
        environ: dict,
        send: Send,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.wsgi_app = wsgi_app
        self.environ = environ
        self.send = send
        self.loop = loop
        self.start: Message | None = None
        self.sent = False  # the answer's start has gone to the client
        self.pending: list[Message] = []
        self.pending_bytes = 0

    def start_response(self, status: str, headers: list, exc_info: Any = None) -> Callable:
        if exc_info is not None and self.sent:
            raise exc_info[1].with_traceback(exc_info[2])  # too late for an error page
        self.start = {
            "type": "http.response.start",
            "status": int(status.split(" ", 1)[0]),
            # Stripped, as WSGI servers do (Django writes Set-Cookie values after a space).
            "headers": [
                (name.strip().lower().encode("latin-1"), value.strip().encode("latin-1"))
                for name, value in headers
            ],
        }
        return self._write

    def _write(self, chunk: bytes) -> None:
        """PEP 3333's write(): the same as a chunk of the answer's iterable."""
        if chunk:
            self.pending.append({"type": "http.response.body", "body": chunk, "more_body": True})
            self.pending_bytes += len(chunk)
            if self.pending_bytes >= FLUSH_BYTES:
                self._flush()

    def __call__(self) -> list[Message]:
        result = self.wsgi_app(self.environ, self.start_response)
        try:
            for chunk in result:
                self._write(chunk)
        finally:
            # Django's request_finished (connections back to the pool) fires here.
            close = getattr(result, "close", None)
            if close is not None:
                close()
        return [*self._taken(), {"type": "http.response.body", "body": b""}]

    def _taken(self) -> list[Message]:
        messages = [self.start] if self.start is not None else []
        self.start = None
        self.sent = self.sent or bool(messages)
        messages += self.pending
        self.pending, self.pending_bytes = [], 0
        return messages

    def _flush(self) -> None:
        """Send what is held now, from this thread, waiting until the loop has sent it."""
        for message in self._taken():
            asyncio.run_coroutine_threadsafe(self.send(message), self.loop).result()


def environ(scope: dict, body: IO[bytes]) -> dict:
    """The WSGI environ of an ASGI HTTP scope (PEP 3333: strings are latin-1 of the bytes)."""
    script_name = scope.get("root_path", "").encode().decode("latin-1")
    path_info = scope["path"].encode().decode("latin-1")
    if script_name and path_info.startswith(script_name):
        path_info = path_info[len(script_name) :]
    server = scope.get("server") or ("localhost", 80)
    result = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": script_name,
        "PATH_INFO": path_info,
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "SERVER_NAME": server[0],
        "SERVER_PORT": str(server[1] or 80),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": body,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if scope.get("client"):
        result["REMOTE_ADDR"] = scope["client"][0]
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").upper().replace("-", "_")
        if name not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            name = f"HTTP_{name}"
        value = raw_value.decode("latin-1")
        # Repeated headers are joined, as a WSGI server does.
        result[name] = f"{result[name]},{value}" if name in result else value
    return result
