"""Wall-clock limits on handlers: each job type's `time_limit_s`, enforced by the worker.

A Python thread cannot be killed, so a handler past its limit is given up on, in three steps:

1. The job is settled as if its worker had died: by its type's stale policy, under the
   claim's lease, with kind "timed_out" (a publish goes ambiguous and is reconciled, a
   read-only job is requeued, a periodic sweep is closed until its next run). The policy
   is the type's own statement of what is safe while the handler may still be running,
   and the lease keeps the queue's fencing: the handler's later lease-guarded writes
   raise LeaseLost, and its result, when it comes, is discarded.
2. `TimeLimitExceeded` is raised inside the handler's thread, which stops a handler
   spinning in Python code at its next line (a blocking call ends at its own timeout).
3. The thread is retired: it exits once the handler returns, and a fresh thread takes
   its place at once, so the worker keeps its full number of handler threads.
"""

from __future__ import annotations

import ctypes
import logging
import threading

from apps.jobs.errors import TimeLimitExceeded

logger = logging.getLogger(__name__)


def interrupt(thread: threading.Thread) -> bool:
    """Raise TimeLimitExceeded in `thread` at its next Python instruction. Returns False
    when the thread has already ended."""
    if thread.ident is None or not thread.is_alive():
        return False
    found = ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread.ident), ctypes.py_object(TimeLimitExceeded)
    )
    if found > 1:  # never expected: undo rather than hit several threads
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), None)
        return False
    return found == 1
