"""Rows read as one JSON value each, from SQL the ORM compiles once per process.

The hottest reads (a token per API request, a publication with everything it shows) cost
little in PostgreSQL but much in Python: the ORM builds and compiles their querysets on every
request. A :class:`Shape` says which row to read with which related rows: forward relations
joined into the same row, reverse relations nested as JSON arrays
(``ARRAY(SELECT jsonb_build_object(...))``). :class:`JsonQuery` compiles the queryset once
with stand-in values, finds them among the SQL's parameters, and binds each call's values in
their place. :func:`load` turns a row back into model instances, their relations in the
caches where ``select_related`` and ``prefetch_related`` would put them, so the code reading
them never knows.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.postgres.expressions import ArraySubquery
from django.db import connection
from django.db.models import Expression, F, Model, OuterRef, QuerySet
from django.db.models.functions import JSONObject


@dataclass(frozen=True)
class Shape:
    """A model's row as JSON, with the related rows read in the same query."""

    model: type[Model]
    # attnames read; None reads every concrete field (those left out are deferred).
    fields: tuple[str, ...] | None = None
    # Forward foreign keys (or one-to-ones) joined into the row: {field name: its shape}.
    joined: Mapping[str, Shape] = field(default_factory=dict)
    # Reverse relations nested as arrays (only on the query's own model, not a joined one).
    nested: tuple[Nested, ...] = ()
    # Further values computed in SQL, returned in the row's data under their names.
    extra: Mapping[str, Callable[[], Expression]] = field(default_factory=dict)


@dataclass(frozen=True)
class Nested:
    """A reverse relation read as a JSON array inside its parent's row."""

    name: str  # the accessor on the parent
    fk: str  # the child's foreign key to the parent
    shape: Shape
    ordering: tuple[str, ...] = ("pk",)
    one: bool = False  # a reverse one-to-one: cached as the object, or None


def _key(name: str) -> str:
    return f"@{name}"


def json_object(shape: Shape, prefix: str = "") -> JSONObject:
    """The JSON of shape's row; ``prefix`` is the path of a joined row (``workspace__``)."""
    columns: dict[str, Any] = {
        f.attname: F(prefix + f.attname)
        for f in shape.model._meta.concrete_fields
        if shape.fields is None or f.attname in shape.fields
    }
    for name, joined in shape.joined.items():
        columns[_key(name)] = json_object(joined, f"{prefix}{name}__")
    for child in shape.nested:
        if prefix:
            raise ValueError("rows are nested only under the query's own model")
        rows = child.shape.model._default_manager.filter(**{child.fk: OuterRef("pk")})
        columns[_key(child.name)] = ArraySubquery(
            rows.order_by(*child.ordering).values(row=json_object(child.shape))
        )
    for name, expression in shape.extra.items():
        columns[_key(name)] = expression()
    return JSONObject(**columns)


def instance(model: type[Model], data: Mapping[str, Any]) -> Model:
    """A model instance as the database would have loaded it, from its JSON row (fields
    absent from the row are deferred)."""
    fields = [f for f in model._meta.concrete_fields if f.attname in data]
    return model.from_db(
        connection.alias,
        [f.attname for f in fields],
        [f.to_python(data[f.attname]) for f in fields],
    )


def cache_related(obj: Model, name: str, rows: list) -> None:
    """Make ``obj.<name>.all()`` answer rows without a query, as prefetch_related leaves it."""
    queryset = getattr(obj, name).get_queryset()
    queryset._result_cache = rows
    queryset._prefetch_done = True
    obj.__dict__.setdefault("_prefetched_objects_cache", {})[name] = queryset


def load(shape: Shape, data: Mapping[str, Any]) -> Model:
    """shape's instance from its JSON row, with its joined and nested rows cached on it."""
    model = shape.model
    obj = instance(model, data)
    for name, joined in shape.joined.items():
        values = data.get(_key(name)) or {}
        related = load(joined, values) if values.get(joined.model._meta.pk.attname) else None
        forward: Any = model._meta.get_field(name)
        forward.set_cached_value(obj, related)
    for child in shape.nested:
        rows = [load(child.shape, row) for row in data.get(_key(child.name)) or []]
        back: Any = child.shape.model._meta.get_field(child.fk)
        for row in rows:
            back.set_cached_value(row, obj)
        if child.one:
            getattr(model, child.name).related.set_cached_value(obj, rows[0] if rows else None)
        else:
            cache_related(obj, child.name, rows)
    return obj


def extra(data: Mapping[str, Any], name: str) -> Any:
    """The value of shape's ``extra[name]`` in a row's data."""
    return data.get(_key(name))


class JsonQuery:
    """A query returning one JSON value per row, compiled once per process.

    ``build(**standins)`` is the queryset (with ``.values(row=json_object(...))``); each
    stand-in must appear exactly once among the compiled parameters, so it must be a value
    no call passes (a negative id, a string no prefix takes)."""

    def __init__(self, build: Callable[..., QuerySet], **standins: Any) -> None:
        self._build = build
        self._standins = standins
        self._compiled: tuple[str, tuple[Any, ...], dict[str, int]] | None = None
        self._lock = threading.Lock()

    def _compile(self) -> tuple[str, tuple[Any, ...], dict[str, int]]:
        with self._lock:
            if self._compiled is None:
                sql, params = self._build(**self._standins).query.sql_with_params()
                at = {}
                for name, standin in self._standins.items():
                    found = [i for i, p in enumerate(params) if p == standin]
                    if len(found) != 1:
                        raise RuntimeError(f"stand-in {name!r} is bound {len(found)} times")
                    at[name] = found[0]
                self._compiled = (sql, tuple(params), at)
            return self._compiled

    def rows(self, **values: Any) -> list[dict[str, Any]]:
        sql, params, at = self._compiled or self._compile()
        bound = list(params)
        for name, value in values.items():
            bound[at[name]] = value
        with connection.cursor() as cursor:
            cursor.execute(sql, bound)
            return [row if isinstance(row, dict) else json.loads(row) for (row,) in cursor]
