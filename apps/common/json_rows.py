"""Rows read as one JSON value each, from SQL the ORM compiles once per process.

The hottest reads (a token per API request, a publication with everything it shows) cost
little in PostgreSQL but much in Python: the ORM builds and compiles their querysets on every
request. A :class:`Shape` says which row to read with which related rows: forward relations
joined into the same row, reverse relations nested as JSON arrays
(``ARRAY(SELECT jsonb_build_object(...))``). :class:`JsonQuery` compiles the queryset once
with stand-in values, writes its constant parameters into the SQL, and binds each call's
values where the stand-ins were. :func:`load` turns a row back into model instances, their
relations in the caches where ``select_related`` and ``prefetch_related`` would put them, so
the code reading them never knows.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib.postgres.expressions import ArraySubquery
from django.db import connection, models
from django.db.models import BinaryField, F, Model, OuterRef, QuerySet
from django.db.models.expressions import BaseExpression
from django.db.models.functions import JSONObject

from apps.common.prepared import execute_prepared, prepared_cursor


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
    # Further values computed in SQL, returned in the row's data under their names (any
    # expression, a Subquery included: that one is no Expression subclass).
    extra: Mapping[str, Callable[[], BaseExpression]] = field(default_factory=dict)


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
    read = [
        f
        for f in shape.model._meta.concrete_fields
        if shape.fields is None or f.attname in shape.fields
    ]
    for f in read:
        if isinstance(f, BinaryField):
            # JSON shows bytes as hex text, which the field would not read back.
            raise ValueError(f"{shape.model.__name__}.{f.name}: leave binary fields out")
    columns: dict[str, Any] = {f.attname: F(prefix + f.attname) for f in read}
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
    """Make ``obj.<name>.all()`` answer rows without a query, as prefetch_related leaves it.

    The queryset is the one the related manager would build (its model's default
    manager's, with the relation's filter and the known parent), made without the
    manager: its ``filter()`` clones the query, which cost more than loading the rows (a
    page of fifty publications caches about five hundred relations). The filter is left
    deferred, as the manager leaves it, so it is applied only if the queryset is chained.
    """
    fk: Any = getattr(type(obj), name).rel.field  # the child's foreign key to obj
    queryset = fk.model._default_manager.get_queryset()
    queryset._add_hints(instance=obj)
    queryset._deferred_filter = (False, (), {fk.name: obj})
    queryset._known_related_objects = {fk: {getattr(obj, fk.target_field.attname): obj}}
    queryset._result_cache = rows
    queryset._prefetch_done = True
    obj.__dict__.setdefault("_prefetched_objects_cache", {})[name] = queryset


# Fields whose to_python returns a value read from JSON as it is (a str, an int, a bool or
# a JSON value); only these exact classes, as a subclass may convert.
_AS_READ = (
    models.CharField,
    models.TextField,
    models.IntegerField,
    models.SmallIntegerField,
    models.BigIntegerField,
    models.PositiveIntegerField,
    models.PositiveSmallIntegerField,
    models.AutoField,
    models.BigAutoField,
    models.BooleanField,
    models.JSONField,
)


@dataclass
class _Plan:
    """What loading a row of a shape needs, worked out once per shape."""

    fields: list[Any]
    attnames: list[str]
    convert: list[tuple[int, Callable[[Any], Any]]]  # the fields whose values to_python reads
    joined: list[tuple[str, Shape, Any, str]]  # key, shape, forward field, its pk attname
    nested: list[tuple[str, Nested, Any, Any]]  # key, child, back field, one-to-one cache


# Each shape's plan, by the shape's id. Shapes are module constants: one built per call
# would stay here for good.
_PLANS: dict[int, tuple[Shape, _Plan]] = {}


def _plan(shape: Shape) -> _Plan:
    found = _PLANS.get(id(shape))
    if found is not None and found[0] is shape:
        return found[1]
    model = shape.model
    fields = [
        f for f in model._meta.concrete_fields if shape.fields is None or f.attname in shape.fields
    ]
    plan = _Plan(
        fields=fields,
        attnames=[f.attname for f in fields],
        convert=[
            (i, f.to_python) for i, f in enumerate(fields) if type(_target(f)) not in _AS_READ
        ],
        joined=[
            (_key(name), joined, model._meta.get_field(name), joined.model._meta.pk.attname)
            for name, joined in shape.joined.items()
        ],
        nested=[
            (
                _key(child.name),
                child,
                child.shape.model._meta.get_field(child.fk),
                getattr(model, child.name).related if child.one else None,
            )
            for child in shape.nested
        ],
    )
    _PLANS[id(shape)] = (shape, plan)  # the shape is kept, so its id is never reused
    return plan


def _target(field: Any) -> Any:
    """The field whose to_python a field's to_python is (a foreign key's target's)."""
    return field.target_field if type(field) is models.ForeignKey else field


def load(shape: Shape, data: Mapping[str, Any]) -> Model:
    """shape's instance from its JSON row, with its joined and nested rows cached on it."""
    model = shape.model
    plan = _plan(shape)
    try:
        values = [data[name] for name in plan.attnames]
    except KeyError:  # not a row of shape's JSON: what it holds, the rest deferred
        obj = instance(model, data)
    else:
        for i, to_python in plan.convert:
            values[i] = to_python(values[i])
        obj = model.from_db(connection.alias, plan.attnames, values)
    for key, joined, forward, pk in plan.joined:
        related_data = data.get(key) or {}
        forward.set_cached_value(obj, load(joined, related_data) if related_data.get(pk) else None)
    for key, child, back, one in plan.nested:
        rows = [load(child.shape, row) for row in data.get(key) or []]
        for row in rows:
            back.set_cached_value(row, obj)
        if one is not None:
            one.set_cached_value(obj, rows[0] if rows else None)
        else:
            cache_related(obj, child.name, rows)
    return obj


def related_key(name: str) -> str:
    """The key of a joined row (a dict) or of nested rows (a list) in a row's data, for a
    caller reading the JSON itself rather than loading it."""
    return _key(name)


def extra(data: Mapping[str, Any], name: str) -> Any:
    """The value of shape's ``extra[name]`` in a row's data."""
    return data.get(_key(name))


class JsonQuery:
    """A query returning one JSON value per row, compiled once per process.

    ``build(**standins)`` is the queryset (with ``.values(row=json_object(...))``). It is
    compiled once with the stand-in values and its constant parameters (the JSON keys,
    about ten a row) are written into the SQL as literals, as the client-side binding of
    every query does anyway; only the stand-ins stay placeholders, bound per call to a
    statement prepared once per connection (apps.common.prepared). Each
    stand-in's literal must appear exactly once in the SQL: a value no other part of the
    query holds (a negative id, a marker string)."""

    def __init__(self, build: Callable[..., QuerySet], **standins: Any) -> None:
        self._build = build
        self._standins = standins
        self._compiled: tuple[str, tuple[str, ...]] | None = None
        self._lock = threading.Lock()

    def _compile(self) -> tuple[str, tuple[str, ...]]:
        with self._lock:
            if self._compiled is None:
                sql, params = self._build(**self._standins).query.sql_with_params()
                ops: Any = connection.ops  # PostgreSQL's: it composes SQL with literals
                # Literals may hold "%": escaped, so only the stand-ins' placeholders remain.
                text = ops.compose_sql(sql, params).replace("%", "%%")
                found = []
                for name, standin in self._standins.items():
                    literal = ops.compose_sql("%s", [standin]).strip()
                    if text.count(literal) != 1:
                        raise RuntimeError(
                            f"stand-in {name!r} appears {text.count(literal)} times in the SQL"
                        )
                    found.append((text.index(literal), name, literal))
                for _, _, literal in found:
                    text = text.replace(literal, "%s")
                self._compiled = (text, tuple(name for _, name, _ in sorted(found)))
            return self._compiled

    def sql(self) -> str:
        """The compiled SQL, a ``%s`` where each stand-in was (literal percent signs
        doubled), for a caller that binds more than the stand-ins' values."""
        return (self._compiled or self._compile())[0]

    def rows(self, **values: Any) -> list[dict[str, Any]]:
        sql, names = self._compiled or self._compile()
        with prepared_cursor() as cursor:
            execute_prepared(cursor, sql, [values[name] for name in names])
            return [row if isinstance(row, dict) else json.loads(row) for (row,) in cursor]
