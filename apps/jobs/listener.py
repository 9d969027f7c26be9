"""LISTEN for "work was enqueued" on a dedicated connection.

The worker's loop waits on this connection's socket (with `select`), so a NOTIFY sent by
an enqueuing transaction's commit wakes it at once; the claim itself runs on the worker's
regular Django connection. The LISTEN connection goes to PostgreSQL itself
(apps.common.direct): through a pooler in transaction mode, the server session that ran
the LISTEN serves other clients between transactions, and its notifications reach none.
"""

from __future__ import annotations

import contextlib

import psycopg

from apps.common.direct import direct_connect
from apps.jobs.queue import NOTIFY_CHANNEL


class Listener:
    """An autocommit psycopg connection LISTENing on the jobs channel."""

    def __init__(self, *, application_name: str = "run_worker") -> None:
        self.application_name = application_name[:63]
        self._conn: psycopg.Connection | None = None

    @property
    def is_connected(self) -> bool:
        return self._conn is not None and not self._conn.closed

    def connect(self) -> None:
        self.close()
        self._conn = direct_connect(application_name=self.application_name)
        self._conn.execute(f"LISTEN {NOTIFY_CHANNEL}")

    def fileno(self) -> int:
        if self._conn is None:
            raise RuntimeError("Listener is not connected.")
        return self._conn.pgconn.socket

    def drain(self) -> int:
        """Read what arrived on the socket; returns the number of notifications. Raises
        psycopg.OperationalError when the connection is gone."""
        if self._conn is None:
            return 0
        pgconn = self._conn.pgconn
        pgconn.consume_input()
        count = 0
        while pgconn.notifies() is not None:
            count += 1
        return count

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
            self._conn = None
