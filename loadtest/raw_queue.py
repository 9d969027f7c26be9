"""The raw-SQL reference loop `bench_queue` compares the queue against.

The least a PostgreSQL queue can do per batch, on the same table and indexes: claim up to
`batch` due jobs with one `UPDATE ... RETURNING` over a `SELECT ... FOR UPDATE SKIP
LOCKED` sub-select, then mark them done with one `UPDATE ... WHERE id = ANY(...)`. No cap,
no fencing, no liveness, no handler: its rate is the ceiling the database allows here.
Each process is a plain psycopg client (no Django), started with `spawn`.
"""

from __future__ import annotations

import multiprocessing
import time

import psycopg

_CLAIM_SQL = """
UPDATE jobs_job j
   SET status = 'processing', attempts = j.attempts + 1, locked_by = %(worker)s,
       locked_at = now(), started_at = now(), updated_at = now(), lease = gen_random_uuid()
 WHERE j.id IN (SELECT p.id FROM jobs_job p
                 WHERE p.status = 'pending' AND p.organization_id = ANY(%(orgs)s)
                   AND p.run_at <= now()
                 ORDER BY p.run_at, p.id LIMIT %(batch)s
                 FOR UPDATE SKIP LOCKED)
RETURNING j.id, j.type, j.payload
"""
_COMPLETE_SQL = """
UPDATE jobs_job SET status = 'done', finished_at = now(), updated_at = now()
 WHERE id = ANY(%(ids)s)
"""


def _loop(conninfo: str, orgs: list[int], batch: int, name: str, start, out) -> None:
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SELECT 1")
        start.wait()
        began = time.perf_counter()
        done = 0
        while True:
            rows = conn.execute(
                _CLAIM_SQL, {"worker": name, "orgs": orgs, "batch": batch}, prepare=True
            ).fetchall()
            if not rows:
                break
            conn.execute(_COMPLETE_SQL, {"ids": [row[0] for row in rows]}, prepare=True)
            done += len(rows)
        out.put((done, began, time.perf_counter()))


def drain(*, conninfo: str, orgs: list[int], processes: int, batch: int) -> tuple[int, float]:
    """Drain every pending job of `orgs` with `processes` raw loops; returns (jobs done,
    wall seconds from the common start to the last loop's end)."""
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_loop, args=(conninfo, orgs, batch, f"raw-{i}", start, out))
        for i in range(processes)
    ]
    for proc in procs:
        proc.start()
    time.sleep(0.5)  # let every loop connect before the common start
    start.set()
    results = [out.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
    done = sum(r[0] for r in results)
    wall = max(r[2] for r in results) - min(r[1] for r in results)
    return done, wall
