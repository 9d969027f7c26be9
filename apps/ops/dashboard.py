"""The operators' dashboard in the admin: the queue, the workers, and what failed lately."""

from django.contrib import admin
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from apps.jobs.models import WorkerProcess
from apps.jobs.selectors import workers_polling
from apps.ops.metrics import PENDING_WINDOW, UNFINISHED_COUNTED

# One row per unfinished status, each read from that status's partial index (a single
# `status IN (...)` would scan the table, finished history and all). Counted as /metrics
# counts them: pending jobs when due within PENDING_WINDOW (not every post scheduled
# months ahead), pending and waiting up to UNFINISHED_COUNTED; the oldest run_at of each
# is one index probe.
_COUNTED = {
    "pending": f"""(SELECT count(*) FROM (
                    SELECT 1 FROM jobs_job
                     WHERE status = 'pending' AND run_at <= now() + interval '{PENDING_WINDOW}'
                     ORDER BY run_at LIMIT {UNFINISHED_COUNTED}) AS counted)""",  # noqa: S608
    "processing": "(SELECT count(*) FROM jobs_job WHERE status = 'processing')",
    "waiting": f"""(SELECT count(*) FROM (
                    SELECT 1 FROM jobs_job WHERE status = 'waiting'
                     ORDER BY run_at LIMIT {UNFINISHED_COUNTED}) AS counted)""",  # noqa: S608
}
_QUEUE_SQL = " UNION ALL ".join(
    f"""SELECT '{status}', {count},
               oldest, extract(epoch FROM now() - oldest)
          FROM (SELECT min(run_at) AS oldest FROM jobs_job WHERE status = '{status}') o"""  # noqa: S608
    for status, count in _COUNTED.items()
)  # only constants are spliced in
# What each row's count covers, as the page says it.
_COUNT_LABELS = {
    "pending": f"pending (due within {PENDING_WINDOW}, counted to {UNFINISHED_COUNTED:,})",
    "waiting": f"waiting (counted to {UNFINISHED_COUNTED:,})",
}
# Failed destinations by error kind and platform over the last day (the partial index
# rendition_failed_recent: failed rows by updated_at).
_FAILURES_SQL = """
    SELECT r.platform, coalesce(r.last_error->>'kind', 'unknown'), r.ambiguous, count(*)
      FROM renditions_rendition r
     WHERE r.status = 'failed' AND r.updated_at > now() - interval '24 hours'
     GROUP BY 1, 2, 3 ORDER BY 4 DESC
"""
# Jobs finished over the last day, whenever they were created (the index
# job_recent_activity, as the metrics' windows read it).
_JOB_OUTCOMES_SQL = """
    SELECT type, status, coalesce(last_error->>'kind', ''), count(*)
      FROM jobs_job
     WHERE greatest(started_at, finished_at) > now() - interval '24 hours'
       AND finished_at > now() - interval '24 hours'
     GROUP BY 1, 2, 3 ORDER BY 1, 2, 4 DESC
"""


def _rows(sql: str) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchall()


@admin.site.admin_view
def dashboard(request: HttpRequest) -> HttpResponse:
    queue = [
        {
            "status": _COUNT_LABELS.get(status, status),
            "count": count,
            "oldest_run_at": oldest,
            "age_s": age,
        }
        for status, count, oldest, age in _rows(_QUEUE_SQL)
        if count
    ]
    context = {
        **admin.site.each_context(request),
        "title": "Delivery dashboard",
        "queue": queue,
        "failures": [
            {"platform": p, "kind": k, "ambiguous": a, "count": c}
            for p, k, a, c in _rows(_FAILURES_SQL)
        ],
        "job_outcomes": [
            {"type": t, "status": s, "kind": k, "count": c}
            for t, s, k, c in _rows(_JOB_OUTCOMES_SQL)
        ],
        "polling": workers_polling().order_by("name"),
        "recent_workers": WorkerProcess.objects.order_by("-last_seen_at")[:20],
    }
    return TemplateResponse(request, "ops/dashboard.html", context)
