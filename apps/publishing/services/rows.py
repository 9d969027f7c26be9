"""Writing the rows of a new publication in two round trips, whatever their number.

A publication with N destinations is six tables of new rows (the publication, its
segments and their media, the renditions, their segments and their media), each row
pointing at rows of the others. Written one ``bulk_create`` per table, that is six round
trips, each waiting for the ids the next one needs. Here the ids come first, from the
tables' own sequences in one query (``allocate_ids``), so every row is complete before
anything is written, and then every row of every table goes in one statement
(``insert_rows``: each table's INSERT, as Django builds it for ``bulk_create``, chained as
data-modifying CTEs). Foreign keys are checked at commit (Django declares them
``DEFERRABLE INITIALLY DEFERRED`` on PostgreSQL), so the order inside the statement does
not matter.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model
from django.db.models.sql import InsertQuery

from apps.common.json_rows import cache_related  # noqa: F401  (rows.cache_related)


def allocate_ids(counts: Sequence[tuple[type[Model], int]]) -> list[list[int]]:
    """Fresh primary keys from each model's own sequence, ``n`` per (model, n), in one
    query."""
    columns = [
        "ARRAY(SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s))"
        for _ in counts
    ]
    params: list = []
    for model, n in counts:
        params += [model._meta.db_table, model._meta.pk.column, n]
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(columns)}", params)  # noqa: S608 - placeholders only
        row = cursor.fetchone()
    return [list(values) for values in row]


def assign_ids(objects: Sequence[Model], ids: Sequence[int]) -> None:
    for obj, pk in zip(objects, ids, strict=True):
        obj.pk = pk


def insert_rows(*groups: Sequence[Model]) -> None:
    """Insert every object of every group (one model per group, primary keys already
    set) in one statement. Like ``bulk_create``: no signals, no ``save()``; fields with
    ``auto_now``/``auto_now_add`` are set on the objects."""
    # The connection itself, not django.db.connection: every attribute read through that
    # proxy looks the thread's connection up again, and compiling thousands of values
    # reads it for each.
    connection = connections[DEFAULT_DB_ALIAS]
    statements: list[tuple[str, tuple]] = []
    for objects in groups:
        if not objects:
            continue
        model = type(objects[0])
        for obj in objects:
            obj._prepare_related_fields_for_save(operation_name="bulk_create")  # type: ignore[attr-defined]
        query = InsertQuery(model)
        query.insert_values(list(model._meta.concrete_fields), list(objects), raw=False)
        [(sql, params)] = query.get_compiler(connection=connection).as_sql()
        statements.append((sql, tuple(params)))
    if not statements:
        return
    *first, last = statements
    ctes = ", ".join(f"inserted_{i} AS ({sql})" for i, (sql, _params) in enumerate(first))
    sql = f"WITH {ctes} {last[0]}" if first else last[0]
    params = [p for _sql, group in statements for p in group]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
    for objects in groups:
        for obj in objects:
            obj._state.adding = False
            obj._state.db = connection.alias
