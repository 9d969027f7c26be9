"""The database clock: the one clock every process of the product shares.

Times that other processes wrote (a schedule, an attempt's start, a platform's reset
instant, a claim's heartbeat) are compared with this clock, never with the host's: a
worker whose clock runs minutes slow or fast must decide as its healthy peers would.
"""

from __future__ import annotations

from datetime import datetime

from django.db import connection


def db_now() -> datetime:
    """The database server's current time (`clock_timestamp()`: the time of this call,
    not of the transaction's start)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        return cursor.fetchone()[0]
