"""The worker's handler threads: claimed jobs go in on a task queue, results come back on a
deque the loop reads. Pool threads only run handlers; they never write job state.

The pool also knows which job each thread is running and since when, so the loop can find
handlers past their type's time limit and `retire` their threads (apps.jobs.timelimits).
"""

from __future__ import annotations

import collections
import itertools
import logging
import queue as stdlib_queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import close_old_connections, connection

from apps.jobs import timelimits
from apps.jobs.execution import Result, reset_thread_connection, type_or_none
from apps.jobs.models import Job

logger = logging.getLogger(__name__)


@dataclass
class Running:
    """A job a pool thread is running now, and when its time is up (monotonic)."""

    job: Job
    thread: threading.Thread
    deadline: float
    time_limit_s: float
    retired: bool = field(default=False)


class JobPool:
    """`threads` handler threads running `execute`. A thread calls `wake` after a result
    the loop should see soon: an outcome to write (not a plain "done"), `wake_after`
    results piling up, or nothing left queued."""

    def __init__(
        self,
        *,
        threads: int,
        execute: Callable[[Job], Result],
        wake: Callable[[], None],
        wake_after: int,
    ) -> None:
        self.threads = threads
        self._execute = execute
        self._wake = wake
        self._wake_after = wake_after
        self._tasks: stdlib_queue.SimpleQueue[Job | None] = stdlib_queue.SimpleQueue()
        self._results: collections.deque[Result] = collections.deque()
        self._threads: list[threading.Thread] = []
        self._running: dict[int, Running] = {}
        self._lock = threading.Lock()  # guards _running and each entry's `retired`
        self._numbers = itertools.count()

    def start(self) -> None:
        for _ in range(self.threads):
            self._start_thread()

    def _start_thread(self) -> None:
        name = f"job-runner-{next(self._numbers)}"
        thread = threading.Thread(target=self._thread_main, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def overdue(self, now: float | None = None) -> list[Running]:
        """Jobs running past their type's time limit (not retired yet)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            return [r for r in self._running.values() if not r.retired and r.deadline <= now]

    def next_deadline(self) -> float | None:
        """The monotonic time the next running job's time is up, if any job runs."""
        with self._lock:
            deadlines = [r.deadline for r in self._running.values() if not r.retired]
        return min(deadlines, default=None)

    def retire(self, running: Running) -> bool:
        """Give up on a running job: interrupt its handler, let its thread exit when the
        handler returns (its result is dropped), and start a fresh thread in its place.
        False when the job finished meanwhile (its result stands)."""
        with self._lock:
            if self._running.get(running.job.pk) is not running or running.retired:
                return False
            running.retired = True
            # Under the lock: the thread cannot pass the end of its handler unnoticed.
            timelimits.interrupt(running.thread)
        self._threads.remove(running.thread)
        self._start_thread()
        return True

    def submit(self, job: Job) -> None:
        self._tasks.put(job)

    def is_queue_empty(self) -> bool:
        """True when every submitted job has been taken by a thread."""
        return self._tasks.empty()

    def next_result(self) -> Result | None:
        try:
            return self._results.popleft()
        except IndexError:
            return None

    def put_back(self, result: Result) -> None:
        """Return a result that could not be written yet; it is the next one read."""
        self._results.appendleft(result)

    def take_unstarted(self) -> list[Job]:
        """Remove and return the submitted jobs no thread has taken yet."""
        unstarted = []
        while True:
            try:
                job = self._tasks.get_nowait()
            except stdlib_queue.Empty:
                break
            if job is not None:
                unstarted.append(job)
        return unstarted

    def stop(self) -> None:
        """Ask every thread to exit once it has finished its current job (retired threads
        exit on their own)."""
        for _ in self._threads:
            self._tasks.put(None)

    def _track(self, job: Job) -> None:
        job_type = type_or_none(job.type)
        if job_type is None:
            return  # an unknown type fails at once, no handler runs
        limit = job_type.time_limit_s
        with self._lock:
            self._running[job.pk] = Running(
                job=job,
                thread=threading.current_thread(),
                deadline=time.monotonic() + limit,
                time_limit_s=limit,
            )

    def _untrack(self, job: Job) -> bool:
        """Stop tracking the job; True when its thread was retired meanwhile."""
        with self._lock:
            running = self._running.get(job.pk)
            if running is None or running.job is not job:
                return False
            del self._running[job.pk]
            return running.retired

    def _thread_main(self) -> None:
        while True:
            job = self._tasks.get()
            if job is None:
                break
            close_old_connections()
            try:
                self._track(job)
                try:
                    result = self._execute(job)
                finally:
                    reset_thread_connection(job)
                retired = self._untrack(job)
            except BaseException:  # TimeLimitExceeded landing outside the handler
                self._untrack(job)
                retired = True
            if retired:
                logger.warning(
                    "Job %s (%s) ended after its time limit; its thread exits.",
                    job.pk,
                    job.type,
                    extra={"job_id": job.pk},
                )
                break  # a fresh thread already took this one's place
            self._results.append(result)
            if (
                result.change is not None
                or len(self._results) >= self._wake_after
                or self._tasks.empty()
            ):
                self._wake()
        connection.close()
