"""The database clock: the one clock every process of the product shares.

Times that other processes wrote (a schedule, an attempt's start, a platform's reset
instant, a claim's heartbeat) are compared with this clock, never with the host's: a
worker whose clock runs minutes slow or fast must decide as its healthy peers would.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from django.db import connection

# How far the database clock is ahead of this host's, as last measured by db_now() (zero
# until then). A host's clock drifts slowly, so the last measure serves code that must
# not query (a platform's answer parsed in the middle of a request).
_offset = timedelta(0)


def db_now() -> datetime:
    """The database server's current time (`clock_timestamp()`: the time of this call,
    not of the transaction's start). Also measures this host's offset from it."""
    global _offset
    before = time.time()
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        now = cursor.fetchone()[0]
    local = datetime.fromtimestamp((before + time.time()) / 2, tz=UTC)
    _offset = now - local
    return now


def estimated_db_now() -> datetime:
    """The database clock read on this host's, without a query: this host's time plus
    the offset db_now() last measured (the host's own time if it never ran)."""
    return datetime.now(UTC) + _offset
