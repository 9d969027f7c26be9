"""Statements PostgreSQL prepares once per connection, for the hottest queries.

Django binds parameters on the client, so PostgreSQL parses and plans every statement it
gets. For the few statements run on every batch or request (the job queue's claims and
outcomes, the API's token and detail reads) planning costs as much as running them: these
go through a cursor that binds server-side and asks for a prepared statement.

Behind a pooler in transaction mode each transaction may run on another server session,
which does not know the statements prepared on the others (PgBouncer before 1.21, or
without max_prepared_statements): there DB_PREPARED_STATEMENTS is off and these
statements are bound server-side but parsed and planned on every call, like the others.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection

# Django turns psycopg's automatic preparation off (prepare_threshold None), which also
# ignores an explicit prepare=True. A threshold no query reaches prepares exactly the
# statements that ask (these), and leaves the connection's other queries as they were.
_PREPARE_ONLY_WHEN_ASKED = 2**31


def prepared_cursor() -> psycopg.Cursor:
    """A cursor on the thread's Django connection (so it shares its transaction) that
    binds parameters server-side, so ``execute_prepared`` statements are prepared once per
    connection instead of being parsed and planned on every call."""
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        raw.prepare_threshold = _PREPARE_ONLY_WHEN_ASKED
    return psycopg.Cursor(raw)


def execute_prepared(
    cursor: psycopg.Cursor, sql: str, params: Mapping[str, Any] | Sequence[Any]
) -> None:
    prepare = settings.DB_PREPARED_STATEMENTS
    if not connection.queries_logged:
        cursor.execute(sql, params, prepare=prepare)
        return
    # Logged like Django's own queries (DEBUG, or CaptureQueriesContext in tests).
    started = time.monotonic()
    try:
        cursor.execute(sql, params, prepare=prepare)
    finally:
        elapsed = time.monotonic() - started
        connection.queries_log.append({"sql": sql, "time": f"{elapsed:.3f}"})
