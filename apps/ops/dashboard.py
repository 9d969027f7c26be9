"""The operators' dashboard in the admin: the queue, the workers, and what failed lately."""

from django.contrib import admin
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from apps.jobs.models import WorkerProcess
from apps.jobs.selectors import workers_polling
from apps.ops.metrics import (
    PENDING_WINDOW,
    UNFINISHED_COUNTED,
    UNFINISHED_STATUSES,
    unfinished_counts,
)

# The oldest run_at of each unfinished status, one probe of that status's partial index
# (the counts are /metrics': unfinished_counts).
_OLDEST_SQL = " UNION ALL ".join(
    f"""SELECT '{status}', oldest, extract(epoch FROM now() - oldest)
          FROM (SELECT min(run_at) AS oldest FROM jobs_job WHERE status = '{status}') o"""  # noqa: S608
    for status in UNFINISHED_STATUSES
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
    counts = unfinished_counts()
    queue = [
        {
            "status": _COUNT_LABELS.get(status, status),
            "count": counts[status],
            "oldest_run_at": oldest,
            "age_s": age,
        }
        for status, oldest, age in _rows(_OLDEST_SQL)
        if counts[status]
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
