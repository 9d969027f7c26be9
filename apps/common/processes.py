"""Child processes of the project: `manage.py <command>` or gunicorn, started with their own
environment and log file, waited on until they answer, and stopped with a grace period.

`serve` runs web and worker this way; the load harnesses and the process tests do too.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import httpx
from django.conf import settings


def manage_argv(command: str, *args: str) -> list[str]:
    """`python manage.py <command> <args>` with this interpreter (run from BASE_DIR)."""
    return [sys.executable, "manage.py", command, *args]


ASGI_WORKER_CLASS = "apps.ops.asgi_worker.AsgiWorker"


def gunicorn_argv(bind: str, *options: str, wsgi: bool = False) -> list[str]:
    """gunicorn serving the project on `bind` (host:port): the ASGI application (the site
    and /mcp) with uvicorn workers, or with `wsgi` the WSGI application (no /mcp) with
    threaded workers. An ASGI child needs DB_POOL=true in its environment
    (`web_environment`)."""
    interface = (
        ["config.wsgi:application"]
        if wsgi
        else ["config.asgi:application", "--worker-class", ASGI_WORKER_CLASS]
    )
    return [
        sys.executable,
        "-m",
        "gunicorn",
        *interface,
        "--bind",
        bind,
        # Access lines with OAuth codes, signed media tokens and signatures redacted.
        "--logger-class",
        "apps.ops.access_log.RedactingLogger",
        *options,
    ]


def web_environment(env: dict[str, str], *, wsgi: bool = False) -> dict[str, str]:
    """The environment of a web child: under ASGI, database connections pooled per
    process (requests run in a pool of threads, the MCP endpoint's sync calls in threads of
    their own)."""
    if wsgi:
        return dict(env)
    return {"DB_POOL": "true", **env}


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on `host` right now (the OS picks it)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


class ChildProcess:
    """One child started from BASE_DIR with a fixed argv (no shell). With a `log`, its
    stdout and stderr are appended to that file; without, it shares this process's."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        log: Path | None = None,
        cwd: Path | str | None = None,
    ) -> None:
        self.argv = list(argv)
        self.log = log
        cwd = cwd or settings.BASE_DIR
        if log is None:
            self.proc = subprocess.Popen(self.argv, cwd=cwd, env=dict(env))  # noqa: S603
        else:
            # The child keeps its own descriptor; this one closes once it has started.
            with log.open("a") as out:
                self.proc = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
                    self.argv, cwd=cwd, env=dict(env), stdout=out, stderr=subprocess.STDOUT
                )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def poll(self) -> int | None:
        return self.proc.poll()

    def is_running(self) -> bool:
        return self.proc.poll() is None

    def send(self, sig: int = signal.SIGTERM) -> None:
        """Send `sig` unless the child has already exited."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def wait_or_kill(self, timeout: float) -> int | None:
        """Its exit code within `timeout` seconds; past that it is SIGKILLed and reaped,
        and the answer is None."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int | None:
        """Ask the child to stop with `sig`, then wait_or_kill."""
        self.send(sig)
        return self.wait_or_kill(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def wait_http_ok(self, url: str, *, timeout: float = 60, interval: float = 0.2) -> bool:
        """Poll `url` until it answers 200 (True), or the child exits or `timeout` seconds
        pass (False)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if httpx.get(url, timeout=1).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(interval)
        return False

    def output(self) -> str:
        return self.log.read_text() if self.log is not None and self.log.exists() else ""


def stop_all(
    children: Iterable[ChildProcess], sig: int = signal.SIGTERM, timeout: float = 30
) -> list[int | None]:
    """Signal every child first (they drain in parallel), then wait_or_kill each in turn."""
    children = list(children)
    for child in children:
        child.send(sig)
    return [child.wait_or_kill(timeout) for child in children]
