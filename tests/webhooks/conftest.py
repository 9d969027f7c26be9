"""Fixtures for webhook tests: a real HTTP receiver on 127.0.0.1 that answers from a
script and records what it got, endpoints pointed at it, and a worker driven through its
unit-of-work methods."""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.webhooks.constants import DELIVER_JOB
from tests.jobs.conftest import db_now


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b"ok"
    delay_s: float = 0.0


class Receiver:
    """Answers each request with the next scripted Answer (then 200 "ok")."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.script: list[Answer] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.requests.append(
                        Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    answer = receiver.script.pop(0) if receiver.script else Answer()
                if answer.delay_s:
                    time.sleep(answer.delay_s)
                try:
                    self.send_response(answer.status)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hooks"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def answer(self, *answers: Answer) -> None:
        self.script.extend(answers)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def private_targets(settings):
    """Let deliveries reach the local receiver (plain http on 127.0.0.1)."""
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    settings.WEBHOOK_ALLOW_HTTP = True
    settings.WEBHOOK_TIMEOUT_S = 2


@pytest.fixture
def worker(db):
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="hooks-worker")


def run_deliveries(worker: Worker) -> list[str]:
    """Run every due delivery job once; returns the statuses the jobs got."""
    return [worker.run_one(job) for job in worker.claim_batch()]


def make_due(delivery) -> None:
    """Step time: the delivery's pending retry is due now (on the database clock, which
    decides what is due, and stands still inside a test's transaction)."""
    Job.objects.filter(
        type=DELIVER_JOB, dedupe_key=delivery.dedupe_key, status=Job.Status.PENDING
    ).update(run_at=db_now() - timedelta(seconds=1))


@pytest.fixture
def fake_dns(monkeypatch):
    """Make host names resolve to chosen addresses: `fake_dns({"hooks.example": "1.2.3.4"})`.
    Other names (and IP literals) resolve as usual."""
    real = socket.getaddrinfo
    table: dict[str, list[str]] = {}

    def getaddrinfo(host, port, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if name in table:
            return [
                (
                    socket.AF_INET6 if ":" in address else socket.AF_INET,
                    socket.SOCK_STREAM,
                    6,
                    "",
                    (address, port or 0, 0, 0) if ":" in address else (address, port or 0),
                )
                for address in table[name]
            ]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)

    def configure(mapping: dict[str, str | list[str]]) -> None:
        for name, addresses in mapping.items():
            table[name] = [addresses] if isinstance(addresses, str) else list(addresses)

    return configure
