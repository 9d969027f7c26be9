"""The gunicorn worker class that serves the ASGI application (`config.asgi`, Django plus
the MCP endpoint at /mcp) with uvicorn, keeping what the WSGI worker gave:

- the same access line as `deploy/gunicorn.conf.py`'s format (client, request line,
  status, bytes, milliseconds, referer, user agent), written to gunicorn's access log with
  secrets redacted (`apps.ops.access_log`);
- the client address is the socket's peer, as under gunicorn's WSGI workers: forwarded
  headers are never trusted here (the application reads X-Forwarded-For itself, as far as
  TRUSTED_PROXY_COUNT says);
- the scheme follows X-Forwarded-Proto only from the proxies in FORWARDED_ALLOW_IPS, as
  gunicorn's `forwarded_allow_ips` does.

    gunicorn -c deploy/gunicorn.conf.py             # ASGI, this worker (the default)
"""

from __future__ import annotations

import ipaddress
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from uvicorn_worker import UvicornWorker

from apps.ops.access_log import redact_request_line, redact_url
from apps.ops.request_limits import THREADS_ENV


class AsgiWorker(UvicornWorker):
    # The application served, set by gunicorn's Worker.load_wsgi (an ASGI one here,
    # whatever gunicorn calls it).
    wsgi: Callable[..., Awaitable[None]]

    CONFIG_KWARGS = {
        "loop": "auto",
        "http": "auto",
        "lifespan": "on",  # the MCP endpoint runs its task group for the process's life
        "access_log": False,  # written by AccessLog below, in our format
        "proxy_headers": False,  # the peer stays the client (see the module docstring)
        "server_header": False,
    }

    def load_wsgi(self) -> None:
        # The site's thread pool (a2wsgi, config.asgi) is gunicorn's --threads, as under
        # the threaded WSGI worker.
        os.environ[THREADS_ENV] = str(self.cfg.threads)
        super().load_wsgi()
        trusted = _trusted_proxies(self.cfg.forwarded_allow_ips)
        self.wsgi = AccessLog(TrustedScheme(self.wsgi, trusted), self.log)


def _trusted_proxies(setting: Any) -> list | None:
    """FORWARDED_ALLOW_IPS as networks; None for "*" (every peer)."""
    entries = setting if isinstance(setting, list | tuple) else str(setting or "").split(",")
    entries = [entry.strip() for entry in entries if entry.strip()]
    if "*" in entries:
        return None
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            continue  # a Unix socket path or a name: gunicorn ignores those too
    return networks


class TrustedScheme:
    """https when a trusted proxy says so in X-Forwarded-Proto."""

    def __init__(self, app, trusted: list | None) -> None:
        self.app = app
        self.trusted = trusted

    def _is_trusted(self, peer: str) -> bool:
        if self.trusted is None:
            return True
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return False
        return any(address in network for network in self.trusted)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] in ("http", "websocket") and scope.get("client"):
            headers = dict(scope.get("headers") or [])
            proto = headers.get(b"x-forwarded-proto", b"").decode("latin-1").strip().lower()
            if proto in ("http", "https") and self._is_trusted(scope["client"][0]):
                secure = proto == "https"
                if scope["type"] == "websocket":
                    scope = {**scope, "scheme": "wss" if secure else "ws"}
                else:
                    scope = {**scope, "scheme": proto}
        await self.app(scope, receive, send)


class AccessLog:
    """One access line per HTTP request once its response ends, in the format of
    `deploy/gunicorn.conf.py`: `%(h)s "%(r)s" %(s)s %(b)s %(M)sms "%(f)s" "%(a)s"`."""

    def __init__(self, app, log) -> None:
        self.app = app
        self.log = log

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        answer = {"status": 500, "bytes": 0}

        async def sending(message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
            elif message["type"] == "http.response.body":
                answer["bytes"] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self._write(scope, answer, time.perf_counter() - started)

    def _write(self, scope, answer: dict, elapsed_s: float) -> None:
        headers = dict(scope.get("headers") or [])
        target = scope.get("raw_path", b"").decode("latin-1") or scope.get("path", "")
        if scope.get("query_string"):
            target += "?" + scope["query_string"].decode("latin-1")
        line = f"{scope['method']} {target} HTTP/{scope.get('http_version', '1.1')}"
        client = (scope.get("client") or ("-",))[0]
        referer = redact_url(headers.get(b"referer", b"-").decode("latin-1"))
        agent = headers.get(b"user-agent", b"-").decode("latin-1")
        self.log.access_log.info(
            '%s "%s" %s %s %sms "%s" "%s"',
            client,
            redact_request_line(line),
            answer["status"],
            answer["bytes"] or "-",
            round(elapsed_s * 1000),
            referer,
            agent,
        )
