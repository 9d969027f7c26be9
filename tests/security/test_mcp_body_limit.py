"""/mcp refuses a body over MCP_MAX_BODY_BYTES with 413 in the API's envelope: from its
Content-Length before reading it, or while it streams in without one, never buffering past
the cap. Bodies under it reach the MCP layer unchanged."""

import asyncio

import httpx
import pytest

from apps.api.mcp.app import mcp_application
from apps.api.mcp.body_limit import BodyLimitMiddleware

LIMIT = 2048


@pytest.fixture(autouse=True)
def _limit(settings):
    settings.MCP_MAX_BODY_BYTES = LIMIT


class Recorder:
    """The inner application: records the body it was given."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope, receive, send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.bodies.append(body)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def call(app, scope_headers: list, messages: list[dict]) -> tuple[int, bytes, int]:
    """Run one request through `app`; returns (status, body, messages the app read)."""
    sent: list[dict] = []
    pending = list(messages)
    read = 0

    async def receive():
        nonlocal read
        read += 1
        return pending.pop(0) if pending else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": scope_headers}
    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body, read


def test_a_declared_length_over_the_cap_is_refused_before_reading():
    inner = Recorder()
    status, body, read = call(
        BodyLimitMiddleware(inner),
        [(b"content-length", str(LIMIT + 1).encode())],
        [{"type": "http.request", "body": b"x" * (LIMIT + 1), "more_body": False}],
    )
    assert status == 413
    assert b'"code":"PAYLOAD_TOO_LARGE"' in body
    assert read == 0 and inner.bodies == []


def test_a_chunked_body_is_cut_off_once_it_passes_the_cap():
    inner = Recorder()
    chunks = [{"type": "http.request", "body": b"x" * 1000, "more_body": True} for _ in range(50)]
    status, _, read = call(BodyLimitMiddleware(inner), [], chunks)
    assert status == 413
    assert read == 3  # 3,000 bytes read of 50,000: it stopped at the cap
    assert inner.bodies == []


def test_a_body_under_the_cap_reaches_the_endpoint_whole():
    inner = Recorder()
    chunks = [
        {"type": "http.request", "body": b'{"jsonrpc":', "more_body": True},
        {"type": "http.request", "body": b'"2.0"}', "more_body": False},
    ]
    status, body, _ = call(BodyLimitMiddleware(inner), [], chunks)
    assert (status, body) == (200, b"ok")
    assert inner.bodies == [b'{"jsonrpc":"2.0"}']


@pytest.mark.django_db(transaction=True)
def test_the_endpoint_refuses_an_oversized_body_from_a_live_token(workspace_a, make_token):
    token = make_token(workspace_a, scopes=["mcp"]).clear

    async def post():
        transport = httpx.ASGITransport(app=mcp_application())
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as c:
            return await c.post(
                "/mcp",
                content=b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "'
                + b"x" * 5000
                + b'"}',
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )

    response = asyncio.run(post())
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert response.json()["error"]["details"] == {"limit_bytes": LIMIT}
