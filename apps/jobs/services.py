"""Writes to the job queue: enqueue, cancel, retry, release, stale recovery, leases,
periodic jobs, pruning and vacuuming. The worker's per-batch statements live in
`apps.jobs.queue`."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from apps.accounts.models import Organization, Workspace
from apps.common.errors import ValidationFailed
from apps.jobs import queue
from apps.jobs.constants import VACUUM_DEAD_ROWS
from apps.jobs.errors import CANCELLED, DATABASE_ERROR, STALE, TIMED_OUT, LeaseLost
from apps.jobs.models import Job
from apps.jobs.registry import JobType, StalePolicy, get_job_type, job_types

logger = logging.getLogger(__name__)

# A field is concrete exactly when it has a column; the test narrows the type.
_JOB_COLUMNS = tuple(f.column for f in Job._meta.concrete_fields if f.column is not None)
_UNFINISHED_SQL = "('pending', 'processing', 'waiting')"
# A job a database error interrupted runs again after 1 s, 2 s, 4 s..., at most this long.
INTERRUPTED_RETRY_CAP_S = 30.0
# Must match the predicate of the job_dedupe_key_unfinished index, so ON CONFLICT uses it.
_ON_DEDUPE_CONFLICT = (
    "ON CONFLICT (dedupe_key) WHERE (dedupe_key IS NOT NULL AND status IN "
    f"{_UNFINISHED_SQL}) DO NOTHING"
)
_INSERT_COLUMNS = (
    "organization_id, workspace_id, type, seat, payload, status, run_at, attempts,"
    " max_attempts, locked_by, dedupe_key, recoveries, snoozed_s, waited_s, created_at,"
    " updated_at"
)


@dataclass(frozen=True)
class JobSpec:
    """One job for `job_enqueue_many`."""

    type: str
    payload: dict = field(default_factory=dict)
    organization_id: int | None = None
    workspace_id: int | None = None
    run_at: datetime | None = None
    dedupe_key: str | None = None
    max_attempts: int | None = None
    lane: str = ""


def job_enqueue(
    *,
    type: str,
    payload: dict,
    organization: Organization | None,
    workspace: Workspace | None = None,
    run_at: datetime | None = None,
    dedupe_key: str | None = None,
    max_attempts: int | None = None,
    lane: str = "",
) -> Job:
    """Add a job, due at `run_at` (default: now, on the database clock).

    Runs in the caller's transaction: the job exists iff the caller commits, and the
    NOTIFY that wakes workers is delivered at that commit. `organization` may be left
    None when `workspace` is given (it is taken from the workspace); None for both makes
    a system job, under no organization's cap. The job counts against the organization
    budget its type declares (`seat`), in its `lane` (the platform a publishing job talks
    to: an organization's due lanes share its budget).

    Dedupe: when `dedupe_key` is given and an unfinished job (pending, processing or
    waiting) already holds it, nothing is added and that existing job is returned as is
    (its type, payload and run_at are not changed). Once that job finishes, the key is
    free again.
    """
    job_type = _validated_type(type)
    if workspace is not None:
        if organization is None:
            organization = workspace.organization
        elif workspace.organization_id != organization.pk:
            raise ValidationFailed("The workspace does not belong to the organization.")
    row = _validated_row(
        JobSpec(
            type=type,
            payload=payload,
            organization_id=organization.pk if organization else None,
            workspace_id=workspace.pk if workspace else None,
            run_at=run_at,
            dedupe_key=dedupe_key,
            max_attempts=max_attempts,
            lane=lane,
        ),
        job_type,
    )
    columns = ", ".join(_JOB_COLUMNS)
    sql = f"""
        WITH ins AS (
            INSERT INTO jobs_job ({_INSERT_COLUMNS}, lane)
            VALUES (%s, %s, %s, %s, %s::jsonb, 'pending', coalesce(%s::timestamptz, now()), 0,
                    %s, '', %s, 0, 0, 0, statement_timestamp(), statement_timestamp(), %s)
            {_ON_DEDUPE_CONFLICT}
            RETURNING {columns}
        )
        SELECT {columns}, pg_notify(%s, '') FROM ins
    """  # noqa: S608 - only constants are spliced in
    # A conflicting job can finish between the INSERT and the SELECT; then insert again.
    for _ in range(3):
        with connection.cursor() as cursor:
            cursor.execute(sql, [*row, queue.NOTIFY_CHANNEL])
            inserted = cursor.fetchone()
            if inserted is not None:
                return queue.jobs_from_rows(_JOB_COLUMNS, [inserted[:-1]])[0]
        existing = Job.objects.unfinished().filter(dedupe_key=dedupe_key).first()
        if existing is not None:
            return existing
    raise RuntimeError(f"Could not enqueue job with dedupe key {dedupe_key!r}.")


def job_enqueue_many(specs: Iterable[JobSpec], *, chunk_size: int = 1000) -> int:
    """Add many jobs with one statement per chunk; returns how many were added (jobs whose
    dedupe key is held by an unfinished job are skipped). Transactional like job_enqueue."""
    created = 0
    chunk: list[tuple] = []
    for spec in specs:
        chunk.append(_validated_row(spec, _validated_type(spec.type)))
        if len(chunk) >= chunk_size:
            created += _insert_chunk(chunk)
            chunk = []
    if chunk:
        created += _insert_chunk(chunk)
    return created


def _insert_chunk(rows: list[tuple]) -> int:
    """Insert the rows; the statement also sends the NOTIFY that wakes workers when it
    added any (delivered at commit), as job_enqueue's does."""
    columns = [list(values) for values in zip(*rows, strict=True)]
    sql = f"""
        WITH ins AS (
            INSERT INTO jobs_job ({_INSERT_COLUMNS}, lane)
            SELECT v.org, v.ws, v.type, v.seat, v.payload, 'pending', coalesce(v.run_at, now()),
                   0, v.max_attempts, '', v.key, 0, 0, 0, statement_timestamp(),
                   statement_timestamp(), v.lane
              FROM unnest(%s::bigint[], %s::bigint[], %s::text[], %s::text[], %s::jsonb[],
                          %s::timestamptz[], %s::int[], %s::text[], %s::text[])
                   AS v(org, ws, type, seat, payload, run_at, max_attempts, key, lane)
            {_ON_DEDUPE_CONFLICT}
            RETURNING 1
        ), added AS (SELECT count(*) AS n FROM ins)
        SELECT n, CASE WHEN n > 0 THEN (SELECT 1 FROM pg_notify(%s, '')) END FROM added
    """  # noqa: S608 - only constants are spliced in
    with connection.cursor() as cursor:
        cursor.execute(sql, [*columns, queue.NOTIFY_CHANNEL])
        return cursor.fetchone()[0]


def _validated_type(name: str) -> JobType:
    try:
        return get_job_type(name)
    except LookupError:
        raise ValidationFailed(f"Unknown job type {name!r}.", code="UNKNOWN_JOB_TYPE") from None


def _validated_row(spec: JobSpec, job_type: JobType) -> tuple:
    if not isinstance(spec.payload, dict):
        raise ValidationFailed("A job payload must be a JSON object (dict).")
    try:
        payload = json.dumps(spec.payload)
    except (TypeError, ValueError) as exc:
        raise ValidationFailed(f"The job payload is not JSON-serializable: {exc}") from exc
    if spec.run_at is not None and timezone.is_naive(spec.run_at):
        raise ValidationFailed("run_at must be an aware datetime.")
    if spec.dedupe_key is not None and not 0 < len(spec.dedupe_key) <= 255:
        raise ValidationFailed("dedupe_key must be 1 to 255 characters.")
    if len(spec.lane) > 32:
        raise ValidationFailed("lane must be at most 32 characters.")
    max_attempts = spec.max_attempts if spec.max_attempts is not None else job_type.max_attempts
    if max_attempts < 1:
        raise ValidationFailed("max_attempts must be at least 1.")
    return (
        spec.organization_id,
        spec.workspace_id,
        spec.type,
        job_type.seat.value,
        payload,
        spec.run_at,
        max_attempts,
        spec.dedupe_key,
        spec.lane,
    )


def job_cancel(
    *, job_id: int | None = None, dedupe_key: str | None = None, reason: str = ""
) -> bool:
    """Cancel a pending or waiting job, by id or by dedupe key. Returns False when there
    is nothing to cancel: no such unfinished job, or it is already processing (a running
    job is never interrupted; its handler decides from the current state)."""
    if (job_id is None) == (dedupe_key is None):
        raise ValueError("Give exactly one of job_id and dedupe_key.")
    error = json.dumps({"kind": CANCELLED, "message": reason or "Cancelled."})
    target = "id = %s" if job_id is not None else "dedupe_key = %s"
    sql = f"""
        UPDATE jobs_job SET status = 'cancelled', finished_at = now(), updated_at = now(),
               last_error = %s::jsonb, locked_by = '', locked_at = NULL
         WHERE {target} AND status IN ('pending', 'waiting')
        RETURNING id
    """  # noqa: S608 - only constants are spliced in
    with connection.cursor() as cursor:
        cursor.execute(sql, [error, job_id if job_id is not None else dedupe_key])
        return cursor.fetchone() is not None


def job_retry_now(*, job_ids: Iterable[int]) -> int:
    """Run failed, pending or waiting jobs as soon as a worker is free. A failed job gets
    one more attempt if it had spent them all. Jobs whose dedupe key has meanwhile been
    taken by another unfinished job are left alone. Returns how many were moved."""
    sql = f"""
        UPDATE jobs_job j
           SET status = 'pending', run_at = now(), finished_at = NULL, updated_at = now(),
               max_attempts = greatest(j.max_attempts, j.attempts + 1),
               locked_by = '', locked_at = NULL, lease = NULL
         WHERE j.id = ANY(%s::bigint[]) AND j.status IN ('failed', 'pending', 'waiting')
           AND NOT (j.status = 'failed' AND j.dedupe_key IS NOT NULL AND EXISTS (
               SELECT 1 FROM jobs_job o WHERE o.dedupe_key = j.dedupe_key
                  AND o.status IN {_UNFINISHED_SQL} AND o.id <> j.id))
    """  # noqa: S608 - only constants are spliced in
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, [list(job_ids)])
        moved = cursor.rowcount
        if moved:
            queue.notify()
    return moved


def job_release(*, job_ids: Iterable[int]) -> int:
    """An operator's "release lock": recover processing jobs now, as if their worker had
    died, by each type's stale policy (a read-only job goes back to pending; a publish
    whose request may have gone out is closed as its type decides, never blindly rerun).
    Returns how many were recovered."""
    return job_recover_stale(job_ids=list(job_ids))


def job_recover_stale(
    *,
    stale_s: float | None = None,
    job_ids: list[int] | None = None,
    leases: list | None = None,
    limit: int = 200,
    timed_out_after_s: float | None = None,
    interrupted: dict | None = None,
) -> int:
    """Recover processing jobs whose heartbeat is older than `stale_s` (or exactly the
    given `job_ids`, whatever their heartbeat, and only while still under one of `leases`
    when given) by their type's StalePolicy. With `timed_out_after_s`, the jobs are ones
    whose handler ran past its time limit: the error's kind is "timed_out". With
    `interrupted` (a database error stopped the handler, see job_recover_interrupted), the
    given jobs are requeued whatever their type, and their rows are waited for (briefly,
    under the session's lock timeout) rather than skipped.

    Each job is recovered in its own savepoint, and an `on_stale` callback runs in the
    transaction that closes the job. A callback that raises leaves its job processing,
    with its heartbeat pushed forward so the next pass does not spin on it.
    """
    params: list[float | list[Any]]
    if job_ids is not None:
        where, params = "status = 'processing' AND id = ANY(%s::bigint[])", [job_ids]
        if leases is not None:
            where += " AND lease = ANY(%s::uuid[])"
            params.append(leases)
    else:
        if stale_s is None:
            stale_s = settings.WORKER_STALE_AFTER_S
        where = "status = 'processing' AND locked_at <= now() - make_interval(secs => %s)"
        params = [stale_s]
    columns = ", ".join(_JOB_COLUMNS)
    recovered = 0
    with transaction.atomic():
        with connection.cursor() as cursor:
            lock = "FOR UPDATE" if interrupted is not None else "FOR UPDATE SKIP LOCKED"
            cursor.execute(
                f"SELECT {columns} FROM jobs_job WHERE {where} ORDER BY locked_at"  # noqa: S608
                f" LIMIT %s {lock}",
                [*params, limit],
            )
            jobs = queue.jobs_from_rows(_JOB_COLUMNS, cursor.fetchall())
        for job in jobs:
            try:
                with transaction.atomic():
                    _recover_one(job, timed_out_after_s=timed_out_after_s, interrupted=interrupted)
                recovered += 1
            except Exception:
                logger.exception(
                    "Stale recovery of job %s (%s) failed; retrying after another window.",
                    job.pk,
                    job.type,
                    extra={"job_id": job.pk, "organization_id": job.organization_id},
                )
                with connection.cursor() as cursor:
                    cursor.execute(
                        "UPDATE jobs_job SET locked_at = now() WHERE id = %s"
                        " AND status = 'processing'",
                        [job.pk],
                    )
    return recovered


def _recover_one(
    job: Job, *, timed_out_after_s: float | None = None, interrupted: dict | None = None
) -> None:
    job_type: JobType | None
    try:
        job_type = get_job_type(job.type)
        policy = job_type.stale_policy
    except LookupError:
        job_type, policy = None, StalePolicy.FAIL
    worker = job.locked_by or "unknown worker"
    error: dict[str, Any] = {"kind": STALE, "worker": worker, "attempt": job.attempts}
    what = f"{worker} stopped heart-beating"
    requeue_in_s = 0.0
    if timed_out_after_s is not None:
        error.update(kind=TIMED_OUT, time_limit_s=timed_out_after_s)
        what = f"The handler ran past its {timed_out_after_s:g}s time limit on {worker}"
    if interrupted is not None:
        # Nothing was decided: run the job again, whatever its type. Its next run finds
        # what this one left (a publish's attempt in flight is settled as ambiguous and
        # looked up, never resent blindly). Spaced out, so an error that persists (a lock
        # timeout every time) ends in the type's own policy after max_attempts tries.
        error = {**interrupted, "kind": DATABASE_ERROR}
        what = (
            f"A database error ({interrupted.get('message', '')}) stopped the handler on {worker}"
        )
        policy = StalePolicy.REQUEUE if job_type is not None else policy
        requeue_in_s = min(INTERRUPTED_RETRY_CAP_S, 2.0**job.recoveries)
    if policy == StalePolicy.REQUEUE and job.recoveries + 1 > job.max_attempts:
        policy = StalePolicy.FAIL
        if interrupted is not None and job_type is not None:
            policy = job_type.stale_policy  # publish: its callback settles the rendition
        error["message"] = f"{what} {job.recoveries + 1} times; gave up."
    if policy == StalePolicy.REQUEUE:
        error["message"] = f"{what}; requeued (attempt not spent)."
        sql = """
            UPDATE jobs_job SET status = 'pending', updated_at = now(),
                   run_at = now() + make_interval(secs => %s),
                   attempts = greatest(attempts - 1, 0), recoveries = recoveries + 1,
                   last_error = %s::jsonb, locked_by = '', locked_at = NULL, lease = NULL,
                   started_at = NULL
             WHERE id = %s
        """
        new_status = Job.Status.PENDING
    else:
        new_status = Job.Status.CANCELLED if policy == StalePolicy.CLOSE else Job.Status.FAILED
        error.setdefault(
            "message",
            f"{what}; " + ("closed as superseded." if policy == StalePolicy.CLOSE else "failed."),
        )
        sql = f"""
            UPDATE jobs_job SET status = '{new_status}', finished_at = now(), updated_at = now(),
                   recoveries = recoveries + 1, last_error = %s::jsonb
             WHERE id = %s
        """  # noqa: S608 - only constants are spliced in
    params: list[Any] = [json.dumps(error), job.pk]
    if new_status == Job.Status.PENDING:
        params.insert(0, requeue_in_s)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
    job.status, job.last_error, job.recoveries = new_status, error, job.recoveries + 1
    logger.warning(
        "Recovered %s job %s (%s) from %s: %s.",
        error["kind"],
        job.pk,
        job.type,
        worker,
        new_status,
        extra={"job_id": job.pk, "organization_id": job.organization_id},
    )
    if policy == StalePolicy.CALLBACK:
        # The policy came from the type, and register() refuses CALLBACK without on_stale.
        assert job_type is not None and job_type.on_stale is not None
        job_type.on_stale(job)
    if job_type is not None and job_type.is_periodic and new_status != Job.Status.PENDING:
        schedule_next_periodic(job_type)


def job_recover_interrupted(*, job: Job, error: dict) -> str | None:
    """A database error stopped the job's handler (connection lost, server restarting, a
    lock or statement timeout): nothing was decided, so the job goes back to pending
    without spending the attempt (spaced 1 s, 2 s, 4 s... up to INTERRUPTED_RETRY_CAP_S),
    while this claim still holds it. After max_attempts such recoveries its type's stale
    policy decides. Returns the job's new status, or None when the lease was lost."""
    recovered = job_recover_stale(job_ids=[job.pk], leases=[job.lease], interrupted=error)
    if not recovered:
        return None
    return Job.objects.filter(pk=job.pk).values_list("status", flat=True).first()


def lease_is_held(job: Job) -> bool:
    """Inside the caller's atomic block: lock the job's row and say whether this claim's
    lease still holds (processing, same lease, live heartbeat). Write a job's outcome
    (a rendition's state...) only while it returns True: the row lock keeps stale
    recovery and other workers out until the caller's transaction ends."""
    if not connection.in_atomic_block:
        raise RuntimeError("lease_is_held() must run inside transaction.atomic().")
    if job.lease is None:
        return False
    sql = """
        SELECT 1 FROM jobs_job
         WHERE id = %s AND lease = %s AND status = 'processing'
           AND locked_at > now() - make_interval(secs => %s)
        FOR UPDATE
    """
    stale_s = getattr(job, "_stale_after_s", settings.WORKER_STALE_AFTER_S)
    with connection.cursor() as cursor:
        cursor.execute(sql, [job.pk, job.lease, stale_s])
        return cursor.fetchone() is not None


@contextmanager
def holding_lease(job: Job) -> Iterator[None]:
    """`with holding_lease(job): ...` runs the block in a transaction that holds the job's
    lease, or raises LeaseLost (the worker then writes no outcome for the job)."""
    with transaction.atomic():
        if not lease_is_held(job):
            raise LeaseLost(f"Job {job.pk} is no longer held by this worker.")
        yield


def schedule_next_periodic(job_type: JobType, *, now: bool = False) -> bool:
    """Ensure the periodic type has its one unfinished instance: due now, or one period
    from now. Returns True if a job was added (False: one already exists)."""
    if job_type.periodic_every is None:
        raise ValueError(f"Job type {job_type.name!r} is not periodic.")
    delay = 0.0 if now else job_type.periodic_every.total_seconds()
    sql = f"""
        INSERT INTO jobs_job ({_INSERT_COLUMNS})
        VALUES (NULL, NULL, %s, %s, '{{}}'::jsonb, 'pending', now() + make_interval(secs => %s),
                0, %s, '', %s, 0, 0, 0, statement_timestamp(), statement_timestamp())
        {_ON_DEDUPE_CONFLICT}
    """  # noqa: S608 - only constants are spliced in
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            [
                job_type.name,
                job_type.seat.value,
                delay,
                job_type.max_attempts,
                job_type.periodic_dedupe_key,
            ],
        )
        return cursor.rowcount == 1


def ensure_periodic_jobs(types: Iterable[str] | None = None) -> int:
    """Give every periodic type (of `types`, default all) its one unfinished instance."""
    wanted = set(types) if types else None
    added = 0
    for name, job_type in sorted(job_types().items()):
        if job_type.is_periodic and (wanted is None or name in wanted):
            added += schedule_next_periodic(job_type, now=True)
    return added


def jobs_prune_finished(
    *, older_than_days: float | None = None, chunk: int = 5000, max_chunks: int = 200
) -> int:
    """Delete finished jobs (done, failed, cancelled) whose finished_at is older than the
    retention period (JOB_RETENTION_DAYS), in short chunks so no lock is held for long,
    and worker registry rows not seen for as long. Returns how many jobs were deleted."""
    days = settings.JOB_RETENTION_DAYS if older_than_days is None else older_than_days
    sql = """
        DELETE FROM jobs_job WHERE id IN (
            SELECT id FROM jobs_job
             WHERE created_at < now() - make_interval(days => 1) * %s
               AND finished_at < now() - make_interval(days => 1) * %s
               AND status IN ('done', 'failed', 'cancelled')
             LIMIT %s)
    """
    deleted = 0
    with connection.cursor() as cursor:
        for _ in range(max_chunks):
            cursor.execute(sql, [days, days, chunk])
            deleted += cursor.rowcount
            if cursor.rowcount < chunk:
                break
        cursor.execute(
            "DELETE FROM jobs_workerprocess"
            " WHERE last_seen_at < now() - make_interval(days => 1) * %s",
            [days],
        )
    return deleted


def jobs_vacuum_if_needed(*, dead_rows: int = VACUUM_DEAD_ROWS) -> bool:
    """VACUUM (ANALYZE) jobs_job, and the queue heads, once a table holds `dead_rows`
    dead rows or more; True if one ran. Every claim walks past the dead entries a burst
    leaves in the pending-only indexes (and every claim rewrites the heads it serves)
    until a vacuum removes them: this keeps that bounded where autovacuum is off or
    behind (where it keeps up, the tables never get there). Must run outside a
    transaction (VACUUM cannot run inside one); it blocks no reads or writes."""
    ran = False
    for table in ("jobs_job", "jobs_queuehead"):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = %s::regclass", [table]
            )
            row = cursor.fetchone()
            if row is None or row[0] < dead_rows:
                continue
            cursor.execute(f"VACUUM (ANALYZE) {table}")
        logger.info("Vacuumed %s (%d dead rows).", table, row[0])
        ran = True
    return ran
