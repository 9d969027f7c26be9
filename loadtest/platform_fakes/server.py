"""The HTTP server in front of the platform fakes: `<base>/<host>/<path>` goes to the fake
that owns `<host>`."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol
from urllib.parse import parse_qs, urlsplit

from loadtest.platform_fakes.base import FakeRequest, FakeResponse, PlatformFake

_HOST = "127.0.0.1"


class Serves(Protocol):
    """What a host's requests go to: its platform fake, or the fake seen through a fault the
    soak plays itself (a hang)."""

    @property
    def platform(self) -> str: ...

    def handle(self, request: FakeRequest) -> FakeResponse: ...


class FakeServer:
    """Serves `fakes` on 127.0.0.1 at a free port; `base_url` is what
    PROVIDER_API_REDIRECT is set to."""

    def __init__(self, fakes: list[PlatformFake], *, port: int = 0) -> None:
        self.fakes: dict[str, Serves] = {host: fake for fake in fakes for host in fake.hosts}
        self.by_platform = {fake.platform: fake for fake in fakes}
        self._httpd = ThreadingHTTPServer((_HOST, port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{_HOST}:{self._httpd.server_port}"

    def start(self) -> FakeServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                host, _, rest = parts.path.lstrip("/").partition("/")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                fake = server.fakes.get(host)
                request = FakeRequest(
                    method=self.command,
                    host=host,
                    path="/" + rest,
                    query=parse_qs(parts.query, keep_blank_values=True),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                if fake is None:
                    self.send_error(502, f"No fake serves {host}")
                    return
                response = fake.handle(request)
                if response.delay_s:
                    time.sleep(response.delay_s)
                if response.drop:
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                payload, content_type = response.encoded()
                try:
                    self.send_response(response.status)
                    headers = {"Content-Type": content_type, **response.headers}
                    for name, value in headers.items():
                        self.send_header(name, str(value))
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

        return Handler
