"""A worker's proof of life: the leases of the jobs it holds, and its WorkerProcess row."""

from __future__ import annotations

import logging
import os
import socket
import uuid

from django.db.models.functions import Now

from apps.jobs import queue
from apps.jobs.models import WorkerProcess

logger = logging.getLogger(__name__)


def refresh_leases(held: list[tuple[int, uuid.UUID]], *, stale_s: float) -> set[int]:
    """Refresh the lease of each (job id, lease) held. Returns the ids found lost
    (recovered or taken over by another worker)."""
    alive = queue.heartbeat(held, stale_s=stale_s)
    lost = {pk for pk, _ in held} - alive
    for pk in lost:
        logger.warning(
            "Job %s lost its lease (recovered by another worker); its outcome will not be written.",
            pk,
            extra={"job_id": pk},
        )
    return lost


def register(*, name: str, threads: int, types: list[str]) -> None:
    WorkerProcess.objects.update_or_create(
        name=name,
        defaults={
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "threads": threads,
            "types": types,
            "stopped_at": None,
        },
    )


def touch(*, name: str, jobs_running: int, jobs_done: int) -> bool:
    """Mark the worker seen now. False when its row is gone (pruned while the worker was
    cut off), so the caller registers again."""
    touched = WorkerProcess.objects.filter(name=name).update(
        last_seen_at=Now(),
        updated_at=Now(),
        jobs_running=jobs_running,
        jobs_done=jobs_done,
    )
    return touched > 0


def mark_stopped(*, name: str, jobs_done: int) -> None:
    WorkerProcess.objects.filter(name=name).update(
        stopped_at=Now(),
        last_seen_at=Now(),
        updated_at=Now(),
        jobs_running=0,
        jobs_done=jobs_done,
    )
