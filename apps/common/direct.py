"""Sessions of their own on PostgreSQL itself, for what a pooler in transaction mode cannot
carry: a LISTEN (its notifications arrive on the session that listens, between
transactions) or anything else that must outlive one transaction.

Behind such a pooler (PgBouncer), DATABASE_DIRECT_URL names the server; without one, the
default database's connection settings are PostgreSQL's own (in tests: the test database).
"""

from __future__ import annotations

from typing import Any

import psycopg
from django.conf import settings
from django.db import connection

# Django's own keys among connection options, which are not libpq's.
_NOT_CONNINFO = (
    "cursor_factory",
    "context",
    "prepare_threshold",
    "pool",
    "server_side_binding",
    "assume_role",
    "isolation_level",
)


def direct_connection_params() -> dict[str, Any]:
    """libpq options of a session on PostgreSQL itself, with the session bounds
    (statement, idle-in-transaction and lock timeouts) of config/settings.py."""
    direct = settings.DATABASE_DIRECT
    if direct is None:
        params = connection.get_connection_params()
    else:
        named = {
            "dbname": direct["NAME"],
            "user": direct.get("USER"),
            "password": direct.get("PASSWORD"),
            "host": direct.get("HOST"),
            "port": direct.get("PORT"),
        }
        # An empty HOST leaves OPTIONS' host (a socket directory) in force, as Django does.
        params = {
            **direct.get("OPTIONS", {}),
            **{k: v for k, v in named.items() if v not in ("", None)},
        }
    return {k: v for k, v in params.items() if k not in _NOT_CONNINFO and v not in ("", None)}


def direct_connect(*, application_name: str, autocommit: bool = True) -> psycopg.Connection:
    """A new psycopg connection to PostgreSQL itself (never through the pooler), closed
    by its caller."""
    params = direct_connection_params()
    params.setdefault("application_name", application_name[:63])
    params.setdefault("connect_timeout", 10)
    return psycopg.connect(**params, autocommit=autocommit)
