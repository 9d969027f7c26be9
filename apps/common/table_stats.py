"""Planner statistics that keep up with a bulk write.

PostgreSQL plans a statement from what its statistics say of each table. Plans it caches
for the life of a connection, such as those of the foreign-key checks every insert queues,
keep the plan they got: planned while a table was nearly empty (a fresh install), a check
scans the whole table, and a bulk import that grows it to tens of thousands of rows slows
with every request (the checks run at COMMIT). An ``ANALYZE`` replaces the statistics and
makes every connection plan again. Autovacuum runs one eventually, where it runs; a bulk
write asks for one as soon as its tables hold more changed rows than their statistics know
of (PostgreSQL's own advice after a bulk load).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import connection
from django.db.models import Model

logger = logging.getLogger(__name__)

# Fewer changed rows than this never make a table's statistics stale enough to matter.
MIN_CHANGED_ROWS = 1000


def analyze_stale(
    models: Iterable[type[Model]], *, min_changed: int = MIN_CHANGED_ROWS
) -> list[str]:
    """ANALYZE the tables of these models whose rows changed since their last analyze
    outnumber the rows their statistics count (and at least ``min_changed``); returns the
    tables analyzed. Run it outside a transaction: ANALYZE locks its table until the end
    of the transaction it runs in."""
    tables = sorted({model._meta.db_table for model in models})
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT s.relname
              FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
             WHERE s.relname = ANY(%s) AND s.schemaname = current_schema()
               AND s.n_mod_since_analyze >= greatest(%s, c.reltuples)
             ORDER BY s.relname
            """,
            [tables, min_changed],
        )
        stale = [name for (name,) in cursor.fetchall()]
        if stale:
            names = ", ".join(connection.ops.quote_name(name) for name in stale)
            cursor.execute(f"ANALYZE {names}")  # noqa: S608 - names read from the catalog
            logger.info("Analyzed %s after a bulk write.", names, extra={"tables": stale})
    return stale
