"""What ends the worker loop's sleep: a NOTIFY on its LISTEN connection, or a byte on a
self-pipe that pool threads (results) and signal handlers (stop) write to."""

from __future__ import annotations

import contextlib
import os
import select
import time
from collections.abc import Callable

from apps.jobs.listener import Listener


class Wakeup:
    """The LISTEN connection and the self-pipe, waited on together with `select`."""

    def __init__(self, *, application_name: str) -> None:
        self.listener = Listener(application_name=application_name)
        self._read_fd, self._write_fd = -1, -1
        self._flag = False

    def open_pipe(self) -> None:
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        os.set_blocking(self._write_fd, False)

    def ensure_listening(self) -> None:
        if not self.listener.is_connected:
            self.listener.connect()

    def wake(self) -> None:
        """Make the current or next wait return (safe from a signal handler or a thread)."""
        if not self._flag and self._write_fd >= 0:
            self._flag = True
            with contextlib.suppress(OSError):  # full pipe: a wake-up is pending anyway
                os.write(self._write_fd, b"\0")

    def wait(self, timeout: float) -> bool:
        """Sleep until a NOTIFY, a wake(), or the timeout. True when a NOTIFY or the
        timeout ended it (there may be work to claim)."""
        fds = [self._read_fd]
        listen_fd = self.listener.fileno() if self.listener.is_connected else None
        if listen_fd is not None:
            fds.append(listen_fd)
        readable, _, _ = select.select(fds, [], [], max(timeout, 0.0))
        self._drain_pipe()
        notified = listen_fd is not None and listen_fd in readable and self.listener.drain() > 0
        return notified or not readable

    def sleep(self, seconds: float, *, stop: Callable[[], bool]) -> None:
        """Sleep `seconds`, ignoring NOTIFYs, but return early once `stop()` is true."""
        deadline = time.monotonic() + seconds
        while not stop() and (time_left := deadline - time.monotonic()) > 0:
            select.select([self._read_fd], [], [], time_left)
            self._drain_pipe()

    def close(self) -> None:
        self.listener.close()
        for fd in (self._read_fd, self._write_fd):
            if fd >= 0:
                os.close(fd)
        self._read_fd = self._write_fd = -1

    def _drain_pipe(self) -> None:
        # Reset the flag before the results are read, so a result appended from now on
        # writes to the pipe again.
        self._flag = False
        with contextlib.suppress(BlockingIOError):
            while os.read(self._read_fd, 4096):
                pass
