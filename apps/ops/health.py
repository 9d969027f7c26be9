"""Liveness (`/healthz`) and readiness (`/readyz`) for Docker, load balancers and Kubernetes.

`/healthz` says the process answers; it never touches the database, so a database outage
doesn't get every web process restarted. `/readyz` says this process can serve traffic: the
database answers and every migration on disk is applied (so a new release's pods stay out of
the load balancer until the migration job has run).

Both are answered by `HealthCheckMiddleware`, first in MIDDLEWARE, because probes reach a pod
by its IP (not in ALLOWED_HOSTS) and over plain HTTP (SECURE_SSL_REDIRECT): further down the
chain they would get a 400 or a redirect instead of an answer.
"""

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.http import HttpRequest, HttpResponse, JsonResponse

from apps.common.responses import keep_out_of_error_log

logger = logging.getLogger(__name__)

_MAX_LISTED = 20


@dataclass(frozen=True)
class CheckResult:
    """One readiness check. A failed non-critical check is reported but keeps the pod ready."""

    name: str
    ok: bool
    details: dict = field(default_factory=dict)
    is_critical: bool = True


def check_database() -> CheckResult:
    try:
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        # The body is public: name the failure's class, keep hosts and credentials in the log.
        logger.warning("readiness: database unreachable", exc_info=True)
        return CheckResult("database", False, {"error": type(exc).__name__})
    return CheckResult("database", True)


@functools.cache
def migrations_on_disk() -> tuple[tuple[str, str], ...] | None:
    """Every migration this release ships, in the order they apply; read from disk once
    per process (it cannot change under a running process). None when some replace
    others (squashed): which of those count depends on what is applied, so the full plan
    is worked out on each probe then."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    if loader.replacements:
        return None
    graph = loader.graph
    plan = (node for leaf in graph.leaf_nodes() for node in graph.forwards_plan(leaf))
    return tuple(dict.fromkeys(plan))


def _unapplied() -> list[str]:
    expected = migrations_on_disk()
    if expected is None:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
        return [f"{migration.app_label}.{migration.name}" for migration, _ in plan]
    with connection.cursor() as cursor:
        cursor.execute("SELECT app, name FROM django_migrations")
        applied = set(cursor.fetchall())
    return [f"{app}.{name}" for app, name in expected if (app, name) not in applied]


def check_migrations() -> CheckResult:
    try:
        unapplied = _unapplied()
    except Exception as exc:
        logger.warning("readiness: migration state unknown", exc_info=True)
        return CheckResult("migrations", False, {"error": type(exc).__name__})
    if unapplied:
        details = {"unapplied_count": len(unapplied), "unapplied": unapplied[:_MAX_LISTED]}
        return CheckResult("migrations", False, details)
    return CheckResult("migrations", True)


# Due jobs are counted up to this many: past it the lag says more than the number, and a
# probe (every few seconds, on every pod) must not walk a backlog.
DUE_COUNTED = 100

# Only the due pending jobs, read from the start of the partial index on pending run_at:
# the jobs scheduled ahead, and the finished history, are never read.
_DUE_SQL = f"""
    SELECT count(*), coalesce(extract(epoch FROM now() - min(run_at)), 0)
      FROM (SELECT run_at FROM jobs_job
             WHERE status = 'pending' AND run_at <= now()
             ORDER BY run_at LIMIT {DUE_COUNTED}) AS due
"""  # noqa: S608 - a constant


def due_work() -> tuple[int, float]:
    """How many pending jobs are due (at most DUE_COUNTED), and how late the oldest is."""
    with connection.cursor() as cursor:
        cursor.execute(_DUE_SQL)
        due, lag = cursor.fetchone()
    return due, float(lag)


def check_workers_polling() -> CheckResult:
    """Whether `run_worker` processes are polling the queue, and how far behind it is.

    Not critical: web processes stay ready when workers are down, since accepting posts for
    later delivery is still right; monitoring reads the failure in the body.
    """
    from apps.jobs.selectors import workers_polling

    polling = workers_polling().count()
    due, lag = due_work()
    return CheckResult(
        "workers",
        polling > 0,
        {"polling": polling, "due_jobs": due, "oldest_due_lag_s": round(lag, 3)},
        is_critical=False,
    )


READINESS_CHECKS: tuple[Callable[[], CheckResult | None], ...] = (
    check_database,
    check_migrations,
    check_workers_polling,
)


def run_readiness_checks() -> tuple[bool, list[CheckResult]]:
    """All checks in order; migrations are not asked about when the database is down."""
    results: list[CheckResult] = []
    for check in READINESS_CHECKS:
        if check is not check_database and results and not results[0].ok:
            if check is check_migrations:
                results.append(CheckResult("migrations", False, {"error": "database unreachable"}))
            continue
        result = check()
        if result is not None:
            results.append(result)
    ready = all(result.ok for result in results if result.is_critical)
    return ready, results


def healthz(request: HttpRequest) -> HttpResponse:
    return _no_store(JsonResponse({"status": "ok"}))


def readyz(request: HttpRequest) -> HttpResponse:
    ready, results = run_readiness_checks()
    body = {
        "status": "ok" if ready else "unavailable",
        "checks": {r.name: {"ok": r.ok, **r.details} for r in results},
        "failed": [r.name for r in results if not r.ok],
    }
    return _no_store(JsonResponse(body, status=200 if ready else 503))


def _no_store(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-store"
    # A failing check already logged why; skip django.request's error line on every probe.
    keep_out_of_error_log(response)
    return response


_PROBES = {"/healthz": healthz, "/readyz": readyz}


class HealthCheckMiddleware:
    """Answers GET/HEAD `/healthz` and `/readyz` before host validation and HTTPS redirects."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        view = _PROBES.get(request.path_info.rstrip("/"))
        if view is not None and request.method in ("GET", "HEAD"):
            return view(request)
        return self.get_response(request)
