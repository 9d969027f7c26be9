"""Prometheus metrics at `/metrics`, read from the database at scrape time.

Every web and worker process shares one truth (PostgreSQL), so the numbers are the same
whichever process is scraped, with no per-process counters to aggregate. Each query reads
a bounded window through an index: the unfinished jobs by status (each status's partial
index; pending ones due within the next hour; counts capped), and the jobs that ran
or finished lately (job_recent_activity), so a scrape costs the same beside a year of
history and months of posts scheduled ahead.

Access: with METRICS_TOKEN set, scrapers send `Authorization: Bearer <token>`; without it,
only requests from the loopback address are answered (a sidecar or a local agent).
"""

import hmac
import ipaddress

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily

from apps.jobs.selectors import workers_polling
from apps.ops.health import due_work

# Recent finished jobs are counted over this window; publish latency too.
OUTCOME_WINDOW = "1 hour"
LATENCY_BUCKETS = (1, 5, 15, 60, 300, 900, 3600)
# Pending and waiting jobs are counted up to this many each (in run_at order, so the
# count stops there): a scrape must not walk a backlog, nor every post a hosted service
# holds scheduled months ahead. Processing jobs are bounded by the in-flight caps.
UNFINISHED_COUNTED = 10_000
# Pending jobs are counted when due within this window (those already due included).
PENDING_WINDOW = "1 hour"

# The jobs that ran or finished lately, read as a range of the index
# job_recent_activity (on greatest(started_at, finished_at)): each window's query names
# that expression, then its own exact condition. Only the jobs active in the window are
# read, whenever they were created, and never the finished history or the jobs ahead.
_RECENT = "greatest(started_at, finished_at) > now() - interval '{}'"

_OUTCOMES_SQL = f"""
    SELECT type, status, coalesce(last_error->>'kind', ''), count(*)
      FROM jobs_job
     WHERE {_RECENT.format(OUTCOME_WINDOW)}
       AND finished_at > now() - interval '{OUTCOME_WINDOW}'
     GROUP BY 1, 2, 3
"""  # noqa: S608 - constants
# Unfinished jobs by status, one count per status so each is read from that status's
# partial index (the finished history is in none of them).
_UNFINISHED_SQL = f"""
    SELECT (SELECT count(*) FROM (
                SELECT 1 FROM jobs_job
                 WHERE status = 'pending' AND run_at <= now() + interval '{PENDING_WINDOW}'
                 ORDER BY run_at LIMIT {UNFINISHED_COUNTED}) AS pending),
           (SELECT count(*) FROM jobs_job WHERE status = 'processing'),
           (SELECT count(*) FROM (
                SELECT 1 FROM jobs_job WHERE status = 'waiting'
                 ORDER BY run_at LIMIT {UNFINISHED_COUNTED}) AS waiting)
"""  # noqa: S608 - constants
_CLAIMS_SQL = f"""
    SELECT count(*) FROM jobs_job
     WHERE {_RECENT.format("5 minutes")} AND started_at > now() - interval '5 minutes'
"""  # noqa: S608 - constants
_LATENCY_SQL = f"""
    SELECT extract(epoch FROM finished_at - run_at)
      FROM jobs_job
     WHERE {_RECENT.format(OUTCOME_WINDOW)}
       AND type = 'renditions.publish' AND status = 'done'
       AND finished_at > now() - interval '{OUTCOME_WINDOW}'
"""  # noqa: S608 - constants


UNFINISHED_STATUSES = ("pending", "processing", "waiting")


def unfinished_counts() -> dict[str, int]:
    """Unfinished jobs by status, counted as _UNFINISHED_SQL bounds them (the scrape and
    the operators' dashboard show the same figures)."""
    with connection.cursor() as cursor:
        cursor.execute(_UNFINISHED_SQL)
        return dict(zip(UNFINISHED_STATUSES, cursor.fetchone(), strict=True))


class QueueCollector:
    """Collects the queue and delivery figures on each scrape."""

    def collect(self):
        unfinished = unfinished_counts()
        due, lag = due_work()
        jobs = GaugeMetricFamily(
            "socialpost_queue_jobs",
            f"Unfinished jobs by status: pending ones due within the next {PENDING_WINDOW} "
            f"(or already due) and waiting ones, each counted up to {UNFINISHED_COUNTED:,}; "
            "every processing one.",
            labels=["status"],
        )
        for status, count in unfinished.items():
            jobs.add_metric([status], count)
        yield jobs
        yield GaugeMetricFamily(
            "socialpost_queue_due_jobs",
            "Pending jobs whose run_at has come (counted up to 100).",
            value=due,
        )
        yield GaugeMetricFamily(
            "socialpost_queue_lag_seconds", "How late the oldest due pending job is.", value=lag
        )
        yield GaugeMetricFamily(
            "socialpost_workers_polling",
            "run_worker processes seen within two heartbeats.",
            value=workers_polling().count(),
        )
        with connection.cursor() as cursor:
            cursor.execute(_CLAIMS_SQL)
            claims = cursor.fetchone()[0]
            cursor.execute(_OUTCOMES_SQL)
            outcomes = cursor.fetchall()
            cursor.execute(_LATENCY_SQL)
            latencies = [float(row[0]) for row in cursor.fetchall()]
            cursor.execute(
                "SELECT count(*) FROM renditions_rendition WHERE ambiguous"
            )  # the partial index rendition_ambiguous
            ambiguous = cursor.fetchone()[0]
        yield GaugeMetricFamily(
            "socialpost_job_claims_recent", "Jobs claimed in the last 5 minutes.", value=claims
        )
        family = GaugeMetricFamily(
            "socialpost_job_outcomes_recent",
            f"Jobs finished in the last {OUTCOME_WINDOW}, by type, status and error kind.",
            labels=["type", "status", "kind"],
        )
        for job_type, status, kind, count in outcomes:
            family.add_metric([job_type, status, kind], count)
        yield family
        yield GaugeMetricFamily(
            "socialpost_renditions_ambiguous",
            "Destinations whose outcome is unknown, awaiting reconciliation or a person.",
            value=ambiguous,
        )
        yield _histogram(
            "socialpost_publish_latency_seconds",
            f"Due time to delivered, for publish jobs done in the last {OUTCOME_WINDOW}.",
            latencies,
        )


def _histogram(name: str, documentation: str, values: list[float]) -> HistogramMetricFamily:
    buckets = []
    for bound in LATENCY_BUCKETS:
        buckets.append((str(float(bound)), sum(1 for v in values if v <= bound)))
    buckets.append(("+Inf", len(values)))
    return HistogramMetricFamily(name, documentation, buckets=buckets, sum_value=sum(values))


def _allowed(request: HttpRequest) -> bool:
    token = settings.METRICS_TOKEN
    if token:
        keyword, _, given = request.headers.get("Authorization", "").partition(" ")
        return keyword.lower() == "bearer" and hmac.compare_digest(given.strip(), token)
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


def metrics(request: HttpRequest) -> HttpResponse:
    if not _allowed(request):
        return HttpResponse("Forbidden: send the METRICS_TOKEN.\n", status=403)
    registry = CollectorRegistry()
    registry.register(QueueCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
