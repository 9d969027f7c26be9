"""The MCP endpoint served as in production (gunicorn with the uvicorn worker class serving
`config.asgi:application`, connections pooled) in a child process on a free 127.0.0.1 port,
against the test database, and reached through the MCP client library."""

import os

import anyio
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from apps.common.processes import ChildProcess, free_port, gunicorn_argv, web_environment
from tests.factories import SocialAccountFactory
from tests.processes import test_database_url

START_TIMEOUT_S = 60


@pytest.fixture(scope="module")
def mcp_url(django_db_setup, django_db_blocker, tmp_path_factory):
    """The endpoint's URL; the server runs for the module's tests."""
    with django_db_blocker.unblock():
        database_url = test_database_url()
    port = free_port()
    log = tmp_path_factory.mktemp("mcp") / "web.log"
    environment = {
        **os.environ,
        "DATABASE_URL": database_url,
        "API_THROTTLE_RATE": "",
        "LOG_LEVEL": "WARNING",
    }
    server = ChildProcess(
        gunicorn_argv(f"127.0.0.1:{port}", "--workers", "1", "--log-level", "warning"),
        env=web_environment(environment),
        log=log,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        if not server.wait_http_ok(f"{base}/healthz", timeout=START_TIMEOUT_S, interval=0.1):
            if server.poll() is not None:
                raise AssertionError(f"gunicorn exited {server.poll()}:\n{server.output()}")
            raise AssertionError(f"gunicorn did not start:\n{server.output()}")
        yield f"{base}/mcp"
    finally:
        server.stop(timeout=15)


async def _session(url: str, token: str, work):
    with anyio.fail_after(30):
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)


@pytest.fixture
def mcp(mcp_url, workspace_a, make_token):
    """call(tool, token=..., **arguments) -> CallToolResult, through a fresh client session
    (default token: workspace A with every scope)."""
    default = make_token(workspace_a).clear

    def call(tool: str, *, token: str | None = None, **arguments) -> CallToolResult:
        async def work(session: ClientSession) -> CallToolResult:
            return await session.call_tool(tool, arguments)

        return anyio.run(_session, mcp_url, token or default, work)

    call.url = mcp_url
    call.session = lambda token, work: anyio.run(_session, mcp_url, token, work)
    return call


@pytest.fixture
def sandy(workspace_a):
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="sandy")


@pytest.fixture
def sandra(workspace_a):
    return SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="sandra")
