"""Checks a service runs as late as its caller's transaction allows.

A check that takes a lock held until COMMIT (the organization's quota lock) makes every
concurrent writer wait from the lock to the COMMIT, so it should run last. A service hands
such a check to ``run_last``: it runs at once, unless the caller opened ``deferred()``
around the work, inside its transaction; then it runs as that block ends, after everything
else the caller wrote (the API's idempotency record, after the response is rendered), just
before the COMMIT. A check that raises there rolls the whole transaction back, as it would
have at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import connection

_pending: ContextVar[list[Callable[[], None]] | None] = ContextVar("deferred_checks", default=None)


@contextmanager
def deferred() -> Iterator[None]:
    """Run the checks handed to ``run_last`` inside the block when it ends without an
    error. Open it inside the transaction (``with transaction.atomic(), deferred():``), so
    the checks run before the COMMIT; a block opened inside another adds to the outer one."""
    if _pending.get() is not None:
        yield
        return
    if not connection.in_atomic_block:
        raise RuntimeError("deferred() runs its checks in a transaction: open one first")
    checks: list[Callable[[], None]] = []
    token = _pending.set(checks)
    try:
        yield
        while checks:
            checks.pop(0)()
    finally:
        _pending.reset(token)


def run_last(check: Callable[[], None]) -> None:
    """Run check now, or at the end of the enclosing ``deferred()`` block."""
    checks = _pending.get()
    if checks is None:
        check()
    else:
        checks.append(check)
