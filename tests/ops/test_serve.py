"""`manage.py serve`, the command `make run` runs: by default gunicorn with the uvicorn
worker class serves the ASGI application, so the site, the API and the MCP endpoint answer
on one port; `--wsgi` keeps the threaded WSGI server (no /mcp)."""

import os

import httpx
import pytest

from apps.common.processes import ChildProcess, free_port, manage_argv
from tests.processes import test_database_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def _serve(tmp_path, *options: str) -> tuple[ChildProcess, str]:
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "DEBUG": "true",
        "VAR_DIR": str(tmp_path),  # collectstatic writes here
        "API_THROTTLE_RATE": "",
    }
    server = ChildProcess(
        manage_argv("serve", "--no-worker", "--web-workers", "1", "--port", str(port), *options),
        env=env,
        log=tmp_path / "serve.log",
    )
    base = f"http://127.0.0.1:{port}"
    if not server.wait_http_ok(f"{base}/healthz", timeout=90, interval=0.2):
        server.stop(timeout=15)
        raise AssertionError(f"serve did not start:\n{server.output()}")
    return server, base


@pytest.mark.parametrize("wsgi", [False, True], ids=["asgi", "wsgi"])
def test_serve_answers_the_site_the_api_and_mcp(tmp_path, workspace_a, make_token, wsgi):
    token = make_token(workspace_a, scopes=["read", "mcp"]).clear
    server, base = _serve(tmp_path, *(["--wsgi"] if wsgi else []))
    try:
        with httpx.Client(base_url=base, trust_env=False, timeout=30) as client:
            assert client.get("/login/").status_code == 200
            me = client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
            assert me.status_code == 200 and me.json()["workspace"]["slug"] == workspace_a.slug
            mcp = client.post(
                "/mcp",
                json=INITIALIZE,
                headers={
                    "Authorization": f"Bearer {token}",
                    "Accept": "application/json, text/event-stream",
                },
            )
            if wsgi:
                assert mcp.status_code == 404  # WSGI has no MCP endpoint
            else:
                assert mcp.status_code == 200, mcp.text
                assert mcp.json()["result"]["serverInfo"]["name"] == "socialpost"
            # More requests than the pool holds: each connection went back after its request.
            answers = [client.get("/healthz").status_code for _ in range(30)]
            assert set(answers) == {200}
    finally:
        server.stop(timeout=30)
    output = server.output()
    assert "Traceback" not in output
    assert '"GET /api/v1/me HTTP/1.1" 200' in output  # the access log, either way
    assert ("MCP at" in output) is not wsgi
