"""A worker's proof of life: the leases of the jobs it holds, and its WorkerProcess row.

Leases are refreshed by a thread of their own on a connection of their own (`LeaseKeeper`),
so a heartbeat never waits behind the worker's loop or its handlers: the statement skips a
row a handler holds locked at that instant (and looks again a second later) instead of
queueing behind it, and runs under short lock and statement timeouts of its own. A worker
whose handler waits on a lock another process holds (a paused worker's, say) keeps its
leases all the same. That connection goes to PostgreSQL itself (DATABASE_DIRECT_URL behind
a pooler in transaction mode, as the worker's LISTEN does).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence

import psycopg
from django.db import connection
from django.db.models.functions import Now

from apps.common.direct import direct_connection_params
from apps.jobs import lease_check
from apps.jobs.errors import DATABASE_ERRORS
from apps.jobs.models import WorkerProcess

logger = logging.getLogger(__name__)

# The heartbeat's own session bounds: it never waits on a lock for long, nor runs long.
HEARTBEAT_LOCK_TIMEOUT_S = 1.0
HEARTBEAT_STATEMENT_TIMEOUT_S = 5.0
# A held row skipped because it was locked, or a failed heartbeat, is tried again this soon.
_RETRY_S = 1.0
Held = Sequence[tuple[int, uuid.UUID]]


def refresh_leases(
    held: Held, *, stale_s: float, conn: psycopg.Connection | None = None
) -> tuple[set[int], set[int]]:
    """Refresh the lease of each (job id, lease) held, on `conn` (default: this thread's
    Django connection), skipping rows locked right now. Returns (ids found lost, ids held
    but not refreshed because locked)."""
    if conn is None:
        connection.ensure_connection()
        conn = connection.connection
    refreshed, alive = lease_check.refresh_without_waiting(conn, held, stale_s=stale_s)
    lost = {pk for pk, _ in held} - alive
    for pk in lost:
        logger.warning(
            "Job %s lost its lease (recovered by another worker); its outcome will not be written.",
            pk,
            extra={"job_id": pk},
        )
    return lost, alive - refreshed


class LeaseKeeper:
    """A thread refreshing the worker's leases every `every_s` on its own connection.
    `held()` returns what to refresh (it must be safe to call from this thread);
    `on_lost(ids)` receives the ids found lost."""

    def __init__(
        self,
        *,
        stale_s: float,
        every_s: float,
        held: Callable[[], Held],
        on_lost: Callable[[set[int]], None],
        application_name: str,
    ) -> None:
        self.stale_s = stale_s
        self.every_s = every_s
        self._held = held
        self._on_lost = on_lost
        self._application_name = application_name[:63]
        self._conn: psycopg.Connection | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.beats = 0  # heartbeats written (what tests and operators watch)

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._main, name="lease-keeper", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=HEARTBEAT_STATEMENT_TIMEOUT_S + 1)
        self._close()

    def beat(self) -> float:
        """One heartbeat; returns the seconds until the next one."""
        held = self._held()
        if not held:
            return self.every_s
        try:
            lost, skipped = refresh_leases(held, stale_s=self.stale_s, conn=self._connect())
        except DATABASE_ERRORS as exc:
            logger.warning("Heartbeat failed (%s); trying again in %.0fs.", exc, _RETRY_S)
            self._close()
            return _RETRY_S
        self.beats += 1
        if lost:
            self._on_lost(lost)
        return _RETRY_S if skipped else self.every_s

    def _main(self) -> None:
        wait = 0.0
        while not self._stop.wait(wait):
            try:
                wait = min(self.beat(), self.every_s)
            except Exception:
                logger.exception("Heartbeat error; trying again in %.0fs.", _RETRY_S)
                wait = _RETRY_S
        self._close()

    def connection_params(self) -> dict:
        """libpq options of the keeper's session: on PostgreSQL itself (DATABASE_DIRECT_URL
        behind a pooler in transaction mode, which refuses the `options` startup parameter
        and would hand each statement any server session), under its own bounds."""
        params = direct_connection_params()
        bounds = (
            f"-c lock_timeout={round(HEARTBEAT_LOCK_TIMEOUT_S * 1000)}"
            f" -c statement_timeout={round(HEARTBEAT_STATEMENT_TIMEOUT_S * 1000)}"
        )
        # After the product's session bounds, so these win on this session.
        params["options"] = f"{params.get('options', '')} {bounds}".strip()
        params.setdefault("application_name", self._application_name)
        params.setdefault("connect_timeout", 5)
        return params

    def _connect(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(**self.connection_params(), autocommit=True)
        return self._conn

    def _close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
            self._conn = None


def register(*, name: str, threads: int, types: list[str]) -> None:
    WorkerProcess.objects.update_or_create(
        name=name,
        defaults={
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "threads": threads,
            "types": types,
            "stopped_at": None,
        },
    )


def touch(*, name: str, jobs_running: int, jobs_done: int) -> bool:
    """Mark the worker seen now. False when its row is gone (pruned while the worker was
    cut off), so the caller registers again."""
    touched = WorkerProcess.objects.filter(name=name).update(
        last_seen_at=Now(),
        updated_at=Now(),
        jobs_running=jobs_running,
        jobs_done=jobs_done,
    )
    return touched > 0


def mark_stopped(*, name: str, jobs_done: int) -> None:
    WorkerProcess.objects.filter(name=name).update(
        stopped_at=Now(),
        last_seen_at=Now(),
        updated_at=Now(),
        jobs_running=0,
        jobs_done=jobs_done,
    )
