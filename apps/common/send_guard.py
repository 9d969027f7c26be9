"""The guard a thread's outgoing platform requests pass first.

Code that runs work under a lease (a job's claim) installs a check for the thread while it
runs; the HTTP plumbing calls `check()` right before each request leaves. A check raises
to stop the request (the job runner's raises LeaseLost: the worker no longer holds the job,
so whatever it would send now could duplicate what the worker that took over sends).
Lives here, below both, so the providers and the job runner need not know each other.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_local = threading.local()


@contextmanager
def guarding(check: Callable[[], None]) -> Iterator[None]:
    """Run the block with `check` called before each request this thread sends."""
    previous = getattr(_local, "check", None)
    _local.check = check
    try:
        yield
    finally:
        _local.check = previous


def check() -> None:
    """Called by the HTTP plumbing before a request leaves: raises if it must not."""
    current = getattr(_local, "check", None)
    if current is not None:
        current()
