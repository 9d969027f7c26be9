"""The worker behind `run_worker`: claims due jobs in batches, runs them on a thread pool,
and writes their outcomes under each claim's lease.

The unit-of-work methods (`claim_batch`, `run_one`, `heartbeat`, `recover_stale`,
`promote_waiting`, `expire_overdue`) are what tests drive; `run()` drains them in a
loop. The loop's thread is the only one that writes job state (outcomes, heartbeats,
releases), batching "done" writes; pool threads only run handlers. It waits on the LISTEN
socket and a self-pipe (results and signals), so it wakes at once for new work, finished
jobs and SIGTERM, and otherwise sleeps until the next job falls due, a timer fires, a
handler's time limit passes, or the poll interval ends.

Leases are refreshed by a thread of their own on a connection of their own
(apps.jobs.heartbeat.LeaseKeeper), so neither the loop nor a handler waiting on a lock can
make this worker miss its heartbeats. A worker refuses to start when its stale window is
not well above the database's lock and statement timeouts (`check_session_bounds`).

A database error never loses an outcome: the loop keeps the result, reconnects with
backoff and writes it then (at shutdown, within the grace period). A database error in a
handler decided nothing: the job is recovered (apps.jobs.services.job_recover_interrupted).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import threading
import time
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction

from apps.jobs import heartbeat, queue, services
from apps.jobs.errors import DATABASE_ERRORS
from apps.jobs.execution import Result, execute, lease_of, type_or_none
from apps.jobs.models import Job
from apps.jobs.outcomes import log_transition
from apps.jobs.pool import JobPool
from apps.jobs.queue import Transition
from apps.jobs.registry import JobType, job_types
from apps.jobs.wakeup import Wakeup

logger = logging.getLogger(__name__)

DB_ERRORS = DATABASE_ERRORS
# The stale window must be at least this many times the database's lock and statement
# timeouts: a healthy handler may wait that long on a lock or a statement, and must keep
# its lease meanwhile with room to spare.
LEASE_MARGIN = 3.0
_FLUSH_MAX_DELAY_S = 0.01  # "done" writes wait at most this long to be batched
_PERIODIC_CHECK_S = 60.0
_RECONNECT_MAX_S = 5.0
_OVERDUE_RETRY_S = 1.0  # a job past its time limit whose row is locked is retried this late

WAITING = Job.Status.WAITING


class Worker:
    """One worker process's queue consumer. Construct it, then call `run()`, or drive the
    unit-of-work methods directly."""

    def __init__(
        self,
        *,
        threads: int | None = None,
        batch_size: int | None = None,
        types: list[str] | None = None,
        poll_s: float | None = None,
        heartbeat_s: float | None = None,
        stale_after_s: float | None = None,
        grace_s: float | None = None,
        name: str | None = None,
    ) -> None:
        self.threads = max(1, threads or settings.WORKER_THREADS)
        self.batch_size = max(1, batch_size or settings.WORKER_BATCH_SIZE or self.threads)
        self.types = sorted(set(types)) if types else None
        self.poll_s = settings.WORKER_POLL_S if poll_s is None else poll_s
        self.heartbeat_s = settings.WORKER_HEARTBEAT_S if heartbeat_s is None else heartbeat_s
        self.stale_after_s = (
            settings.WORKER_STALE_AFTER_S if stale_after_s is None else stale_after_s
        )
        self.grace_s = settings.WORKER_GRACE_S if grace_s is None else grace_s
        if self.heartbeat_s * 2 > self.stale_after_s:
            raise ImproperlyConfigured(
                "WORKER_HEARTBEAT_S must be at most half of WORKER_STALE_AFTER_S, or running "
                "jobs would be presumed dead between two heartbeats."
            )
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.jobs_done = 0  # outcomes written
        self.recovered_interrupted = 0  # jobs a database error stopped, recovered

        # Claimed jobs whose outcome is not written yet, by id (touched by the loop only).
        self._held: dict[int, Job] = {}
        self._lost: set[int] = set()  # held, but the heartbeat found the lease gone
        # Guards _held and _lost against the lease keeper's thread (the loop alone writes
        # _held; the keeper reads it and adds to _lost).
        self._held_lock = threading.Lock()
        self._done_buffer: list[tuple[int, uuid.UUID, float]] = []
        self._done_since = 0.0
        self._max_held = max(self.threads, self.batch_size)
        self._threshold = max(1, self.batch_size // 2)
        self._last_contended = False
        self._last_found_due = False
        self._next_due: float | None = None  # monotonic time the next pending job falls due
        self._next_waiting: float | None = None  # ... and the next waiting job is promoted
        self.claims = self.contended_claims = 0

        self._wakeup = Wakeup(application_name=f"run_worker {self.name}")
        self._pool = JobPool(
            threads=self.threads,
            execute=self.execute,
            wake=self._wakeup.wake,
            wake_after=self._threshold,
        )
        self._keeper = heartbeat.LeaseKeeper(
            stale_s=self.stale_after_s,
            every_s=self.heartbeat_s,
            held=self._lease_snapshot,
            on_lost=self._mark_lost,
            application_name=f"run_worker heartbeat {self.name}",
        )
        self._registered = False
        self._stop = False
        self._force_stop = False

    # -- unit of work ------------------------------------------------------------------

    def claim_batch(self, limit: int | None = None) -> list[Job]:
        """Claim up to `limit` (default: the batch size) due jobs; they are now held by
        this worker (processing, attempt counted, fresh lease)."""
        started = time.monotonic()
        result = queue.claim(
            worker=self.name,
            limit=limit or self.batch_size,
            stale_s=self.stale_after_s,
            types=self.types,
            capacity=self._max_held,
        )
        self._last_contended = result.contended
        self._last_found_due = result.found_due
        self._next_due = None if result.pending_in is None else started + result.pending_in
        self._next_waiting = None if result.waiting_in is None else started + result.waiting_in
        self.claims += 1
        if result.contended and not result.jobs:
            self.contended_claims += 1
        with self._held_lock:
            for job in result.jobs:
                job._claimed_mono = started
                job._stale_after_s = self.stale_after_s  # the window lease_is_held applies
                self._held[job.id] = job
        if result.jobs:
            logger.debug("Claimed %d job(s).", len(result.jobs))
        return result.jobs

    def run_one(self, job: Job) -> str:
        """Run one claimed job in the calling thread and write its outcome. Returns the
        status written ("done", "pending", "waiting", "failed"), or "lost" when the lease
        was gone and nothing was written."""
        with self._held_lock:
            self._held.setdefault(job.pk, job)
        result = self.execute(job)
        return self._write(result, flush=True)

    def execute(self, job: Job) -> Result:
        """Run the job's handler and decide the outcome, without writing it."""
        return execute(job, worker=self.name)

    def heartbeat(self) -> set[int]:
        """Refresh the lease of every held job (on this thread's connection: in `run()`
        the lease keeper's thread does it on its own) and this worker's registry row.
        Returns the ids of jobs found lost (recovered or taken over by another worker)."""
        lost, _ = heartbeat.refresh_leases(self._lease_snapshot(), stale_s=self.stale_after_s)
        self._mark_lost(lost)
        self.touch()
        return lost

    def touch(self) -> None:
        """Mark this worker's registry row seen now."""
        if self._registered and not heartbeat.touch(
            name=self.name, jobs_running=len(self._held), jobs_done=self.jobs_done
        ):
            self.register()  # pruned while this worker was cut off: register again

    def _lease_snapshot(self) -> list[tuple[int, uuid.UUID]]:
        with self._held_lock:
            return [(pk, lease_of(job)) for pk, job in self._held.items() if pk not in self._lost]

    def _mark_lost(self, lost: set[int]) -> None:
        with self._held_lock:
            self._lost |= lost & self._held.keys()

    def recover_stale(self) -> int:
        """Recover jobs whose worker stopped heart-beating, by their type's policy."""
        return services.job_recover_stale(stale_s=self.stale_after_s)

    def expire_overdue(self, now: float | None = None) -> list[int]:
        """Settle the jobs whose handler ran past its type's time limit, by the type's
        stale policy under this claim's lease (kind "timed_out"), and retire their threads
        (apps.jobs.timelimits). Returns the ids settled. A job whose row is locked right
        now (its handler is writing under the lease) is tried again on the next pass."""
        now = time.monotonic() if now is None else now
        settled = []
        for running in self._pool.overdue(now):
            job = running.job
            if job.pk in self._lost:
                # Its lease is gone already (settled elsewhere): only free the thread.
                self._pool.retire(running)
                self._forget(job.pk)
                continue
            recovered = services.job_recover_stale(
                job_ids=[job.pk],
                leases=[lease_of(job)],
                timed_out_after_s=running.time_limit_s,
            )
            if not recovered:
                running.deadline = now + _OVERDUE_RETRY_S  # row locked: look again soon
                continue
            self._pool.retire(running)
            self._forget(job.pk)
            settled.append(job.pk)
            logger.warning(
                "Job %s (%s) ran past its %gs time limit; settled by its stale policy.",
                job.pk,
                job.type,
                running.time_limit_s,
                extra={"job_id": job.pk},
            )
        return settled

    def promote_waiting(self) -> int:
        """Move waiting jobs whose time has come back to pending."""
        promoted = queue.promote_waiting()
        if promoted:
            queue.notify()
        return promoted

    def register(self) -> None:
        heartbeat.register(name=self.name, threads=self.threads, types=self.types or [])
        self._registered = True

    def unregister(self) -> None:
        if self._registered:
            heartbeat.mark_stopped(name=self.name, jobs_done=self.jobs_done)

    # -- writing outcomes ----------------------------------------------------------------

    def _write(self, result: Result, *, flush: bool = False) -> str:
        job = result.job
        if result.interrupted is not None and job.id not in self._lost:
            return self._recover_interrupted(job, result.interrupted)
        if result.lost or job.id in self._lost:
            self._forget(job.id)
            logger.warning(
                "Job %s (%s) finished after losing its lease; outcome discarded.",
                job.pk,
                job.type,
                extra={"job_id": job.pk},
            )
            return "lost"
        change = result.change
        job_type = type_or_none(job.type)
        if change is None and not (job_type and job_type.is_periodic):
            self._done_buffer.append((job.id, lease_of(job), result.started_delay_s))
            if len(self._done_buffer) == 1:
                self._done_since = time.monotonic()
            if flush:
                flushed = self._flush_done(force=True)
                return "done" if job.pk in flushed else "lost"
            return "done"
        change = change or Transition(status=Job.Status.DONE)
        change.started_delay_s = result.started_delay_s
        written = self._write_transition(job, change, job_type)
        self._forget(job.pk)
        if not written:
            logger.warning(
                "Job %s (%s) lost its lease before its outcome (%s) was written.",
                job.pk,
                job.type,
                change.status,
                extra={"job_id": job.pk},
            )
            return "lost"
        self.jobs_done += 1
        log_transition(job, change)
        if change.delay_s is not None:  # back in the queue: wake up when it is due again
            due = time.monotonic() + change.delay_s
            if change.status == WAITING:
                self._next_waiting = min(self._next_waiting or due, due)
            else:
                self._next_due = min(self._next_due or due, due)
        return str(change.status)

    def _recover_interrupted(self, job: Job, error: dict) -> str:
        """A database error stopped the handler: nothing was decided, the job is recovered
        (requeued without spending the attempt; its type's policy after too many)."""
        status = services.job_recover_interrupted(job=job, error=error)
        self._forget(job.pk)
        if status is None:
            logger.warning(
                "Job %s (%s) lost its lease before it could be recovered from a database error.",
                job.pk,
                job.type,
                extra={"job_id": job.pk},
            )
            return "lost"
        self.recovered_interrupted += 1
        if status == Job.Status.PENDING:
            self._next_due = time.monotonic() + 1.0  # the earliest a recovered job runs
        return str(status)

    def _write_transition(self, job: Job, change: Transition, job_type: JobType | None) -> bool:
        with transaction.atomic():
            written = queue.transition(job.pk, job.lease, change, stale_s=self.stale_after_s)
            if written and change.is_final and job_type is not None and job_type.is_periodic:
                services.schedule_next_periodic(job_type)
        return written

    def _flush_done(self, *, force: bool) -> set[int]:
        if not self._done_buffer:
            return set()
        due = (
            force
            or len(self._done_buffer) >= self._threshold
            or self._pool.is_queue_empty()
            or time.monotonic() - self._done_since >= _FLUSH_MAX_DELAY_S
        )
        if not due:
            return set()
        batch = self._done_buffer
        written = queue.complete_done(batch, stale_s=self.stale_after_s)
        self._done_buffer = []
        for pk, _, _ in batch:
            self._forget(pk)
        self.jobs_done += len(written)
        if len(written) < len(batch):
            for pk, _, _ in batch:
                if pk not in written:
                    logger.warning(
                        "Job %s lost its lease before it was marked done.",
                        pk,
                        extra={"job_id": pk},
                    )
        return written

    def _forget(self, pk: int) -> None:
        with self._held_lock:
            self._held.pop(pk, None)
            self._lost.discard(pk)

    # -- the loop ------------------------------------------------------------------------

    def request_stop(self, *, force: bool = False) -> None:
        """Stop claiming and shut down (safe to call from a signal handler). With `force`
        (a second signal), running jobs get no more grace."""
        self._stop = True
        self._force_stop = self._force_stop or force
        self._wakeup.wake()

    @property
    def stop_requested(self) -> bool:
        return self._stop

    def run(self, *, burst: bool = False, once: bool = False) -> None:
        """Work until stopped. `burst`: exit once nothing is due and nothing is held.
        `once`: claim a single batch, run it, exit."""
        check_session_bounds(self.stale_after_s)
        self._wakeup.open_pipe()
        self._pool.start()
        self._keeper.start()
        state = _LoopState(now=time.monotonic())
        try:
            while not self._stop:
                try:
                    if self._step(state, burst=burst, once=once):
                        break
                    if state.outage_since is not None:
                        logger.warning(
                            "Database reachable again after %.1fs.",
                            time.monotonic() - state.outage_since,
                        )
                        state.outage_since = None
                except DB_ERRORS as exc:
                    self._on_db_error(state, exc)
                except Exception:
                    # A bug must not end the worker (jobs it holds would wait for stale
                    # recovery); pause so a persistent one does not spin.
                    logger.exception("Worker loop error; carrying on in a second.")
                    self._sleep_unless_stopped(1.0)
        finally:
            self._shutdown()

    def _step(self, state: _LoopState, *, burst: bool, once: bool) -> bool:
        """One pass of the loop; True when a burst/once run is complete."""
        if not self._registered:
            self.register()
        self._wakeup.ensure_listening()
        self._collect_results()
        self._flush_done(force=False)
        now = time.monotonic()
        deadline = self._pool.next_deadline()
        if deadline is not None and deadline <= now:
            state.maybe_work |= bool(self.expire_overdue(now))
        if now >= state.next_heartbeat:
            self.touch()  # the leases are the keeper thread's
            state.next_heartbeat = now + self.heartbeat_s
        if now >= state.next_recover:
            state.maybe_work |= self.recover_stale() > 0
            state.next_recover = now + min(self.heartbeat_s, self.stale_after_s / 4)
        if now >= state.next_periodic:
            state.maybe_work |= services.ensure_periodic_jobs(self._periodic_types()) > 0
            state.next_periodic = now + _PERIODIC_CHECK_S
        waiting_due = self._next_waiting is not None and self._next_waiting <= now
        if now >= state.next_promote or waiting_due:
            self._next_waiting = None
            self.promote_waiting()  # its NOTIFY wakes this worker too
            state.next_promote = now + self.poll_s
        if self._next_due is not None and self._next_due <= now:
            state.maybe_work, self._next_due = True, None

        free = self._max_held - len(self._held)
        want = claimed = 0
        may_claim = state.maybe_work and not (once and state.claimed_once)
        if may_claim and free > 0 and (free >= self._threshold or self._pool.is_queue_empty()):
            want = min(free, self.batch_size)
            jobs = self.claim_batch(limit=want)
            claimed, state.claimed_once = len(jobs), True
            for job in jobs:
                self._pool.submit(job)
            # Look again only if there may be more: a NOTIFY, a timer or a poll says so
            # otherwise. (Due work left behind may be waiting for seats this worker's own
            # jobs hold: look again when they finish.)
            state.maybe_work = self._last_found_due
        if (burst or once) and not self._held and claimed == 0 and not self._last_contended:
            return True
        if want and claimed >= want:
            return False  # a full batch: more is probably due
        if self._wakeup.wait(self._idle_timeout(state)):
            state.maybe_work = True
        return False

    def _idle_timeout(self, state: _LoopState) -> float:
        now = time.monotonic()
        timeout = self.poll_s
        # A claim that found other workers holding every due organization's claim lock
        # does not retry on a timer: the holder takes what its snapshot shows, looks
        # again on the NOTIFY of anything enqueued after it (its socket holds it), and
        # NOTIFYs after a full batch; so this worker waits for a NOTIFY too. Waking every
        # idle worker for one job is enough of a herd on a small machine.
        for due in (self._next_due, self._next_waiting):
            if due is not None:
                timeout = min(timeout, due - now + 0.001)
        if self._done_buffer:
            timeout = min(timeout, self._done_since + _FLUSH_MAX_DELAY_S - now)
        deadlines = (state.next_heartbeat, state.next_recover, state.next_periodic)
        timeout = min(timeout, *(d - now for d in deadlines), state.next_promote - now)
        overdue_at = self._pool.next_deadline()
        if overdue_at is not None:
            timeout = min(timeout, overdue_at - now + 0.001)
        return max(timeout, 0.0)

    def _collect_results(self) -> None:
        while (result := self._pool.next_result()) is not None:
            try:
                self._write(result)
            except DB_ERRORS:
                self._pool.put_back(result)  # keep it; written after reconnecting
                raise
            except Exception:
                # A bug writing one outcome must not stop the loop: the job stays processing
                # and stale recovery settles it by its type's policy.
                logger.exception(
                    "Could not write the outcome of job %s.",
                    result.job.pk,
                    extra={"job_id": result.job.pk},
                )
                self._forget(result.job.pk)

    def _on_db_error(self, state: _LoopState, exc: Exception) -> None:
        now = time.monotonic()
        if state.outage_since is None:
            state.outage_since, state.backoff = now, 0.1
            logger.warning("Database unavailable (%s); reconnecting.", exc)
        else:
            state.backoff = min(state.backoff * 2, _RECONNECT_MAX_S)
        self._wakeup.listener.close()
        with contextlib.suppress(Exception):  # the connection is already broken
            connection.close()
        self._sleep_unless_stopped(state.backoff)
        # After the outage, catch up at once: leases, recovery, waiting jobs.
        state.next_heartbeat = state.next_recover = state.next_promote = time.monotonic()
        state.maybe_work = True  # NOTIFYs sent during the outage were lost

    def _sleep_unless_stopped(self, seconds: float) -> None:
        self._wakeup.sleep(seconds, stop=lambda: self._stop)

    def _periodic_types(self) -> list[str]:
        return [
            name
            for name, job_type in job_types().items()
            if job_type.is_periodic and (self.types is None or name in self.types)
        ]

    # -- shutdown -----------------------------------------------------------------------

    def _shutdown(self) -> None:
        """Release jobs that never started, give running ones the grace period, recover
        the rest by their type's policy, unregister. Never raises."""
        try:
            deadline = time.monotonic() + self.grace_s
            self._until_written(self._drain_and_release, deadline)
            # Whatever is still held was taken by a pool thread: running, or its outcome
            # not written yet.
            while self._held and not self._force_stop and time.monotonic() < deadline:
                self._wakeup.wait(min(0.05, max(deadline - time.monotonic(), 0.0)))
                self._until_written(self._write_results, deadline)
            self._until_written(self._write_results, deadline)
            leftover = {pk: job.lease for pk, job in self._held.items() if pk not in self._lost}
            if leftover:
                logger.warning(
                    "%d job(s) still running after the %.1fs grace period; recovering them by "
                    "their type's stale policy.",
                    len(leftover),
                    self.grace_s,
                )
                services.job_recover_stale(job_ids=list(leftover), leases=list(leftover.values()))
            self.unregister()
        except Exception:
            logger.exception("Shutdown could not settle every job; stale recovery will.")
        finally:
            self._keeper.stop()
            self._pool.stop()
            self._wakeup.close()

    def _write_results(self) -> None:
        self._collect_results()
        self._flush_done(force=True)

    def _until_written(self, write, deadline: float) -> None:
        """Run `write`, reconnecting and trying again after a database error until the
        deadline (then the last error is raised: stale recovery settles what is left)."""
        backoff = 0.1
        while True:
            try:
                write()
                return
            except DB_ERRORS as exc:
                if time.monotonic() + backoff >= deadline or self._force_stop:
                    raise
                logger.warning("Database unavailable at shutdown (%s); trying again.", exc)
                with contextlib.suppress(Exception):
                    connection.close()
                time.sleep(backoff)
                backoff = min(backoff * 2, _RECONNECT_MAX_S)

    def _drain_and_release(self) -> None:
        unstarted = self._pool.take_unstarted()
        if unstarted:
            released = queue.release(
                [(job.pk, lease_of(job)) for job in unstarted], stale_s=self.stale_after_s
            )
            for job in unstarted:
                self._forget(job.pk)
            logger.info("Released %d claimed job(s) that had not started.", len(released))


def check_session_bounds(stale_after_s: float) -> None:
    """Refuse to run a worker whose stale window is not at least LEASE_MARGIN times the
    database's lock and statement timeouts (DB_LOCK_TIMEOUT_S, DB_STATEMENT_TIMEOUT_S).

    A handler may legitimately wait that long on a lock or a statement; a lease that could
    lapse meanwhile would let recovery settle a job that is still running. A bound of 0
    is no bound at all (the tests' statements, maintenance runs): it is compared with
    nothing and only logged. The lease itself does not depend on it (heartbeats run on a
    session of their own, with short bounds of their own), and a handler that never ends
    is ended by its type's time limit."""
    bounds = {
        "DB_LOCK_TIMEOUT_S": float(settings.DB_LOCK_TIMEOUT_S),
        "DB_STATEMENT_TIMEOUT_S": float(settings.DB_STATEMENT_TIMEOUT_S),
    }
    for name, seconds in bounds.items():
        if seconds > 0 and stale_after_s < LEASE_MARGIN * seconds:
            raise ImproperlyConfigured(
                f"WORKER_STALE_AFTER_S ({stale_after_s:g}s) must be at least "
                f"{LEASE_MARGIN:g} times {name} ({seconds:g}s): a handler waiting that long "
                f"on the database would lose its lease. Raise WORKER_STALE_AFTER_S to "
                f"{LEASE_MARGIN * seconds:g}s or more, or lower {name}."
            )
    unbounded = [name for name, seconds in bounds.items() if seconds <= 0]
    if unbounded:
        logger.warning(
            "%s set to 0 (no bound): the database does not end those waits for this "
            "worker; its handlers are bounded by their time limits only.",
            " and ".join(unbounded),
        )


@dataclass
class _LoopState:
    now: float
    next_heartbeat: float = 0.0
    next_recover: float = 0.0
    next_periodic: float = 0.0
    next_promote: float = 0.0
    claimed_once: bool = False
    maybe_work: bool = True  # a claim could find something (NOTIFY, timer, poll...)
    outage_since: float | None = None
    backoff: float = 0.1

    def __post_init__(self) -> None:
        self.next_heartbeat = self.next_recover = self.next_periodic = self.now
        self.next_promote = self.now
