"""Read-only questions about the queue, for the admin, /readyz and metrics."""

from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet
from django.db.models.functions import Now

from apps.jobs.models import WorkerProcess


def workers_polling(*, within_s: float | None = None) -> QuerySet[WorkerProcess]:
    """Worker processes not stopped and seen within `within_s` (default: two heartbeats),
    on the database clock."""
    within = 2 * settings.WORKER_HEARTBEAT_S if within_s is None else within_s
    return WorkerProcess.objects.running().filter(
        last_seen_at__gt=Now() - timedelta(seconds=within)
    )


def queue_stats() -> dict:
    """Jobs per status (finished ones excluded: that is history), how many pending jobs
    are due, and how late the oldest due one is, in seconds (0 when none is due)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT status, count(*) FROM jobs_job
             WHERE status IN ('pending', 'processing', 'waiting') GROUP BY status
            """
        )
        by_status = dict(cursor.fetchall())
        cursor.execute(
            """
            SELECT count(*), coalesce(extract(epoch FROM now() - min(run_at)), 0)
              FROM jobs_job WHERE status = 'pending' AND run_at <= now()
            """
        )
        due, lag = cursor.fetchone()
    return {
        "pending": by_status.get("pending", 0),
        "processing": by_status.get("processing", 0),
        "waiting": by_status.get("waiting", 0),
        "due": due,
        "oldest_due_lag_s": float(lag),
    }
