"""Helpers for tests that run real `run_worker` processes against the test database."""

import os
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

from django.db import connection

from apps.common.processes import ChildProcess, manage_argv


def test_database_url() -> str:
    """DATABASE_URL of the database this test runs on (a TCP server or a Unix socket)."""
    db = connection.settings_dict
    auth = quote(db["USER"] or "", safe="")
    if db["PASSWORD"]:
        auth += ":" + quote(db["PASSWORD"], safe="")
    name = quote(db["NAME"], safe="")
    host = db["HOST"] or db["OPTIONS"].get("host", "")
    if host.startswith("/"):  # a Unix socket directory
        return f"postgres://{auth}@/{name}?host={quote(host, safe='/')}"
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgres://{auth}@{host}{port}/{name}"


test_database_url.__test__ = False  # not a test, despite its name


class WorkerProcess(ChildProcess):
    """A `manage.py run_worker` child process, its output captured to a file."""

    def __init__(self, log_dir: Path, name: str, *args: str, **env: str) -> None:
        self.name = name
        environment = {
            **os.environ,
            "DATABASE_URL": test_database_url(),
            "WORKER_POLL_S": "0.2",
            # The tests' stale windows are seconds long: a worker refuses to start unless
            # its window is well above the database's lock timeout.
            "DB_LOCK_TIMEOUT_S": "0.5",
            **env,
        }
        super().__init__(
            manage_argv("run_worker", "--name", name, *args),
            env=environment,
            log=log_dir / f"{name}.log",
        )

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        """The exit code; a worker still running after `timeout` is killed and the test
        fails."""
        code = super().stop(sig, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.argv, timeout)
        return code


def wait_until(condition, timeout: float, what: str, interval: float = 0.05) -> None:
    """Poll condition() until it is true; fail the test after timeout seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"Timed out after {timeout}s waiting for {what}")
        time.sleep(interval)
