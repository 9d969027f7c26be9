"""A cap on the size of an MCP request body, enforced while it streams in.

A declared Content-Length over MCP_MAX_BODY_BYTES is refused before anything is read; a body
sent without one (chunked) is read up to the cap and refused the moment it passes it. Under
the cap, the body the middleware read is handed to the MCP layer as it came.
"""

from __future__ import annotations

from django.conf import settings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from apps.common.envelope import envelope


def _too_large(limit: int) -> JSONResponse:
    return JSONResponse(
        envelope(
            "PAYLOAD_TOO_LARGE",
            f"MCP request bodies are limited to {limit} bytes.",
            {"limit_bytes": limit},
        ),
        status_code=413,
    )


class BodyLimitMiddleware:
    """413 PAYLOAD_TOO_LARGE (the API's envelope) for a body over MCP_MAX_BODY_BYTES."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = settings.MCP_MAX_BODY_BYTES
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await _too_large(limit)(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > limit:
                await _too_large(limit)(scope, receive, send)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(b"".join(chunks), receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the buffered body once, then waits on the real one (for the
    client's disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
