"""Behind PgBouncer in transaction mode (Debian's `pgbouncer`): a worker process claims and
finishes jobs through the pooler and wakes on a NOTIFY through its direct LISTEN
connection (DATABASE_DIRECT_URL), a web process creates and reads through the API, and a
token refresh's lock holds.

The pooler gives every transaction a fresh server session (server_lifetime = 0), so
anything that leans on one session between transactions fails here at once: a statement
prepared in an earlier transaction, a LISTEN, a session setting.

Without the pgbouncer binary these tests skip, unless REQUIRE_PGBOUNCER=1 (CI), where
they fail.
"""

import os
import pwd
import shutil
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import httpx
import psycopg
import pytest
from django.db import connection, transaction

from apps.common.direct import direct_connect
from apps.common.processes import ChildProcess, free_port, gunicorn_argv, web_environment
from apps.jobs.models import Job
from apps.jobs.services import JobSpec, job_enqueue_many
from apps.publications.models import Publication
from apps.publishing.locks import ACCOUNT_REFRESH_LOCK, account_refresh_lock
from tests.factories import SocialAccountFactory, WorkspaceFactory
from tests.processes import WorkerProcess, test_database_url, wait_until
from tests.test_settings import _setting, production_env

pytestmark = pytest.mark.slow
through_the_database = pytest.mark.django_db(transaction=True)

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


def _unavailable(reason: str) -> None:
    if os.environ.get("REQUIRE_PGBOUNCER") == "1":
        pytest.fail(f"{reason}, and REQUIRE_PGBOUNCER=1 requires the pooler tests.")
    pytest.skip(f"{reason}; set REQUIRE_PGBOUNCER=1 to fail instead of skipping.")


def _socket_owner(host: str) -> str | None:
    if not host.startswith("/"):
        return None
    owner = Path(host).stat().st_uid
    return pwd.getpwuid(owner).pw_name if owner != 0 else None


class PgBouncer:
    """A pgbouncer process in transaction mode in front of the test database's server."""

    def __init__(self, directory: Path, server: dict) -> None:
        self.port = free_port()
        self.log = directory / "pgbouncer.log"
        self.user = server["USER"] or "postgres"
        host = server["HOST"] or server["OPTIONS"].get("host") or "localhost"
        target = [f"host={host}", f"user={self.user}"]
        if server["PORT"]:
            target.append(f"port={server['PORT']}")
        if server["PASSWORD"]:
            target.append(f"password={server['PASSWORD']}")
        config = directory / "pgbouncer.ini"
        config.write_text(
            "\n".join(
                [
                    "[databases]",
                    "* = " + " ".join(target),
                    "[pgbouncer]",
                    "listen_addr = 127.0.0.1",
                    f"listen_port = {self.port}",
                    "unix_socket_dir =",
                    # The server connection logs in as the configured user whoever the
                    # client says it is (the test database's server is the only one).
                    "auth_type = any",
                    "pool_mode = transaction",
                    "default_pool_size = 4",
                    "max_client_conn = 50",
                    "server_lifetime = 0",
                    f"admin_users = {self.user}",
                    "",
                ]
            )
        )
        # pgbouncer refuses to run as root: it reads its configuration, then becomes the
        # user that owns the server's Unix socket directory, or `nobody` over TCP.
        as_user = ["-u", _socket_owner(host) or "nobody"] if os.geteuid() == 0 else []
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [PGBOUNCER, *as_user, str(config)], stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"pgbouncer did not start:\n{self.log.read_text()}"
                    ) from None
                time.sleep(0.05)

    def url(self, dbname: str) -> str:
        return f"postgres://{quote(self.user, safe='')}@127.0.0.1:{self.port}/{dbname}"

    def transactions(self, dbname: str) -> int:
        """Transactions the pooler has run for `dbname` (its admin console's SHOW STATS)."""
        with psycopg.connect(self.url("pgbouncer"), autocommit=True) as admin:
            cursor = admin.cursor()
            cursor.execute("SHOW STATS")
            names = [column.name for column in cursor.description]
            for row in cursor.fetchall():
                stats = dict(zip(names, row, strict=True))
                if stats["database"] == dbname:
                    return int(stats["total_xact_count"])
        return 0

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="module")
def pgbouncer(tmp_path_factory, django_db_setup, django_db_blocker):
    if not Path(PGBOUNCER).exists():
        _unavailable("pgbouncer is not installed (apt-get install pgbouncer)")
    with django_db_blocker.unblock():
        server = dict(connection.settings_dict)
    pooler = PgBouncer(tmp_path_factory.mktemp("pgbouncer"), server)
    yield pooler
    pooler.stop()


@pytest.fixture
def through_pooler(pgbouncer, settings):
    """This process's Django connection goes through the pooler, configured as
    config/settings.py configures it when DATABASE_DIRECT_URL is set."""
    direct = connection.settings_dict
    saved = {key: direct[key] for key in ("HOST", "PORT", "USER", "PASSWORD")}
    saved_options = dict(direct["OPTIONS"])
    server_options = {k: v for k, v in saved_options.items() if k in ("host", "options")}
    settings.DATABASE_DIRECT = {"NAME": direct["NAME"], **saved, "OPTIONS": server_options}
    settings.DB_PREPARED_STATEMENTS = False
    connection.close()
    cursors = direct.get("DISABLE_SERVER_SIDE_CURSORS", False)
    direct.update(HOST="127.0.0.1", PORT=pgbouncer.port, USER=pgbouncer.user, PASSWORD="")
    direct["DISABLE_SERVER_SIDE_CURSORS"] = True
    direct["OPTIONS"] = {k: v for k, v in saved_options.items() if k not in server_options}
    try:
        yield pgbouncer
    finally:
        connection.close()
        direct.update(saved, DISABLE_SERVER_SIDE_CURSORS=cursors)
        direct["OPTIONS"] = saved_options


def test_a_direct_url_keeps_session_state_off_the_pooled_connections():
    """With DATABASE_DIRECT_URL, DATABASE_URL is a pooler: no `options` startup parameter
    there (PgBouncer refuses it), the session bounds go with the direct sessions, no
    server-side cursor outlives a transaction, and prepared statements are off
    (DB_PREPARED_STATEMENTS=true turns them on behind a pooler that keeps them: PgBouncer
    1.21+ with max_prepared_statements)."""
    direct = "postgres://app@db.internal:5432/app"
    expression = (
        "(settings.DATABASES['default']['OPTIONS'].get('options'), "
        "settings.DATABASE_DIRECT['HOST'], settings.DATABASE_DIRECT['OPTIONS']['options'], "
        "settings.DB_PREPARED_STATEMENTS, "
        "settings.DATABASES['default'].get('DISABLE_SERVER_SIDE_CURSORS'))"
    )
    operator = {k: v for k, v in production_env().items() if not k.startswith("DB_")}
    pooled = {**operator, "DATABASE_DIRECT_URL": direct, "DB_LOCK_TIMEOUT_S": "2"}
    bounds = "-c statement_timeout=30000 -c idle_in_transaction_session_timeout=60000"
    assert _setting(pooled, expression) == repr(
        (None, "db.internal", f"{bounds} -c lock_timeout=2000", False, True)
    )


@through_the_database
def test_a_worker_behind_the_pooler_runs_jobs_and_wakes_on_notify(pgbouncer, tmp_path):
    dbname = connection.settings_dict["NAME"]
    workspace = WorkspaceFactory(organization__inflight_cap=10)

    def enqueue(count: int, sleep_s: float = 0.0) -> None:
        with transaction.atomic():
            job_enqueue_many(
                JobSpec(
                    type="noop",
                    payload={"sleep_s": sleep_s},
                    organization_id=workspace.organization_id,
                    workspace_id=workspace.pk,
                )
                for _ in range(count)
            )

    enqueue(16)
    enqueue(2, sleep_s=3.5)  # longer than the stale window: only heartbeats keep them
    pooled_before = pgbouncer.transactions(dbname)
    worker = WorkerProcess(
        tmp_path,
        "pooled",
        "--types",
        "noop",
        "--threads",
        "2",
        "--batch-size",
        "5",
        DATABASE_URL=pgbouncer.url(dbname),
        DATABASE_DIRECT_URL=test_database_url(),
        # Only a NOTIFY wakes it within this test: the poll is a minute away.
        WORKER_POLL_S="60",
        WORKER_HEARTBEAT_S="0.3",
        WORKER_STALE_AFTER_S="3",
        DB_LOCK_TIMEOUT_S="0",  # a stale window this short must not be checked against it
    )
    noop = Job.objects.filter(type="noop")
    try:
        wait_until(lambda: noop.filter(status="done").count() == 18, 30, "the first jobs done")
        assert pgbouncer.transactions(dbname) > pooled_before, "the worker bypassed the pooler"
        time.sleep(0.5)  # the worker is back in its wait, LISTENing
        woken_at = time.monotonic()
        enqueue(1)
        wait_until(lambda: noop.filter(status="done").count() == 19, 10, "the NOTIFYed job done")
        assert time.monotonic() - woken_at < 10
        assert worker.stop() == 0
    finally:
        worker.kill()
    assert "Traceback" not in worker.output(), worker.output()
    assert set(noop.values_list("status", flat=True)) == {"done"}
    assert not noop.filter(recoveries__gte=1).exists(), "a lease lapsed: no heartbeat got through"


@through_the_database
def test_a_web_process_behind_the_pooler_creates_and_reads(
    pgbouncer, workspace_a, make_token, tmp_path
):
    """The API served as in production (gunicorn, ASGI, its own pool of connections) with
    DATABASE_URL naming the pooler."""
    dbname = connection.settings_dict["NAME"]
    account = SocialAccountFactory(workspace=workspace_a, platform="sandbox", handle="pooled")
    token = make_token(workspace_a).clear
    port = free_port()
    environment = {
        **os.environ,
        "DATABASE_URL": pgbouncer.url(dbname),
        "DATABASE_DIRECT_URL": test_database_url(),
        "API_THROTTLE_RATE": "",
        "LOG_LEVEL": "WARNING",
    }
    web = ChildProcess(
        gunicorn_argv(f"127.0.0.1:{port}", "--workers", "1", "--log-level", "warning"),
        env=web_environment(environment),
        log=tmp_path / "web.log",
    )
    base = f"http://127.0.0.1:{port}"
    try:
        assert web.wait_http_ok(f"{base}/readyz", timeout=60, interval=0.1), web.output()
        before = pgbouncer.transactions(dbname)
        api = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"})
        created = api.post(
            "/api/v1/publications",
            json={"text": "Through the pooler", "destinations": [{"account": account.pk}]},
        )
        assert created.status_code == 201, created.text
        body = created.json()
        # Each transaction runs on a new server session: the same statements, twice.
        for _ in range(2):
            read = api.get(f"/api/v1/publications/{body['id']}")
            assert read.status_code == 200, read.text
            assert read.json() == body
        listed = api.get("/api/v1/publications")
        assert listed.status_code == 200, listed.text
        assert [item["id"] for item in listed.json()["results"]] == [body["id"]]
        assert pgbouncer.transactions(dbname) > before, "the web process bypassed the pooler"
    finally:
        web.stop(timeout=15)
    assert "Traceback" not in web.output(), web.output()
    assert Publication.objects.filter(pk=body["id"], workspace=workspace_a).exists()


@through_the_database
def test_a_token_refresh_lock_is_held_behind_the_pooler(through_pooler):
    """The refresh lock is a session lock: through the pooler, the session that took it
    would end with its transaction (or serve another worker's)."""
    key = [ACCOUNT_REFRESH_LOCK, 4242]
    take = "SELECT pg_try_advisory_lock(%s, %s)"
    with direct_connect(application_name="another worker") as other:
        with account_refresh_lock(4242):
            Job.objects.exists()  # this thread's transactions go on through the pooler
            assert other.execute(take, key).fetchone() == (False,)
        assert other.execute(take, key).fetchone() == (True,)
