import pytest
from django.db import OperationalError, connection
from django.db.migrations.recorder import MigrationRecorder

from apps.ops import health


def test_healthz_answers_without_touching_the_database(client):
    # No `db` fixture: any query would raise.
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"


def test_probes_by_pod_ip_over_plain_http_get_a_real_answer(client, settings):
    settings.ALLOWED_HOSTS = ["post.example.com"]
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz", HTTP_HOST="10.1.2.3:8000").status_code == 200
    # The rest of the site still refuses unknown hosts.
    assert client.get("/login/", HTTP_HOST="10.1.2.3:8000").status_code == 400


def test_readyz_is_ok_when_the_database_answers_and_migrations_are_applied(client, db):
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"] == {"ok": True}
    assert body["checks"]["migrations"] == {"ok": True}
    # No worker runs in this test: reported, not critical.
    assert body["failed"] == ["workers"]


def test_readyz_names_unapplied_migrations(client, db):
    MigrationRecorder(connection).record_unapplied("ops", "0001_initial")
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["failed"] == ["migrations", "workers"]
    assert body["checks"]["migrations"]["unapplied"] == ["ops.0001_initial"]
    assert body["checks"]["migrations"]["unapplied_count"] == 1


def test_readyz_reports_an_unreachable_database_without_leaking_its_address(
    client, db, monkeypatch
):
    def refuse() -> None:
        raise OperationalError('connection to server at "10.9.8.7", port 5432 failed')

    with monkeypatch.context() as patch:
        patch.setattr(connection, "ensure_connection", refuse)
        response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["failed"] == ["database", "migrations"]
    assert body["checks"]["database"] == {"ok": False, "error": "OperationalError"}
    assert b"10.9.8.7" not in response.content


def test_a_failed_non_critical_check_is_reported_but_keeps_readiness(client, db, monkeypatch):
    def workers() -> health.CheckResult:
        return health.CheckResult("workers", False, {"last_poll_s": 300}, is_critical=False)

    monkeypatch.setattr(
        health, "READINESS_CHECKS", (health.check_database, health.check_migrations, workers)
    )
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["failed"] == ["workers"]
    assert response.json()["checks"]["workers"] == {"ok": False, "last_poll_s": 300}


def test_the_workers_check_reports_no_worker_without_failing_readiness(client, db):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"]["workers"] == {
        "ok": False,
        "polling": 0,
        "due_jobs": 0,
        "oldest_due_lag_s": 0.0,
    }


def test_the_workers_check_sees_a_polling_worker(client, db):
    from apps.jobs.worker import Worker

    worker = Worker(threads=1, name="probe-worker")
    worker.register()
    try:
        assert client.get("/readyz").json()["checks"]["workers"]["polling"] == 1
    finally:
        worker.unregister()


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_probes_are_reachable_through_the_url_routes_too(rf, db, path):
    from django.urls import resolve

    match = resolve(path)
    assert match.func(rf.get(path)).status_code == 200
