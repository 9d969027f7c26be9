"""Signals that stop a worker: the first SIGTERM/SIGINT starts a graceful stop (no more
claims, running jobs get the grace period), a second one ends the grace period."""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apps.jobs.worker import Worker


def stop_on_signals(worker: Worker) -> None:
    """Install SIGTERM/SIGINT handlers that stop `worker` (call from the main thread)."""

    def on_signal(signum: int, frame: object) -> None:
        worker.request_stop(force=worker.stop_requested)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
