"""`make db-stop` (`python -m config.embedded_db stop`) on a private embedded PostgreSQL: the
pids of users that died of a signal are dropped before deciding, a live user keeps the
server up unless forced."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each starts a real PostgreSQL (initdb on the first)

ROOT = Path(__file__).resolve().parent.parent.parent
START = (
    "import os, pathlib; from config.embedded_db import embedded_database_url; "
    "embedded_database_url(pathlib.Path(os.environ['VAR_DIR']) / 'pgdata')"
)


def _env(var_dir: Path) -> dict[str, str]:
    env = {**os.environ, "VAR_DIR": str(var_dir)}
    env.pop("XDG_RUNTIME_DIR", None)  # the lock file goes next to this data, as in a checkout
    return env


def _db_stop(var_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - fixed argv
        [sys.executable, "-m", "config.embedded_db", "stop", *args],
        cwd=ROOT,
        env=_env(var_dir),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _users(var_dir: Path) -> list[int]:
    return json.loads((var_dir / "pgdata" / ".handle_pids.json").read_text())


def test_it_stops_the_server_when_its_only_users_died_of_a_signal(tmp_path):
    # As a Ctrl-C'd web worker does: it dies by the signal, never taking its pid off the list.
    code = START + "; import signal; os.kill(os.getpid(), signal.SIGKILL)"
    dead = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=_env(tmp_path))  # noqa: S603
    dead.wait(timeout=120)
    assert _users(tmp_path) == [dead.pid]
    assert (tmp_path / "pgdata" / "postmaster.pid").exists()

    stop = _db_stop(tmp_path)

    assert stop.returncode == 0, stop.stderr
    assert "Stopped the embedded PostgreSQL" in stop.stdout
    assert not (tmp_path / "pgdata" / "postmaster.pid").exists()
    assert _users(tmp_path) == []
    assert "is not running" in _db_stop(tmp_path).stdout  # and it is not started to be stopped
    assert not (tmp_path / "pgdata" / "postmaster.pid").exists()


def test_a_live_user_keeps_it_up_unless_forced(tmp_path):
    code = START + "; import sys; sys.stdin.read()"
    user = subprocess.Popen(  # noqa: S603
        [sys.executable, "-c", code], cwd=ROOT, env=_env(tmp_path), stdin=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120
        while user.pid not in _listed(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.2)

        refused = _db_stop(tmp_path)
        assert refused.returncode == 1
        assert f"still used by pid {user.pid}" in refused.stderr
        assert (tmp_path / "pgdata" / "postmaster.pid").exists()

        forced = _db_stop(tmp_path, "--force")
        assert forced.returncode == 0, forced.stderr
        assert not (tmp_path / "pgdata" / "postmaster.pid").exists()
    finally:
        user.kill()
        user.wait()


def _listed(var_dir: Path) -> list[int]:
    try:
        return _users(var_dir)
    except (FileNotFoundError, json.JSONDecodeError):
        return []
