"""The soak's private PostgreSQL: created in a temporary directory, restarted, stopped and
removed by the object that started it, and never any other server."""

import signal
import threading
import time

import psycopg
import pytest
from django.db import connection

from apps.common.processes import ChildProcess
from loadtest.private_pg import (
    APP_ROLE,
    PrivatePostgres,
    PrivatePostgresUnavailable,
    copy_database,
    find_bin_dir,
    use_database,
)
from loadtest.soak_chaos import PAUSE, FaultPlayer, FaultTimes
from tests.processes import test_database_url

pytestmark = pytest.mark.slow  # starts a PostgreSQL server

try:
    find_bin_dir()
except PrivatePostgresUnavailable as exc:
    pytestmark = [pytestmark, pytest.mark.skip(reason=str(exc))]


def _answer(dsn: str) -> int:
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        return conn.execute("SELECT 1").fetchone()[0]


def _shared_server_answers() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        return cursor.fetchone()[0] == 1


@pytest.mark.django_db
def test_the_private_server_starts_restarts_stops_and_is_removed():
    server = PrivatePostgres(max_connections=12).start()
    root = server.root
    try:
        assert root.is_dir()
        assert _answer(server.dsn(role=APP_ROLE)) == 1
        with psycopg.connect(server.dsn(role=APP_ROLE)) as conn:
            assert conn.execute("SELECT current_user").fetchone()[0] == APP_ROLE
            rolsuper = "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
            assert conn.execute(rolsuper).fetchone()[0] is False

        for mode in ("fast", "immediate"):
            before = psycopg.connect(server.dsn(role=APP_ROLE))
            server.restart(mode)
            # A session of before the restart is gone; a new one gets in.
            with pytest.raises(psycopg.OperationalError):
                before.execute("SELECT 1")
            before.close()
            assert _answer(server.dsn(role=APP_ROLE)) == 1

        server.stop()
        assert not server.is_running()
        with pytest.raises(psycopg.OperationalError):
            _answer(server.dsn(role=APP_ROLE))
        assert _shared_server_answers()  # the server it did not start is untouched
        server.start_again()
        assert _answer(server.dsn(role=APP_ROLE)) == 1
    finally:
        server.destroy()
    assert not root.exists()
    assert not server.is_running()
    server.destroy()  # twice is harmless
    assert _shared_server_answers()


def test_a_server_it_did_not_start_is_never_touched(tmp_path):
    server = PrivatePostgres()
    for act in (server.restart, server.stop, server.start_again):
        with pytest.raises(RuntimeError, match="start"):
            act()
    # Not even a directory that holds a cluster: only the one start() created.
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "PG_VERSION").write_text("15\n")
    server.root = tmp_path
    with pytest.raises(RuntimeError, match="Not a server this object started"):
        server.restart("fast")
    assert not server.is_running()
    with pytest.raises(ValueError, match="shutdown mode"):
        PrivatePostgres._check_mode("abrupt")


@pytest.mark.django_db(transaction=True)
def test_another_client_takes_every_free_connection_and_gives_them_back():
    with PrivatePostgres(max_connections=8) as server:
        held = server.take_free_connections()
        try:
            # Every slot but the superusers' reserved ones is taken.
            assert len(held) == 8 - 3
            with pytest.raises(psycopg.OperationalError):
                _answer(server.dsn(role=APP_ROLE))
            assert _answer(server.dsn()) == 1  # a superuser still gets in
        finally:
            server.release(held)
        assert _answer(server.dsn(role=APP_ROLE)) == 1


@pytest.mark.django_db(transaction=True)
def test_the_soak_process_runs_on_the_private_database_while_inside():
    with PrivatePostgres(max_connections=12) as server:
        copy_database(test_database_url(), server)
        shared_port = connection.settings_dict["PORT"]
        seen: list[str] = []
        with use_database(server.url()):
            assert str(connection.settings_dict["PORT"]) == str(server.port)
            with connection.cursor() as cursor:
                cursor.execute("SELECT current_user, count(*) FROM django_migrations")
                user, migrations = cursor.fetchone()
            assert (user, migrations > 0) == (APP_ROLE, True)

            def other_thread() -> None:  # a thread of its own opens its connection there too
                with connection.cursor() as cursor:
                    cursor.execute("SELECT current_database()")
                    seen.append(cursor.fetchone()[0])
                connection.close()

            thread = threading.Thread(target=other_thread)
            thread.start()
            thread.join()
        assert seen == ["soak"]
        assert connection.settings_dict["PORT"] == shared_port
        assert _shared_server_answers()


def test_a_paused_worker_is_stopped_for_the_pause_then_resumed(tmp_path):
    child = ChildProcess(["sleep", "30"], env={}, log=tmp_path / "sleep.log", cwd=tmp_path)
    stopping = threading.Event()
    player = FaultPlayer(
        PAUSE,
        times=FaultTimes(every_s=0, times=1, pause_s=1.0),
        started=time.monotonic(),
        stopping=stopping,
        in_flight=lambda: True,
        pause_victim=lambda: child,
        server=None,
    )

    def state() -> str:
        return open(f"/proc/{child.pid}/stat").read().split(") ")[1][0]

    thread = threading.Thread(target=player.run)
    thread.start()
    try:
        time.sleep(0.5)
        assert state() == "T"  # stopped
        thread.join(timeout=10)
        # Running again: any state but stopped (a resumed process may be in disk sleep, D,
        # for a moment on a busy machine).
        deadline = time.monotonic() + 5
        while state() == "T" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state() in "SRD"
        assert [(e["what"], e["detail"]) for e in player.as_dicts()] == [
            (PAUSE, f"pid {child.pid}")
        ]
        assert player.as_dicts()[0]["took_s"] >= 1.0
    finally:
        stopping.set()
        child.stop(signal.SIGKILL, timeout=5)


def test_the_database_faults_are_played_only_on_a_private_server():
    with pytest.raises(ValueError, match="private server"):
        FaultPlayer(
            "db-restart-fast",
            times=FaultTimes(),
            started=0.0,
            stopping=threading.Event(),
            in_flight=lambda: True,
            pause_victim=lambda: None,
            server=None,
        )
