"""The worker's handler threads: claimed jobs go in on a task queue, results come back on a
deque the loop reads. Pool threads only run handlers; they never write job state."""

from __future__ import annotations

import collections
import queue as stdlib_queue
import threading
from collections.abc import Callable

from django.db import close_old_connections, connection

from apps.jobs.execution import Result, reset_thread_connection
from apps.jobs.models import Job


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

    def start(self) -> None:
        for i in range(self.threads):
            thread = threading.Thread(target=self._thread_main, name=f"job-runner-{i}", daemon=True)
            thread.start()
            self._threads.append(thread)

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
        """Ask every thread to exit once it has finished its current job."""
        for _ in self._threads:
            self._tasks.put(None)

    def _thread_main(self) -> None:
        while True:
            job = self._tasks.get()
            if job is None:
                break
            close_old_connections()
            try:
                result = self._execute(job)
            finally:
                reset_thread_connection(job)
            self._results.append(result)
            if (
                result.change is not None
                or len(self._results) >= self._wake_after
                or self._tasks.empty()
            ):
                self._wake()
        connection.close()
