"""Who may talk to the MCP endpoint: a live API token with the ``mcp`` scope, sent as
``Authorization: Bearer <token>`` to a host Django accepts.

The token is read by the API's own authentication (``api_token_authenticate``), so it
holds only the scopes its creator's current role allows: a demoted admin's token is worth
what their new role is here too, and a removed person's token stops.

Refusals answer before the MCP layer, as JSON in the API's envelope: 400 DISALLOWED_HOST,
401 (no token, a malformed header, an unknown or revoked token, or one whose creator
left the workspace) with
``WWW-Authenticate: Bearer``, 403 INSUFFICIENT_SCOPE. The accepted token rides on the
request's ASGI ``state`` (``token_from_state``) for the tools, which check their own scopes.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread
from django.conf import settings
from django.db import close_old_connections
from django.http.request import split_domain_port, validate_host
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from apps.accounts.models import ApiToken
from apps.accounts.services import api_token_authenticate
from apps.common.envelope import envelope

MCP_SCOPE = ApiToken.Scope.MCP
STATE_KEY = "api_token"


def token_from_state(state: Any) -> ApiToken:
    """The token the middleware accepted for this request (a Starlette ``State``)."""
    return getattr(state, STATE_KEY)


def _allowed(host: str) -> bool:
    """Django's own ALLOWED_HOSTS rule (what the rest of the site enforces): the MCP
    endpoint is reached around Django's middleware, and a Host check is what stops DNS
    rebinding."""
    domain, _port = split_domain_port(host)
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return bool(domain) and validate_host(domain, allowed)


def _authenticate(clear: str) -> ApiToken | None:
    # Runs in a worker thread: close connections past their age, as Django does per request.
    close_old_connections()
    try:
        return api_token_authenticate(clear)
    finally:
        close_old_connections()


def _refusal(status: int, code: str, message: str, details: dict | None = None) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="mcp"'} if status == 401 else None
    return JSONResponse(envelope(code, message, details), status_code=status, headers=headers)


class TokenAuthMiddleware:
    """Authenticates each HTTP request to the wrapped MCP application (the endpoint is
    stateless: every request carries its token, and a revoked token stops at once)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        outcome = await self._check(Headers(scope=scope))
        if isinstance(outcome, JSONResponse):
            await outcome(scope, receive, send)
            return
        scope.setdefault("state", {})[STATE_KEY] = outcome
        await self.app(scope, receive, send)

    async def _check(self, headers: Headers) -> ApiToken | JSONResponse:
        """The accepted token, or the refusal to send."""
        origin = headers.get("origin")
        if not _allowed(headers.get("host", "")) or (
            origin and not _allowed(urlsplit(origin).netloc)
        ):
            return _refusal(400, "DISALLOWED_HOST", "This host or origin is not allowed.")
        header = headers.get("authorization", "")
        if not header:
            return _refusal(
                401,
                "UNAUTHENTICATED",
                "Send 'Authorization: Bearer <token>' with an API token that has the mcp scope.",
            )
        keyword, _, clear = header.partition(" ")
        if keyword.lower() != "bearer" or not clear.strip():
            return _refusal(401, "INVALID_AUTH_HEADER", "Use 'Authorization: Bearer <token>'.")
        token = await anyio.to_thread.run_sync(_authenticate, clear.strip())
        if token is None:
            return _refusal(
                401,
                "INVALID_TOKEN",
                "The token is unknown, has been revoked, or its creator no longer has access "
                "to its workspace.",
            )
        if not token.has_scope(MCP_SCOPE):
            return _refusal(
                403,
                "INSUFFICIENT_SCOPE",
                f"This token lacks the '{MCP_SCOPE}' scope; create one with it to use MCP.",
                {"required": [MCP_SCOPE], "token_scopes": list(token.scopes)},
            )
        return token
