"""`manage.py serve`, the command `make run` runs: by default gunicorn with the uvicorn
worker class serves the ASGI application, so the site, the API and the MCP endpoint answer
on one port; `--wsgi` keeps the threaded WSGI server (no /mcp)."""

import json
import os
import signal
import subprocess
import sys
import time

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
    if not _wait_for_line(server, "Serving on", timeout=90):
        server.stop(timeout=15)
        raise AssertionError(f"serve did not start:\n{server.output()}")
    # "Serving on" is printed only once the server answers, not before.
    assert httpx.get(f"{base}/healthz", timeout=5).status_code == 200
    return server, base


def _wait_for_line(server: ChildProcess, text: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server.is_running():
        if text in server.output():
            return True
        time.sleep(0.1)
    return text in server.output()


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


def test_make_run_on_a_fresh_embedded_database_says_each_step_and_ctrl_c_lets_db_stop_stop_it(
    tmp_path,
):
    """What a newcomer's first `make run` does: the embedded server is created, the
    migrations applied with progress, the demo made; Ctrl+C (to the whole process group, as
    a terminal sends it) leaves no pid holding the server, so db-stop stops it."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "XDG_RUNTIME_DIR")}
    env.update(DEBUG="true", VAR_DIR=str(tmp_path), API_THROTTLE_RATE="")
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        serve = subprocess.Popen(  # noqa: S603 - fixed argv
            manage_argv("serve", "--demo", "--web-workers", "1", "--port", str(port)),
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 180
        while "Serving on" not in log.read_text() and time.monotonic() < deadline:
            assert serve.poll() is None, log.read_text()
            time.sleep(0.2)
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
    finally:
        os.killpg(serve.pid, signal.SIGINT)
        serve.wait(timeout=90)
    output = log.read_text()
    steps = [
        "Embedded PostgreSQL: creating the database (first run)",
        "Applying ",
        "migrations: ",
        "Collecting static files",
        "Creating the demo workspace",
        "Starting the web server and the worker",
        "Demo workspace ready",
        f"Serving on http://127.0.0.1:{port}/",
    ]
    positions = [output.find(step) for step in steps]
    assert -1 not in positions and positions == sorted(positions), output
    pgdata = tmp_path / "pgdata"
    assert json.loads((pgdata / ".handle_pids.json").read_text()) == []
    stop = subprocess.run(  # noqa: S603 - what `make db-stop` runs
        [sys.executable, "-m", "config.embedded_db", "stop"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stop.returncode == 0 and "Stopped" in stop.stdout, stop.stderr
    assert not (pgdata / "postmaster.pid").exists()
