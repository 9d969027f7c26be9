"""The MCP endpoint as an ASGI application, and the dispatcher that serves it beside
Django (``config.asgi``).

Stateless streamable HTTP with JSON responses: each POST carries one JSON-RPC message and
its token and gets one JSON answer; no session lives in a process, so any number of
processes on any number of hosts can serve /mcp behind a plain load balancer.
"""

from __future__ import annotations

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from apps.api.mcp.auth import TokenAuthMiddleware
from apps.api.mcp.body_limit import BodyLimitMiddleware
from apps.api.mcp.tools import server

MCP_PATH = "/mcp"


def mcp_application() -> ASGIApp:
    """The /mcp endpoint (one per process: its lifespan runs the SDK's task group)."""
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        # The Host and Origin checks are TokenAuthMiddleware's, against ALLOWED_HOSTS.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    # The body is read (up to its cap) only once the token is accepted.
    return TokenAuthMiddleware(BodyLimitMiddleware(app))


def with_mcp(django_app: ASGIApp) -> ASGIApp:
    """An ASGI application that sends /mcp to the MCP endpoint and everything else to
    Django. Lifespan events go to the MCP endpoint (Django's handler refuses them)."""
    mcp_app = mcp_application()

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "lifespan" or path == MCP_PATH or path.startswith(MCP_PATH + "/"):
            await mcp_app(scope, receive, send)
        else:
            await django_app(scope, receive, send)

    return application
