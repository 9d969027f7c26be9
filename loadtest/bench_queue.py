"""The scenarios `bench_queue` runs against real `run_worker` processes.

Every figure is computed from the jobs' own timestamps on the database clock: `created_at`
(enqueue), `run_at` (due), `started_at` (the handler started: the claim's `now()` plus the
time the job waited in the worker) and `finished_at`.
"""

from __future__ import annotations

import os
import random
import secrets
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import psycopg.conninfo
from django.db import connection, transaction

from apps.accounts.models import Organization
from apps.common.processes import ChildProcess, manage_argv, stop_all
from apps.jobs import queue
from apps.jobs.builtin import NOOP, VACUUM
from apps.jobs.execution import lease_of
from apps.jobs.models import Job, WorkerProcess
from apps.jobs.services import JobSpec, job_enqueue, job_enqueue_many
from loadtest import raw_queue
from loadtest.progress import TextOut, draw_rate_bar

# Columns of the rows the bench inserts in bulk (history, the raw loops' jobs).
_INSERT_COLUMNS = (
    "organization_id, workspace_id, type, seat, payload, status, run_at, attempts,"
    " max_attempts, locked_by, dedupe_key, recoveries, snoozed_s, waited_s, created_at,"
    " updated_at"
)


@dataclass
class BenchConfig:
    jobs: int = 20_000
    orgs: int = 10
    workers: int = 4
    threads: int = 2
    batch_size: int = 500
    cap: int = 1000
    latency_jobs: int = 300
    scheduled_jobs: int = 300
    fair_big: int = 40_000
    fair_small_orgs: int = 9
    fair_small_jobs: int = 10
    timeout_s: float = 300.0
    raw_reference: bool = True
    history: int = 0
    history_steps: tuple[int, ...] = ()
    probe_claims: int = 200
    burst_trickle: bool = False
    burst_jobs: int = 40_000
    idle_orgs: int = 0
    everyone_at_nine: bool = False
    nine_orgs: int = 10_000


# Sizes at which claim_ms_p50_by_idle_orgs is measured (those up to --idle-orgs, and it).
IDLE_ORG_STEPS = (0, 10_000, 100_000)


@dataclass
class Bench:
    """One run: its organizations and worker processes, and the figures it measured."""

    config: BenchConfig
    progress: TextOut
    tag: str = field(default_factory=lambda: f"bench-{secrets.token_hex(3)}")
    figures: dict = field(default_factory=dict)
    _orgs: list[Organization] = field(default_factory=list)
    _procs: list[ChildProcess] = field(default_factory=list)
    _log: Path | None = None
    _history_rows: int = 0
    _burst_org: Organization | None = None
    _idle_org_ids: list[int] = field(default_factory=list)

    # -- lifecycle ---------------------------------------------------------------------

    def run(self, *, fairness: bool = True) -> dict:
        completed = False
        stopped = False
        # Start from a clean table: where autovacuum is off or behind, dead rows left by
        # earlier runs would be measured instead of the queue.
        self._vacuum()
        try:
            if self.config.history_steps:
                self.claim_cost_by_history()
            self.add_history(self.config.history)
            self.figures["history"] = self._history_rows
            if self.config.idle_orgs:
                self.claim_cost_by_idle_orgs()
            self.figures["idle_orgs"] = len(self._idle_org_ids)
            self.figures.update(self.claim_cost())
            self.start_workers()
            self.throughput()
            if self.config.raw_reference:
                self.raw_reference()
            self.immediate_latency()
            self.scheduled_latency()
            if fairness:
                self.fairness()
            if self.config.burst_trickle:
                self.burst_trickle()
            if self.config.everyone_at_nine:
                self.everyone_at_nine()
            self.figures["worker_exit_codes"] = codes = self.stop_workers()
            stopped = True
            if self.config.burst_trickle:
                # The claim's cost with the burst's dead rows still in the table (no
                # vacuum in between unless autovacuum ran).
                after = self.claim_cost(org=self._burst_org)
                self.figures["claim_ms_p50_after_burst"] = after["claim_ms_p50"]
                self.figures["claim_ms_p99_after_burst"] = after["claim_ms_p99"]
            completed = True
        finally:
            if not stopped:
                self.figures["worker_exit_codes"] = codes = self.stop_workers()
            self.figures["duplicate_claims"] = self._duplicates()
            self.cleanup()
            if completed and codes == [0] * len(codes) and self._log is not None:
                self._log.unlink(missing_ok=True)  # kept only when something went wrong
        return self.figures

    def start_workers(self) -> None:
        cfg = self.config
        # One log for every worker, kept only when something went wrong (see run).
        fd, name = tempfile.mkstemp(prefix=f"{self.tag}-", suffix=".log")
        os.close(fd)
        self._log = Path(name)
        env = {**os.environ, "LOG_LEVEL": os.environ.get("BENCH_WORKER_LOG_LEVEL", "WARNING")}
        for i in range(cfg.workers):
            argv = manage_argv(
                "run_worker",
                "--types",
                # The housekeeping vacuum too, as every deployed worker runs it.
                f"{NOOP},{VACUUM}",
                "--threads",
                str(cfg.threads),
                "--batch-size",
                str(cfg.batch_size),
                "--name",
                f"{self.tag}-{i}",
                "--grace",
                "5",
            )
            self._procs.append(ChildProcess(argv, env=env, log=self._log))
        self._wait_for(
            lambda: (
                WorkerProcess.objects.filter(
                    name__startswith=self.tag, stopped_at__isnull=True
                ).count()
                >= cfg.workers
            ),
            what="workers to register",
            timeout=60,
        )

    def stop_workers(self) -> list[int | None]:
        return stop_all(self._procs, timeout=30)

    def cleanup(self) -> None:
        ids = [org.pk for org in self._orgs]
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM jobs_job WHERE organization_id = ANY(%s)", [ids])
            # The idle organizations hold nothing but their jobs and queue heads: removed
            # by SQL (the ORM would collect a hundred thousand rows first).
            idle = self._idle_org_ids
            cursor.execute("DELETE FROM jobs_job WHERE organization_id = ANY(%s)", [idle])
            cursor.execute("DELETE FROM jobs_queuehead WHERE organization_id = ANY(%s)", [idle])
            cursor.execute("DELETE FROM accounts_organization WHERE id = ANY(%s)", [idle])
        Organization.objects.filter(pk__in=ids).delete()
        WorkerProcess.objects.filter(name__startswith=self.tag).delete()

    # -- scenarios ---------------------------------------------------------------------

    def throughput(self) -> None:
        """N jobs over W organizations, enqueued in one transaction; drained by P workers."""
        cfg = self.config
        orgs = self._make_orgs("t", cfg.orgs)
        specs = (
            JobSpec(type=NOOP, organization_id=orgs[i % len(orgs)].pk) for i in range(cfg.jobs)
        )
        started = time.perf_counter()
        with transaction.atomic():
            job_enqueue_many(specs)
        enqueue_s = time.perf_counter() - started
        cpu_before = self._cpu_seconds()
        committed_at = _db_clock()
        ids = [org.pk for org in orgs]
        self._wait_done(ids, cfg.jobs, label="drain")
        cpu_after = self._cpu_seconds()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT max(finished_at) FROM jobs_job WHERE organization_id = ANY(%s)", [ids]
            )
            drain_s = (cursor.fetchone()[0] - committed_at).total_seconds()
        self.figures.update(
            enqueue_per_s=round(cfg.jobs / enqueue_s),
            drain_s=round(drain_s, 3),
            jobs_per_s=round(cfg.jobs / drain_s),
        )
        if cpu_before is not None and cpu_after is not None:
            # CPU time the drain cost per job (whatever else the machine was doing).
            for key in ("workers", "database"):
                spent = cpu_after[key] - cpu_before[key]
                self.figures[f"{key}_cpu_us_per_job"] = round(spent / cfg.jobs * 1e6, 1)

    def immediate_latency(self, prefix: str = "", org: Organization | None = None) -> None:
        """Jobs enqueued one at a time (own transaction each), as an API would, with the
        workers idle in between: enqueue to handler start."""
        cfg = self.config
        if org is None:
            [org] = self._make_orgs("l", 1)
        ids, spent = [], 0.0
        for _ in range(cfg.latency_jobs):
            started = time.perf_counter()
            ids.append(job_enqueue(type=NOOP, payload={}, organization=org).pk)
            spent += time.perf_counter() - started
            time.sleep(random.uniform(0.002, 0.012))  # noqa: S311
        self._wait_done([org.pk], cfg.latency_jobs, label="latency")
        p50, p99 = _percentiles(ids, "started_at - created_at")
        self.figures.update(
            {
                f"{prefix}enqueue_single_per_s": round(cfg.latency_jobs / spent),
                f"{prefix}latency_p50_ms": round(p50 * 1000, 2),
                f"{prefix}latency_p99_ms": round(p99 * 1000, 2),
            }
        )

    def scheduled_latency(self, prefix: str = "", org: Organization | None = None) -> None:
        """Jobs scheduled 0.5-3 s ahead: run_at to handler start."""
        cfg = self.config
        if org is None:
            [org] = self._make_orgs("s", 1)
        known = set(Job.objects.filter(organization=org).values_list("pk", flat=True))
        now = _db_clock()
        specs = [
            JobSpec(
                type=NOOP,
                organization_id=org.pk,
                run_at=now + timedelta(seconds=random.uniform(0.5, 3.0)),  # noqa: S311
            )
            for _ in range(cfg.scheduled_jobs)
        ]
        with transaction.atomic():
            job_enqueue_many(specs)
        self._wait_done([org.pk], cfg.scheduled_jobs, label="scheduled")
        ids = [
            pk
            for pk in Job.objects.filter(organization=org).values_list("pk", flat=True)
            if pk not in known
        ]
        p50, p99 = _percentiles(ids, "started_at - run_at")
        self.figures.update(
            {
                f"{prefix}due_latency_p50_ms": round(p50 * 1000, 2),
                f"{prefix}due_latency_p99_ms": round(p99 * 1000, 2),
            }
        )

    def fairness(self) -> None:
        """One organization with `fair_big` jobs and nine with ten each, all due at the same
        instant: how late does the last job of the nine start?"""
        cfg = self.config
        big = self._make_orgs("fb", 1)[0]
        smalls = self._make_orgs("fs", cfg.fair_small_orgs)
        total = cfg.fair_big + cfg.fair_small_orgs * cfg.fair_small_jobs
        rate = self.figures.get("enqueue_per_s") or 20_000
        due = _db_clock() + timedelta(seconds=max(1.0, 1.5 * total / rate + 0.5))
        specs = [JobSpec(type=NOOP, organization_id=big.pk, run_at=due)] * cfg.fair_big
        for org in smalls:
            specs += [JobSpec(type=NOOP, organization_id=org.pk, run_at=due)] * cfg.fair_small_jobs
        with transaction.atomic():
            job_enqueue_many(specs)
        small_ids = [org.pk for org in smalls]
        self._wait_done(small_ids, cfg.fair_small_orgs * cfg.fair_small_jobs, label="fairness")
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT extract(epoch FROM max(started_at - run_at)) FROM jobs_job"
                " WHERE organization_id = ANY(%s)",
                [small_ids],
            )
            worst = float(cursor.fetchone()[0])
        self._wait_done([big.pk], cfg.fair_big, label="fairness backlog")
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT extract(epoch FROM max(finished_at) - min(run_at)) FROM jobs_job"
                " WHERE organization_id = %s",
                [big.pk],
            )
            backlog_s = float(cursor.fetchone()[0])
        self.figures.update(
            fairness_max_start_s=round(worst, 3), fairness_backlog_drain_s=round(backlog_s, 3)
        )

    def raw_reference(self) -> None:
        """The same N jobs over W organizations drained by P raw-SQL loops (see
        loadtest.raw_queue): the ceiling this database allows, and our share of it.
        Their organizations are suspended, so the running workers leave them alone."""
        cfg = self.config
        orgs = self._make_orgs("r", cfg.orgs, state=Organization.State.SUSPENDED)
        ids = [org.pk for org in orgs]
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                INSERT INTO jobs_job ({_INSERT_COLUMNS})
                SELECT (%s::bigint[])[1 + i %% %s], NULL, %s, 'publish', '{{}}', 'pending',
                       now(), 0, 5, '', NULL, 0, 0, 0, now(), now()
                  FROM generate_series(0, %s - 1) AS i
                """,  # noqa: S608 - only constants are spliced in
                [ids, len(ids), NOOP, cfg.jobs],
            )
            cursor.execute("ANALYZE jobs_job")
        done, wall = raw_queue.drain(
            conninfo=_conninfo(), orgs=ids, processes=cfg.workers, batch=cfg.batch_size
        )
        if done != cfg.jobs:
            raise RuntimeError(f"The raw loops drained {done} of {cfg.jobs} jobs.")
        raw = cfg.jobs / wall
        self.figures["raw_limit_jobs_per_s"] = round(raw)
        self.figures["ratio_to_raw"] = round(self.figures["jobs_per_s"] / raw, 3)

    def burst_trickle(self) -> None:
        """A burst of `burst_jobs` jobs of one organization, all due at once and drained;
        right after it, the immediate and scheduled latency runs again in that organization
        (keys prefixed `burst_trickle_`): its pending index entries are dead now, and sort
        before every new job of the organization."""
        cfg = self.config
        [org] = self._make_orgs("bt", 1)
        with transaction.atomic():
            job_enqueue_many([JobSpec(type=NOOP, organization_id=org.pk)] * cfg.burst_jobs)
        self._wait_done([org.pk], cfg.burst_jobs, label="burst")
        self._burst_org = org
        self.immediate_latency(prefix="burst_trickle_", org=org)
        self.scheduled_latency(prefix="burst_trickle_", org=org)

    def everyone_at_nine(self) -> None:
        """`nine_orgs` organizations with one job each, all due at the same instant (a
        hosted service's 09:00): how late after its run_at does the last one start?"""
        cfg = self.config
        orgs = self._make_orgs("n", cfg.nine_orgs)
        rate = self.figures.get("enqueue_per_s") or 20_000
        due = _db_clock() + timedelta(seconds=max(1.0, 1.5 * cfg.nine_orgs / rate + 0.5))
        with transaction.atomic():
            job_enqueue_many(JobSpec(type=NOOP, organization_id=org.pk, run_at=due) for org in orgs)
        ids = [org.pk for org in orgs]
        self._wait_done(ids, cfg.nine_orgs, label="everyone at nine")
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id FROM jobs_job WHERE organization_id = ANY(%s) AND type = %s",
                [ids, NOOP],
            )
            job_ids = [row[0] for row in cursor.fetchall()]
            cursor.execute(
                "SELECT extract(epoch FROM max(started_at - run_at)) FROM jobs_job"
                " WHERE id = ANY(%s)",
                [job_ids],
            )
            last = float(cursor.fetchone()[0])
        p50, p99 = _percentiles(job_ids, "started_at - run_at")
        self.figures.update(
            everyone_at_nine_orgs=cfg.nine_orgs,
            everyone_at_nine_start_p50_s=round(p50, 3),
            everyone_at_nine_start_p99_s=round(p99, 3),
            everyone_at_nine_last_start_s=round(last, 3),
        )

    def add_idle_orgs(self, total: int) -> None:
        """Bring the idle organizations up to `total`, each with 3 jobs due 1 to 3 days
        ahead (a hosted service's normal state: posts scheduled, nothing of theirs due).
        Written by SQL in chunks, with a progress bar."""
        missing = total - len(self._idle_org_ids)
        started = time.perf_counter()
        chunk = 10_000
        while missing > 0:
            n = min(chunk, missing)
            first = len(self._idle_org_ids)
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    """
                    INSERT INTO accounts_organization
                        (name, slug, state, monthly_post_quota, inflight_cap,
                         webhook_inflight_cap, seats, storage_quota_bytes, created_at,
                         updated_at)
                    SELECT %s || ' idle' || i, %s || '-idle' || i, 'active', 1000, 10, 4,
                           10, 0, now(), now()
                      FROM generate_series(%s, %s) AS i
                    RETURNING id
                    """,
                    [self.tag, self.tag, first, first + n - 1],
                )
                ids = [row[0] for row in cursor.fetchall()]
                cursor.execute(
                    f"""
                    INSERT INTO jobs_job ({_INSERT_COLUMNS})
                    SELECT o.id, NULL, %s, 'publish', '{{}}', 'pending',
                           now() + interval '1 day' + k * interval '1 day'
                                 + (o.id %% 3600) * interval '1 second',
                           0, 5, '', NULL, 0, 0, 0, now(), now()
                      FROM unnest(%s::bigint[]) AS o(id), generate_series(0, 2) AS k
                    """,  # noqa: S608 - only constants are spliced in
                    [NOOP, ids],
                )
            self._idle_org_ids += ids
            missing -= n
            draw_rate_bar(
                self.progress,
                "idle organizations",
                len(self._idle_org_ids),
                total,
                time.perf_counter() - started,
            )
        self._vacuum()
        if total:
            self.progress.write("\n")

    def claim_cost_by_idle_orgs(self) -> None:
        """claim_ms_p50 with 0, 10,000 and 100,000 idle organizations in the table (the
        steps up to `idle_orgs`, and `idle_orgs` itself)."""
        target = self.config.idle_orgs
        steps = sorted({step for step in IDLE_ORG_STEPS if step <= target} | {target})
        by_step = {}
        for step in steps:
            self.add_idle_orgs(step)
            by_step[str(step)] = self.claim_cost()["claim_ms_p50"]
        self.figures["claim_ms_p50_by_idle_orgs"] = by_step

    def add_history(self, rows: int) -> None:
        """Bring the finished history the bench added up to `rows` done jobs (one INSERT
        ... SELECT generate_series, then a vacuum, as an old history would be)."""
        missing = rows - self._history_rows
        if missing <= 0:
            return
        [org] = self._make_orgs(f"h{self._history_rows}", 1)
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                INSERT INTO jobs_job ({_INSERT_COLUMNS}, started_at, finished_at, lease)
                SELECT %s, NULL, %s, 'publish', '{{}}', 'done', t, 1, 5, 'history', NULL,
                       0, 0, 0, t, t, t, t, gen_random_uuid()
                  FROM generate_series(1, %s) AS i,
                       LATERAL (SELECT now() - i * interval '1 second' AS t) ts
                """,  # noqa: S608 - only constants are spliced in
                [org.pk, NOOP, missing],
            )
        self._history_rows = rows
        self._vacuum()
        self.progress.write(
            f"history: {rows:,} finished jobs ({time.perf_counter() - started:.1f}s)\n"
        )

    def claim_cost_by_history(self) -> None:
        """claim_ms_p50 with each of `history_steps` finished jobs in the table."""
        by_step = {}
        for step in sorted(self.config.history_steps):
            self.add_history(step)
            cost = self.claim_cost()
            by_step[str(self._history_rows)] = cost["claim_ms_p50"]
        self.figures["claim_ms_p50_by_history"] = by_step

    def claim_cost(self, org: Organization | None = None) -> dict:
        """Milliseconds one claim of one due job takes, from this process with no worker
        running (`probe_claims` claims, each job marked done before the next claim, as a
        trickle would)."""
        cfg = self.config
        if self._procs and any(proc.is_running() for proc in self._procs):
            raise RuntimeError("The claim probe runs only while no worker does.")
        if org is None:
            [org] = self._make_orgs("p", 1)
        with transaction.atomic():
            job_enqueue_many([JobSpec(type=NOOP, organization_id=org.pk)] * cfg.probe_claims)
        times = []
        for _ in range(cfg.probe_claims):
            started = time.perf_counter()
            result = queue.claim(worker=f"{self.tag}-probe", limit=1, stale_s=900, types=None)
            times.append(time.perf_counter() - started)
            queue.complete_done([(job.pk, lease_of(job), 0.0) for job in result.jobs], stale_s=900)
        times.sort()
        return {
            "claim_ms_p50": round(times[len(times) // 2] * 1000, 3),
            "claim_ms_p99": round(times[int(len(times) * 0.99)] * 1000, 3),
        }

    # -- helpers -----------------------------------------------------------------------

    def _vacuum(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("VACUUM (ANALYZE) jobs_job")
            cursor.execute("VACUUM (ANALYZE) jobs_queuehead")

    def _make_orgs(
        self, role: str, count: int, *, state: str = Organization.State.ACTIVE
    ) -> list[Organization]:
        first = len(self._orgs)  # slugs stay unique when a role comes back
        orgs = Organization.objects.bulk_create(
            Organization(
                name=f"{self.tag} {role}{first + i}",
                slug=f"{self.tag}-{role}{first + i}",
                inflight_cap=self.config.cap,
                state=state,
            )
            for i in range(count)
        )
        self._orgs += orgs
        return orgs

    def _wait_done(self, org_ids: list[int], expected: int, *, label: str) -> None:
        started = time.perf_counter()

        def left() -> int:
            # Counted through the small pending/processing indexes, not the history, so
            # watching costs the workers little CPU.
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT (SELECT count(*) FROM jobs_job WHERE status = 'pending'"
                    "          AND organization_id = ANY(%s))"
                    "     + (SELECT count(*) FROM jobs_job WHERE status = 'processing'"
                    "          AND organization_id = ANY(%s))",
                    [org_ids, org_ids],
                )
                return cursor.fetchone()[0]

        def finished() -> bool:
            done = expected - left()
            draw_rate_bar(self.progress, label, done, expected, time.perf_counter() - started)
            return done >= expected

        self._wait_for(finished, what=f"{label} jobs", timeout=self.config.timeout_s)
        # Every job is out of the queue; make sure each ended done.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM jobs_job WHERE organization_id = ANY(%s) AND status = 'done'",
                [org_ids],
            )
            if cursor.fetchone()[0] < expected:
                raise RuntimeError(f"Some {label} jobs did not end done; log: {self._log}")
        self.progress.write("\n")

    def _wait_for(self, condition: Callable[[], bool], *, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError(f"Timed out waiting for {what}; worker log: {self._log}")
            if any(proc.poll() is not None for proc in self._procs):
                raise RuntimeError(f"A worker exited early; worker log: {self._log}")
            time.sleep(0.2)

    def _cpu_seconds(self) -> dict | None:
        """CPU time used so far by the worker processes and by the database backends
        serving them (read from /proc: only when the database runs on this machine)."""
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            backends = [row[0] for row in cursor.fetchall()]
        try:
            return {
                "workers": sum(_proc_cpu(proc.pid) for proc in self._procs),
                "database": sum(_proc_cpu(pid) for pid in backends),
            }
        except (OSError, ValueError):
            return None

    def _duplicates(self) -> int:
        """Jobs claimed more than once (each claim counts an attempt; noop never fails)."""
        return Job.objects.filter(
            organization__in=[org.pk for org in self._orgs], attempts__gt=1
        ).count()


def _proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a local process."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _conninfo() -> str:
    """libpq connection string of the Django connection (for the raw loops)."""
    params = connection.get_connection_params()
    for key in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(key, None)
    return psycopg.conninfo.make_conninfo(**params)


def _db_clock():
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        return cursor.fetchone()[0]


def _percentiles(ids: list[int], interval_sql: str) -> tuple[float, float]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT percentile_cont(ARRAY[0.5, 0.99]) WITHIN GROUP"  # noqa: S608 - constant
            f" (ORDER BY extract(epoch FROM {interval_sql})) FROM jobs_job WHERE id = ANY(%s)",
            [ids],
        )
        p50, p99 = cursor.fetchone()[0]
    return float(p50), float(p99)
