"""Reaching a receiver without being turned against our own network (SSRF).

An endpoint URL is checked twice through the shared outbound guard (apps.common.outbound):
when it is saved (scheme, and every address its host resolves to) and again on every
delivery, where the connection goes to an address checked at that moment while the
request still names the original host, so DNS rebinding cannot redirect it.

WEBHOOK_ALLOW_PRIVATE_TARGETS lets a self-hosted install deliver on its own network (the
metadata addresses stay refused); WEBHOOK_ALLOW_HTTP allows plain http:// URLs. A local
install (DEBUG on) may try webhooks against a receiver on the same machine or network:
there an https URL may reach private addresses, and an http URL is allowed only to them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx
from django.conf import settings

from apps.common import outbound, send_guard
from apps.common.errors import ValidationFailed
from apps.webhooks.constants import MAX_RESPONSE_READ_BYTES, USER_AGENT


class ForbiddenTarget(ValidationFailed):
    """The URL may not receive webhooks (scheme, or an address it resolves to)."""

    code = "WEBHOOK_URL_FORBIDDEN"

    @classmethod
    def from_guard(cls, exc: outbound.ForbiddenTarget) -> ForbiddenTarget:
        return cls(
            exc.message,
            code="WEBHOOK_URL_UNRESOLVABLE" if exc.unresolvable else None,
            details={"url": [exc.message]},
        )


def policy(url: str = "") -> outbound.Policy:
    """The guard's rules for a URL as this install's settings set them (read at each
    call). With DEBUG on, a plain http:// URL (not allowed otherwise) may go to loopback
    and private addresses only; deliveries follow no redirect, so the URL's scheme is the
    only one a request uses."""
    local = settings.DEBUG
    if local and not settings.WEBHOOK_ALLOW_HTTP and url.lower().startswith("http://"):
        return outbound.Policy(allow_http=True, allow_private=True, private_only=True)
    return outbound.Policy(
        allow_http=settings.WEBHOOK_ALLOW_HTTP,
        allow_private=settings.WEBHOOK_ALLOW_PRIVATE_TARGETS or local,
    )


def check_url(url: str) -> str:
    """Return the URL if webhooks may be sent to it now; ForbiddenTarget otherwise."""
    try:
        return outbound.check_url(url, policy(url))
    except outbound.ForbiddenTarget as exc:
        raise ForbiddenTarget.from_guard(exc) from exc


@dataclass(frozen=True)
class Response:
    status_code: int
    headers: httpx.Headers
    body: bytes
    latency_ms: int


def post(url: str, *, body: bytes, headers: dict[str, str]) -> Response:
    """POST body to url through the SSRF guard, with short timeouts, no redirects, and at
    most MAX_RESPONSE_READ_BYTES of the answer read. Raises ForbiddenTarget, or
    httpx.HTTPError on a network failure or timeout."""
    try:
        return _post(url, body=body, headers=headers)
    except outbound.ForbiddenTarget as exc:
        raise ForbiddenTarget.from_guard(exc) from exc


def _post(url: str, *, body: bytes, headers: dict[str, str]) -> Response:
    timeout_s = settings.WEBHOOK_TIMEOUT_S
    started = time.monotonic()
    with (
        httpx.Client(
            transport=outbound.GuardedTransport(policy(url)),
            timeout=httpx.Timeout(timeout_s),
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"},
            # Right before it leaves: a worker that no longer holds the job sends nothing
            # (the one that took it over sends; the receiver would get it twice).
            event_hooks={"request": [_send_guard]},
        ) as client,
        client.stream("POST", url, content=body, headers=headers) as response,
    ):
        latency_ms = int((time.monotonic() - started) * 1000)
        chunks: list[bytes] = []
        read = 0
        # A receiver that trickles its body is cut off at the read cap or the deadline.
        deadline = started + 2 * timeout_s
        for chunk in response.iter_raw():
            chunks.append(chunk)
            read += len(chunk)
            if read >= MAX_RESPONSE_READ_BYTES or time.monotonic() > deadline:
                break
        return Response(
            status_code=response.status_code,
            headers=response.headers,
            body=b"".join(chunks)[:MAX_RESPONSE_READ_BYTES],
            latency_ms=latency_ms,
        )


def _send_guard(request: httpx.Request) -> None:
    send_guard.check()
