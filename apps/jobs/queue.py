"""The queue's hot path in SQL: claim, heartbeat, complete, release.

Raw SQL on purpose: these statements run for every batch a worker handles, and each one
moves many rows in one round trip. Every time that decides claiming, staleness or retries
is the database's `now()`, never the worker host's clock.

Fencing: a claim gives each job a fresh `lease`. Heartbeats and outcomes are written only
`WHERE lease = <the claim's> AND status = 'processing' AND locked_at > now() - <window>`,
so a worker that lost its lease (paused, partitioned, presumed dead and recovered) writes
nothing. A lease whose heartbeat went stale is forfeit even before recovery runs, which
also keeps the in-flight count (live heartbeats only) exact.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.db.models import BooleanField
from django.db.models.base import ModelState
from django.db.models.expressions import RawSQL

from apps.common.prepared import execute_prepared, prepared_cursor
from apps.jobs.constants import HEADS_LOCK_NAMESPACE, HEADS_LOCK_STRIPES, SEAT_CAP_COLUMNS
from apps.jobs.models import Job

# Advisory-lock namespace of the per-organization claim lock (first key of the pair).
CLAIM_LOCK_NAMESPACE = 0x6A6F62  # "job"
NOTIFY_CHANNEL = "jobs_job"

# Columns a claim returns: what a handler needs. Timestamps are left out (loading them is
# the costliest part of a row, and handlers rarely read them): they stay deferred on the
# instance and load on first access.
CLAIM_COLUMNS = (
    "id",
    "organization_id",
    "workspace_id",
    "type",
    "payload",
    "attempts",
    "max_attempts",
    "lease",
    "dedupe_key",
    "recoveries",
    "snoozed_s",
    "waited_s",
)
# run_at comes back as epoch seconds (a float loads much faster than a timestamptz).
_CLAIM_RETURNING = ", ".join(f"j.{c}" for c in CLAIM_COLUMNS)
_CLAIM_RETURNING += ", extract(epoch FROM j.run_at)::float8"
_JSON_COLUMNS = frozenset({"payload", "last_error"})
# Each capped seat's cap, as an expression over the organization row `o` (seat `d.seat`).
_SEAT_CAPS = (
    "CASE d.seat "
    + " ".join(f"WHEN '{seat}' THEN o.{column}" for seat, column in SEAT_CAP_COLUMNS.items())
    + " END"
)

# The organizations to claim for, read from their queue heads (apps.jobs.models.QueueHead):
# only the heads that are due, an index range whatever the number of organizations with
# work scheduled later. Due heads are taken least recently served first (organizations
# take turns); each one's organization is looked up (active only: a suspended one's jobs
# wait) and try-locked with the per-organization claim lock, which makes "count
# in-flight, then take up to the cap" atomic across workers (an organization locked by
# another worker is passed over, like SKIP LOCKED one level up), until `max_orgs`
# organizations are held, so a claim looks up no more organizations than it passes over
# or holds. Each one held is also try-locked for raising its head (see QueueHead:
# granted only while no one is enqueueing for it). The claim statement then runs with a
# snapshot taken after the locks are held, so it sees every claim committed before.
# (`OFFSET 0` fences the ordered heads: the look-ups and try-locks must run on them in
# order, stopping at the limit, never be pushed down into the scan; CASE orders the
# look-up before the lock, and a lateral sub-select with a LIMIT keeps it one look-up
# per head, where EXISTS may be planned as a hash of every organization.) A head of an
# organization that is not active (suspended, deleted) comes back marked so, unlocked, to
# be parked (see _PARK_SQL): its jobs wait, and no later claim reads or counts it until
# the organization is active again. A last row (organization NULL) gives the number of
# organizations with due heads (claim() leaves out those found inactive) and of live
# workers (the fleet share, see claim()), whether a system job is due, and in how many
# seconds the next pending job falls due and the next waiting job is to be promoted
# (what an idle worker sleeps until).
_DUE_ORGS_SQL = """
WITH due AS MATERIALIZED (
    SELECT h.organization_id, h.seat, h.lane, h.next_run_at, h.last_claimed_at
      FROM jobs_queuehead h
     WHERE h.next_run_at <= now()
)
(SELECT c.organization_id, c.seat::text, c.lane::text,
        pg_try_advisory_xact_lock(%(heads_ns)s, (c.organization_id %% %(stripes)s)::int),
        org.state IS NOT DISTINCT FROM 'active',
        NULL::bigint, NULL::bigint, NULL::boolean, NULL::float8, NULL::float8
   FROM (SELECT * FROM due
          ORDER BY last_claimed_at NULLS FIRST, next_run_at, organization_id
         OFFSET 0) c
   LEFT JOIN LATERAL (SELECT o.state FROM accounts_organization o
                       WHERE o.id = c.organization_id LIMIT 1) org ON true
  WHERE CASE WHEN org.state = 'active'
             THEN pg_try_advisory_xact_lock(%(ns)s, (c.organization_id %% 2147483647)::int)
             ELSE true END
  LIMIT %(max_orgs)s)
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL,
       (SELECT count(DISTINCT organization_id) FROM due),
       (SELECT count(*) FROM jobs_workerprocess w
         WHERE w.stopped_at IS NULL
           AND w.last_seen_at > now() - make_interval(secs => %(stale_s)s::float8)),
       EXISTS (
           SELECT 1 FROM jobs_job j
            WHERE j.status = 'pending' AND j.organization_id IS NULL AND j.run_at <= now()),
       extract(epoch FROM (SELECT min(j.run_at) FROM jobs_job j
                            WHERE j.status = 'pending' AND j.run_at > now() {type_filter})
                          - clock_timestamp())::float8,
       extract(epoch FROM (SELECT min(j.run_at) FROM jobs_job j WHERE j.status = 'waiting')
                          - clock_timestamp())::float8
"""

# After the claim, on the heads whose raise lock was granted (only those: so no row lock
# here waits on an enqueueing transaction): each moves to its earliest pending job left
# (null: none), and those that had their turn (served, or given nothing because nothing
# of theirs could run) go to the back of the turns.
_HEADS_SQL = """
UPDATE jobs_queuehead h
   SET last_claimed_at = CASE WHEN d.turn THEN now() ELSE h.last_claimed_at END,
       next_run_at = (SELECT j.run_at FROM jobs_job j
                       WHERE j.status = 'pending' AND j.organization_id = h.organization_id
                         AND j.seat = h.seat AND j.lane = h.lane
                       ORDER BY j.run_at, j.id LIMIT 1)
  FROM unnest(%(orgs)s::bigint[], %(seats)s::text[], %(lanes)s::text[], %(turns)s::boolean[])
       AS d(org_id, seat, lane, turn)
 WHERE h.organization_id = d.org_id AND h.seat = d.seat AND h.lane = d.lane
"""

# Parks the due heads of organizations that are not active (next_run_at NULL), only those
# whose raise lock was granted (as _HEADS_SQL: no row lock here waits on an enqueuer).
# Made due again from their pending jobs when the organization is active again (a
# trigger on accounts_organization, migration 0010, which takes the same lock shared).
_PARK_SQL = """
UPDATE jobs_queuehead h SET next_run_at = NULL
  FROM unnest(%(orgs)s::bigint[], %(seats)s::text[], %(lanes)s::text[]) AS d(org_id, seat, lane)
 WHERE h.organization_id = d.org_id AND h.seat = d.seat AND h.lane = d.lane
   AND NOT EXISTS (SELECT 1 FROM accounts_organization o
                    WHERE o.id = h.organization_id AND o.state = 'active')
"""

# The claim proper. Per locked organization and due seat: free = that budget's cap - its
# live in-flight jobs (a seat of "none" is under no cap); per due lane of the seat (the
# platform its jobs talk to), lane_free = the lane's part of the budget - its live
# in-flight jobs: the lanes due now split the budget (the cap, or the fleet share if
# smaller) evenly, and a lane alone takes the cap but an eighth (from 8 up), so another
# platform falling due finds a seat while the first one's requests hang; the seat's free
# seats go to its least loaded lanes first. The organization takes at most each budget's
# free seats, each lane's, at most its share of the fleet (`allow` minus its live
# in-flight jobs of every seat, see claim()) and, all seats together, its fair share of
# the batch, earliest run_at first. Ranked within each organization so a full batch
# interleaves them, organizations with fewer jobs in flight first, then in their turn
# (the order the first statement held them in: least recently served first), so one
# organization's flood of uncapped jobs still takes only its share, and a seat freed
# while another organization holds many goes to the one that holds few.
# The picked jobs are then row-locked with the ORM's select_for_update(skip_locked=True)
# (`locked`, see _locked_sql): the organization's claim lock keeps other claimers out,
# and SKIP LOCKED passes over a job someone else is writing at that instant (a cancel, an
# operator's retry) instead of waiting on it; the lock re-checks the status on the
# latest row version, so a job cancelled meanwhile is not claimed.
# Written to keep its plan whatever the statistics say (they lag behind bursts of new
# jobs): `ORDER BY run_at, id` is yielded without sorting by job_pending_org_lane_run_at
# only; `id = ANY(ARRAY(...))` goes through the primary key; and `status || ''` states
# the re-check in a form no partial index matches (else a planner that believes pending
# jobs are few would scan all of them to find a few ids).
# System jobs (no organization: housekeeping) are under no cap and no organization lock,
# so they are taken with FOR UPDATE SKIP LOCKED already while being picked (in a
# sub-select: FOR UPDATE is not allowed beside the window function).
_CLAIM_SQL = """
WITH seats AS (
    SELECT d.org_id, d.seat, d.lane, d.turn,
           CASE WHEN d.seat = 'none' THEN %(limit)s ELSE ({caps}) - (
               SELECT count(*) FROM jobs_job p
                WHERE p.status = 'processing' AND p.organization_id = d.org_id
                  AND p.seat = d.seat
                  AND p.locked_at > now() - make_interval(secs => %(stale_s)s::float8)) END
           AS free,
           CASE WHEN d.seat = 'none' THEN %(limit)s
                WHEN d.lanes > 1 THEN (budget.n + d.lanes - 1) / d.lanes - lane.inflight
                ELSE budget.cap - budget.cap / 8 - lane.inflight END AS lane_free,
           lane.inflight AS lane_inflight
      FROM unnest(%(orgs)s::bigint[], %(seats)s::text[], %(lanes)s::text[], %(lane_counts)s::int[])
           WITH ORDINALITY AS d(org_id, seat, lane, lanes, turn)
      JOIN accounts_organization o ON o.id = d.org_id,
      LATERAL (SELECT ({caps}) AS cap, least(({caps}), %(allow)s) AS n) budget,
      LATERAL (
          SELECT count(*) AS inflight FROM jobs_job p
           WHERE p.status = 'processing' AND p.organization_id = d.org_id
             AND p.seat = d.seat AND p.lane = d.lane
             AND p.locked_at > now() - make_interval(secs => %(stale_s)s::float8)) lane
     WHERE o.state = 'active'
),
flight AS (
    SELECT f.org_id, %(allow)s - (
        SELECT count(*) FROM jobs_job p
         WHERE p.status = 'processing' AND p.organization_id = f.org_id
           AND p.locked_at > now() - make_interval(secs => %(stale_s)s::float8)) AS allowed
      FROM (SELECT DISTINCT org_id FROM seats) f
),
share AS (
    SELECT ceil(%(limit)s::numeric / greatest(count(DISTINCT seats.org_id), 1))::int AS n
      FROM seats JOIN flight USING (org_id)
     WHERE seats.free > 0 AND seats.lane_free > 0 AND flight.allowed > 0
),
laned AS (
    SELECT c.id, c.run_at, seats.org_id, seats.seat, seats.free, flight.allowed, seats.turn,
           seats.lane_inflight + row_number() OVER (
               PARTITION BY seats.org_id, seats.seat, seats.lane ORDER BY c.run_at, c.id
           ) AS lane_load
      FROM seats JOIN flight USING (org_id), share, LATERAL (
          SELECT j.id, j.run_at FROM jobs_job j
           WHERE j.status = 'pending' AND j.organization_id = seats.org_id
             AND j.seat = seats.seat AND j.lane = seats.lane AND j.run_at <= now()
             {type_filter}
           ORDER BY j.run_at, j.id
           LIMIT greatest(least(seats.free, seats.lane_free, share.n, flight.allowed), 0)) c
     WHERE seats.free > 0 AND seats.lane_free > 0 AND flight.allowed > 0
),
seated AS (
    SELECT * FROM (
        SELECT laned.*, row_number() OVER (
                   PARTITION BY org_id, seat ORDER BY lane_load, run_at, id) AS seat_rank
          FROM laned) l
     WHERE l.seat_rank <= l.free
),
ranked AS (
    SELECT seated.*, row_number() OVER (PARTITION BY org_id ORDER BY run_at, id) AS rank
      FROM seated
),
candidates AS (
    SELECT ranked.id, ranked.run_at, ranked.rank, %(allow)s - ranked.allowed AS inflight,
           ranked.turn
      FROM ranked, share WHERE ranked.rank <= least(share.n, ranked.allowed)
    UNION ALL
    SELECT sys.id, sys.run_at, row_number() OVER (ORDER BY sys.run_at, sys.id), 0, 0 FROM (
          SELECT j.id, j.run_at FROM jobs_job j
           WHERE j.status = 'pending' AND j.organization_id IS NULL
             AND j.run_at <= now() {type_filter}
           ORDER BY j.run_at, j.id LIMIT %(limit)s
           FOR UPDATE SKIP LOCKED) sys
),
picked AS (SELECT id FROM candidates ORDER BY rank, inflight, turn, run_at LIMIT %(limit)s),
locked AS ({locked})
UPDATE jobs_job j
   SET status = 'processing', attempts = j.attempts + 1, locked_by = %(worker)s,
       locked_at = now(), started_at = now(), updated_at = now(), lease = gen_random_uuid()
 WHERE j.id = ANY(ARRAY(SELECT id FROM locked))
RETURNING {returning}
"""


def _locked_sql() -> str:
    """The claim's row-locking select, built by the ORM: the picked jobs still pending,
    `SELECT ... FOR UPDATE SKIP LOCKED`. Its conditions are raw (they name the `picked`
    step, and keep the status re-check off the partial indexes, see above)."""
    query = (
        Job.objects.select_for_update(skip_locked=True)
        .filter(
            RawSQL('"jobs_job"."id" = ANY(ARRAY(SELECT id FROM picked))', (), BooleanField()),
            RawSQL(""""jobs_job"."status" || '' = 'pending'""", (), BooleanField()),
        )
        .values_list("id", flat=True)
        .query
    )
    sql, params = query.sql_with_params()
    if params or "%" in sql or "{" in sql:
        raise ImproperlyConfigured(f"The claim's locking select cannot be spliced: {sql}")
    return sql


@functools.cache
def claim_sql(*, typed: bool) -> str:
    """The claim statement, for workers of every type or of some (`typed`). Built on first
    use, inside the claim's transaction (the ORM compiles a locking select only there)."""
    type_filter = "AND j.type = ANY(%(types)s::text[])" if typed else ""
    return (
        _CLAIM_SQL.replace("{caps}", _SEAT_CAPS)
        .replace("{locked}", _locked_sql())
        .format(type_filter=type_filter, returning=_CLAIM_RETURNING)
    )


_SESSION_SQL = """
SELECT set_config('enable_sort', 'off', true), set_config('enable_incremental_sort', 'off', true),
       set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true),
       set_config('enable_mergejoin', 'off', true),
       set_config('jit', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true)
"""

# A claim's lease is a fresh random UUID, unique to one job: "the row's lease is one of
# this worker's" is "the row is still held under the lease the worker got for it".
# Batches are matched with `= ANY(array)` on both columns: no join, so no plan that
# multiplies batch sizes.
_LEASE_GUARD = (
    "j.lease = ANY(%(leases)s::uuid[]) AND j.status || '' = 'processing'"
    " AND j.locked_at > now() - make_interval(secs => %(stale_s)s::float8)"
)


@dataclass
class ClaimResult:
    jobs: list[Job]
    contended: bool  # some due organization was being claimed by another worker
    found_due: bool = False  # some organization or system job had due work
    pending_in: float | None = None  # seconds until the next pending job falls due
    waiting_in: float | None = None  # seconds until the next waiting job is promoted


# At most this many organizations are locked by one claim (each takes one lock of the
# shared lock table; with thousands due at once, the others wait for the next claims).
MAX_CLAIM_ORGS = 256
# No fleet share (no live worker registered: tests driving claims by hand).
_UNBOUNDED = 2**31 - 1


def fleet_allow(*, capacity: int, workers: int, due_orgs: int) -> int:
    """How many jobs one organization may hold in flight across the fleet right now.

    The fleet holds `capacity` jobs per live worker. With several organizations due they
    share it evenly; an organization alone may take all of it but a reserve (an eighth,
    once the fleet holds eight), so an organization that falls due later finds a seat at
    once even while the first one's platform hangs every thread it holds. (A smaller
    fleet keeps no reserve: a seat held back would be a quarter or more of it, idle
    whenever no one else falls due.)"""
    if workers <= 0:
        return _UNBOUNDED
    fleet = capacity * workers
    reserve = fleet // 8
    usable = max(1, fleet - reserve)
    return max(1, -(-usable // max(due_orgs, 1)))


@dataclass
class _HeadKeys:
    """Queue heads as the statements take them: parallel arrays of their keys."""

    orgs: list[int] = field(default_factory=list)
    seats: list[str] = field(default_factory=list)
    lanes: list[str] = field(default_factory=list)

    def add(self, org_id: int, seat: str, lane: str) -> None:
        self.orgs.append(org_id)
        self.seats.append(seat)
        self.lanes.append(lane)

    def params(self) -> dict[str, list]:
        return {"orgs": self.orgs, "seats": self.seats, "lanes": self.lanes}


@dataclass
class _DueHeads:
    """What the claim's first statement found (see _DUE_ORGS_SQL)."""

    held: _HeadKeys = field(default_factory=_HeadKeys)  # locked for this claim
    raisable: _HeadKeys = field(default_factory=_HeadKeys)  # held, and theirs to raise
    parked: _HeadKeys = field(default_factory=_HeadKeys)  # inactive, theirs to park
    inactive: set[int] = field(default_factory=set)
    due_orgs: int = 0
    workers: int = 0
    system_due: bool = False
    pending_in: float | None = None
    waiting_in: float | None = None


def _read_due_heads(
    cursor, *, types: Sequence[str] | None, max_orgs: int, stale_s: float
) -> _DueHeads:
    """Run the claim's first statement and sort its rows (see _DUE_ORGS_SQL)."""
    type_filter = "AND j.type = ANY(%(types)s::text[])" if types else ""
    execute_prepared(
        cursor,
        _DUE_ORGS_SQL.format(type_filter=type_filter),
        {
            "ns": CLAIM_LOCK_NAMESPACE,
            "heads_ns": HEADS_LOCK_NAMESPACE,
            "stripes": HEADS_LOCK_STRIPES,
            "max_orgs": max_orgs,
            "stale_s": float(stale_s),
            "types": list(types or ()),
        },
    )
    due = _DueHeads()
    for org_id, seat, lane, raisable, active, *totals in cursor.fetchall():
        if org_id is None:
            due.due_orgs, due.workers, due.system_due, due.pending_in, due.waiting_in = totals
        elif not active:
            due.inactive.add(org_id)
            if raisable:
                due.parked.add(org_id, seat, lane)
        else:
            due.held.add(org_id, seat, lane)
            if raisable:
                due.raisable.add(org_id, seat, lane)
    due.due_orgs -= len(due.inactive)  # parked now, or at a later claim
    return due


def _raise_heads(cursor, due: _DueHeads, rows: list, *, limit: int) -> None:
    """Move the raisable heads to their earliest pending job left, and to the back of
    the turns those that had theirs (see _HEADS_SQL)."""
    if not due.raisable.orgs:
        return
    # A batch that was not filled gave every organization all it could run.
    served = {row[1] for row in rows} if len(rows) >= limit else set(due.held.orgs)
    turns = [org_id in served for org_id in due.raisable.orgs]
    execute_prepared(cursor, _HEADS_SQL, {**due.raisable.params(), "turns": turns})


def _claimed_jobs(rows: list, *, worker: str) -> list[Job]:
    # UPDATE ... RETURNING keeps no order: hand them out earliest run_at first.
    rows.sort(key=lambda row: (row[-1], row[0]))
    jobs = jobs_from_rows(CLAIM_COLUMNS, [row[:-1] for row in rows])
    for job, row in zip(jobs, rows, strict=True):
        job.__dict__.update(
            status=Job.Status.PROCESSING,
            locked_by=worker,
            run_at=datetime.fromtimestamp(float(row[-1]), tz=UTC),
        )
    return jobs


def claim(
    *,
    worker: str,
    limit: int,
    stale_s: float,
    types: Sequence[str] | None,
    capacity: int | None = None,
) -> ClaimResult:
    """Claim up to `limit` due jobs for `worker` in one transaction (see the SQL above).
    `capacity`: how many jobs one worker holds at most (default `limit`), for the fleet
    share.

    Returns the claimed jobs (status processing, attempts already counted, fresh lease)
    and whether another worker held some due organization's claim lock, in which case an
    early retry may find more.
    """
    # More organizations than jobs wanted: some may have no free seat, or (for a worker
    # of some types) nothing of its types due.
    max_orgs = MAX_CLAIM_ORGS if types else min(max(4 * limit, 16), MAX_CLAIM_ORGS)
    with transaction.atomic(), prepared_cursor() as cursor:
        # Statistics lag behind bursts of new jobs (autovacuum analyzes at most once a
        # minute, if it runs at all), and a planner that believes the table tiny would
        # rather read an organization's whole history through its foreign-key index, or
        # every pending job through job_pending_run_at, and sort. The plans these
        # statements need read job_pending_org_lane_run_at in order and sort only the
        # claimed rows, so forbidding avoidable sorts keeps them right whatever the
        # statistics say; being index-driven, they are also planned once (generic plans).
        # JIT is off: wild row estimates would otherwise make PostgreSQL compile these
        # small statements (hundreds of ms each). Sequential scans, hash and merge joins
        # are off too: the queue heads are read by their due index, and their
        # organizations looked up one by one, however few rows the statistics last
        # counted (a hash of every organization would cost what the heads saved). These
        # settings last for this transaction.
        execute_prepared(cursor, _SESSION_SQL, {})
        due = _read_due_heads(cursor, types=types, max_orgs=max_orgs, stale_s=stale_s)
        held = due.held
        n_held = len(set(held.orgs))
        # Due organizations this claim could not lock are being claimed by other workers
        # (or wait for the next claim): an early retry may find more.
        contended = n_held < max_orgs and due.due_orgs > n_held
        found = ClaimResult(
            jobs=[],
            contended=contended,
            found_due=bool(held.orgs or contended or due.system_due),
            pending_in=None if due.pending_in is None else max(due.pending_in, 0.0),
            waiting_in=None if due.waiting_in is None else max(due.waiting_in, 0.0),
        )
        if due.parked.orgs:
            execute_prepared(cursor, _PARK_SQL, due.parked.params())
        if not held.orgs and not due.system_due:
            # Nothing due, or other workers are claiming every due organization: most
            # wake-ups end here, so they skip the claim statement.
            return found
        allow = fleet_allow(capacity=capacity or limit, workers=due.workers, due_orgs=due.due_orgs)
        # Each seat's budget is shared by its lanes due now (see _CLAIM_SQL).
        keys = list(zip(held.orgs, held.seats, strict=True))
        due_lanes = Counter(keys)
        execute_prepared(
            cursor,
            claim_sql(typed=bool(types)),
            {
                **held.params(),
                "lane_counts": [due_lanes[key] for key in keys],
                "limit": limit,
                "allow": allow,
                "stale_s": float(stale_s),
                "worker": worker,
                "types": list(types or ()),
            },
        )
        rows = cursor.fetchall()
        _raise_heads(cursor, due, rows, limit=limit)
        if len(rows) >= limit:
            # A full batch may have left due work behind: wake the other workers for it
            # (those that found this worker holding an organization's claim lock wait for
            # this rather than retrying on a timer).
            notify()
    found.jobs = _claimed_jobs(rows, worker=worker)
    return found


def jobs_from_rows(columns: Sequence[str], rows: Iterable[Sequence]) -> list[Job]:
    """Job instances from raw rows. Built the way Model.from_db would, minus the per-row
    __init__ and signals (a claim builds hundreds at once); columns not given are
    deferred and load on first access, as with `.only()`."""
    json_idx = [i for i, c in enumerate(columns) if c in _JSON_COLUMNS]
    names = list(columns)
    db = connection.alias
    new = Job.__new__
    jobs = []
    for row in rows:
        values = dict(zip(names, row, strict=True))
        for i in json_idx:
            value = row[i]
            if value == "{}":  # most payloads: skip the parser
                values[names[i]] = {}
            elif isinstance(value, str):
                values[names[i]] = json.loads(value)
        job = new(Job)
        state = ModelState()
        state.adding, state.db = False, db
        job._state = state
        job.__dict__.update(values)
        jobs.append(job)
    return jobs


def complete_done(items: Sequence[tuple[int, uuid.UUID, float]], *, stale_s: float) -> set[int]:
    """Mark jobs done in one statement. Each item is (job id, lease, seconds between the
    claim and the handler's start, to record the true start on the database clock).
    Returns the ids written; the others had lost their lease."""
    if not items:
        return set()
    ids, leases, delays = zip(*items, strict=True)
    sql = f"""
        UPDATE jobs_job j
           SET status = 'done', finished_at = now(), updated_at = now(),
               started_at = j.started_at + make_interval(
                   secs => (%(delays)s::float8[])[array_position(%(ids)s::bigint[], j.id)])
         WHERE j.id = ANY(%(ids)s::bigint[]) AND {_LEASE_GUARD}
        RETURNING j.id
    """  # noqa: S608 - only constants are spliced in
    params = {
        "ids": _array(ids),
        "leases": _array(leases),
        "delays": _array(delays),
        "stale_s": stale_s,
    }
    with prepared_cursor() as cursor:
        execute_prepared(cursor, sql, params)
        return {row[0] for row in cursor.fetchall()}


def heartbeat(items: Sequence[tuple[int, uuid.UUID]], *, stale_s: float) -> set[int]:
    """Refresh locked_at of the jobs this worker still holds; returns the ids refreshed.
    A job missing from the result was recovered or taken over: its lease is gone."""
    if not items:
        return set()
    ids, leases = zip(*items, strict=True)
    sql = f"""
        UPDATE jobs_job j SET locked_at = now()
         WHERE j.id = ANY(%(ids)s::bigint[]) AND {_LEASE_GUARD}
        RETURNING j.id
    """  # noqa: S608 - only constants are spliced in
    with prepared_cursor() as cursor:
        execute_prepared(
            cursor, sql, {"ids": _array(ids), "leases": _array(leases), "stale_s": stale_s}
        )
        return {row[0] for row in cursor.fetchall()}


def release(items: Sequence[tuple[int, uuid.UUID]], *, stale_s: float) -> set[int]:
    """Give claimed jobs that never started back to the queue, refunding the attempt and
    keeping their run_at (their place in line). Returns the ids released."""
    if not items:
        return set()
    ids, leases = zip(*items, strict=True)
    sql = f"""
        UPDATE jobs_job j
           SET status = 'pending', attempts = greatest(j.attempts - 1, 0), locked_by = '',
               locked_at = NULL, lease = NULL, started_at = NULL, updated_at = now()
         WHERE j.id = ANY(%(ids)s::bigint[]) AND {_LEASE_GUARD}
        RETURNING j.id
    """  # noqa: S608 - only constants are spliced in
    with prepared_cursor() as cursor:
        execute_prepared(
            cursor, sql, {"ids": _array(ids), "leases": _array(leases), "stale_s": stale_s}
        )
        ids_released = {row[0] for row in cursor.fetchall()}
    if ids_released:
        notify()
    return ids_released


@dataclass
class Transition:
    """A non-done outcome to write under the lease."""

    status: str
    last_error: dict | None = None
    delay_s: float | None = None  # new run_at = now() + delay (pending / waiting)
    refund_attempt: bool = False  # snooze, waiting: the attempt is not spent
    snoozed_s: float = 0.0
    waited_s: float = 0.0
    payload_patch: dict | None = None
    started_delay_s: float = 0.0

    @property
    def is_final(self) -> bool:
        return self.status in Job.FINISHED


def transition(job_id: int, lease: uuid.UUID | None, change: Transition, *, stale_s: float) -> bool:
    """Write one outcome under the lease; False when the lease was lost (nothing written).
    A job with no lease holds none: nothing is written."""
    final = change.is_final
    sql = f"""
        UPDATE jobs_job j
           SET status = %(status)s,
               run_at = CASE WHEN %(delay)s::float8 IS NULL THEN j.run_at
                             ELSE now() + make_interval(secs => %(delay)s::float8) END,
               attempts = greatest(j.attempts - %(refund)s, 0),
               last_error = coalesce(%(error)s::jsonb, j.last_error),
               snoozed_s = j.snoozed_s + %(snoozed)s,
               waited_s = j.waited_s + %(waited)s,
               payload = j.payload || %(patch)s::jsonb,
               started_at = j.started_at + make_interval(secs => %(started)s::float8),
               finished_at = CASE WHEN %(final)s THEN now() END,
               locked_by = CASE WHEN %(final)s THEN j.locked_by ELSE '' END,
               locked_at = CASE WHEN %(final)s THEN j.locked_at END,
               lease = CASE WHEN %(final)s THEN j.lease END,
               updated_at = now()
         WHERE j.id = %(id)s AND {_LEASE_GUARD}
        RETURNING j.id
    """  # noqa: S608 - only constants are spliced in
    params = {
        "status": change.status,
        "delay": change.delay_s,
        "refund": 1 if change.refund_attempt else 0,
        "error": _dumps(change.last_error) if change.last_error is not None else None,
        "snoozed": change.snoozed_s,
        "waited": change.waited_s,
        "patch": _dumps(change.payload_patch or {}),
        "started": change.started_delay_s,
        "final": final,
        "id": job_id,
        "leases": [lease],
        "stale_s": stale_s,
    }
    with prepared_cursor() as cursor:
        execute_prepared(cursor, sql, params)
        return cursor.fetchone() is not None


def promote_waiting(*, limit: int = 1000) -> int:
    """Move waiting jobs whose run_at has come back to pending; returns how many."""
    sql = """
        UPDATE jobs_job j SET status = 'pending', updated_at = now()
          FROM (SELECT id FROM jobs_job WHERE status = 'waiting' AND run_at <= now()
                 ORDER BY run_at LIMIT %(limit)s FOR UPDATE SKIP LOCKED) w
         WHERE j.id = w.id
    """
    with prepared_cursor() as cursor:
        execute_prepared(cursor, sql, {"limit": limit})
        return cursor.rowcount


def notify() -> None:
    """Wake listening workers (delivered when the current transaction commits)."""
    with prepared_cursor() as cursor:
        execute_prepared(cursor, "SELECT pg_notify(%(channel)s, '')", {"channel": NOTIFY_CHANNEL})


def _array(values: Iterable) -> str:
    """A PostgreSQL array literal of numbers or UUIDs ("{1,2,3}"), cast in the SQL: far
    cheaper to build and send than a list adapted element by element."""
    return "{" + ",".join(map(str, values)) + "}"


def _dumps(value: dict) -> str:
    return json.dumps(value, default=str)
