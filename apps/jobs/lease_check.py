"""Lease statements the worker runs beside the queue's hot path: the check before a
request leaves, and the heartbeat that never waits on a lock.

Both decide on the database clock, with the same fencing as `apps.jobs.queue`: a lease
holds while the job is processing under it and its heartbeat is younger than the stale
window.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import psycopg
from django.db import connection

from apps.jobs.errors import LeaseLost
from apps.jobs.models import Job

# Still held, and the run is younger than its type's time limit: past it the worker's loop
# settles the job by the type's stale policy (apps.jobs.timelimits), so nothing may leave.
_HELD_SQL = """
SELECT 1 FROM jobs_job
 WHERE id = %s AND lease = %s AND status = 'processing'
   AND locked_at > now() - make_interval(secs => %s)
   AND started_at > now() - make_interval(secs => %s)
"""

# Refresh the heartbeat of the rows no one holds locked right now (a handler holding its
# job's row lock for a moment is skipped, never waited for), and say which leases still
# hold: those refreshed, and those skipped whose lease held in this statement's snapshot.
# Fenced like every write under a lease: the UPDATE re-checks the lease on the row it locks.
_REFRESH_SQL = """
WITH refreshed AS (
    UPDATE jobs_job j SET locked_at = now()
     WHERE j.id IN (SELECT id FROM jobs_job WHERE id = ANY(%(ids)s::bigint[])
                    FOR UPDATE SKIP LOCKED)
       AND j.lease = ANY(%(leases)s::uuid[]) AND j.status = 'processing'
       AND j.locked_at > now() - make_interval(secs => %(stale_s)s::float8)
    RETURNING j.id
)
SELECT j.id, EXISTS (SELECT 1 FROM refreshed r WHERE r.id = j.id)
  FROM jobs_job j
 WHERE j.id = ANY(%(ids)s::bigint[]) AND j.lease = ANY(%(leases)s::uuid[])
   AND j.status = 'processing'
   AND j.locked_at > now() - make_interval(secs => %(stale_s)s::float8)
"""


def lease_held(job: Job, *, stale_s: float, time_limit_s: float) -> bool:
    """Whether this claim still holds the job (one indexed read, no lock taken)."""
    if job.lease is None:
        return False
    with connection.cursor() as cursor:
        cursor.execute(_HELD_SQL, [job.pk, job.lease, stale_s, time_limit_s])
        return cursor.fetchone() is not None


def ensure_held(job: Job, *, stale_s: float, time_limit_s: float) -> None:
    """Raise LeaseLost unless this claim still holds the job."""
    if not lease_held(job, stale_s=stale_s, time_limit_s=time_limit_s):
        raise LeaseLost(f"Job {job.pk} is no longer held by this worker; nothing is sent.")


def refresh_without_waiting(
    conn: psycopg.Connection, items: Sequence[tuple[int, uuid.UUID]], *, stale_s: float
) -> tuple[set[int], set[int]]:
    """Refresh the heartbeat of each (job id, lease) on `conn`, skipping rows locked right
    now. Returns (ids refreshed, ids whose lease still holds); the others are lost."""
    if not items:
        return set(), set()
    ids, leases = zip(*items, strict=True)
    params = {"ids": list(ids), "leases": [str(lease) for lease in leases], "stale_s": stale_s}
    rows = conn.execute(_REFRESH_SQL, params).fetchall()
    refreshed = {pk for pk, was_refreshed in rows if was_refreshed}
    return refreshed, refreshed | {pk for pk, _ in rows}
