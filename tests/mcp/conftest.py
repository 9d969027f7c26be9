"""The MCP endpoint served as in production (`uvicorn config.asgi:application`) in a child
process on a free 127.0.0.1 port, against the test database, and reached through the MCP
client library."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from django.conf import settings
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from tests.factories import SocialAccountFactory
from tests.processes import test_database_url

ROOT = Path(settings.BASE_DIR)
START_TIMEOUT_S = 60


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def mcp_url(django_db_setup, django_db_blocker, tmp_path_factory):
    """The endpoint's URL; the server runs for the module's tests."""
    with django_db_blocker.unblock():
        database_url = test_database_url()
    port = _free_port()
    log = tmp_path_factory.mktemp("mcp") / "uvicorn.log"
    environment = {
        **os.environ,
        "DATABASE_URL": database_url,
        "API_THROTTLE_RATE": "",
        "DB_CONN_MAX_AGE": "0",
    }
    with log.open("w") as out:
        proc = subprocess.Popen(  # noqa: S603 - fixed argv
            [sys.executable, "-m", "uvicorn", "config.asgi:application"]
            + ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
            cwd=ROOT,
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"uvicorn exited {proc.returncode}:\n{log.read_text()}")
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"uvicorn did not start:\n{log.read_text()}")
            time.sleep(0.1)
        yield f"{base}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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
