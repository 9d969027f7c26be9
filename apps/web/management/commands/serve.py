"""`python manage.py serve [--demo] [--port P]`: the one command to try the product.

Migrates, optionally creates a demo workspace, then runs the web server (gunicorn with
uvicorn workers: the site and the MCP endpoint at /mcp; `--wsgi` for threaded WSGI workers,
without /mcp) and the worker as child processes until interrupted. Each step is said as it
starts (the migrations with a progress bar), and "Serving on" is printed only once the web
server answers its /healthz.
"""

import os
import signal
import socket
import time
from types import FrameType

import httpx
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.management.commands import migrate
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.common.processes import ChildProcess, gunicorn_argv, manage_argv, web_environment
from apps.common.progress import ProgressBar, TextOut
from apps.web.demo import DemoSetup, demo_setup
from config.embedded_db import embedded_database_users


class _LineProgress:
    """ProgressBar's shape for a log (no terminal to redraw): a line each tenth of the way."""

    def __init__(self, out: TextOut, label: str, total: int) -> None:
        self.out, self.label, self.total = out, label, total
        self.done = 0
        self._said = 0

    def update(self, done: int, extra: str = "", *, force: bool = False) -> None:
        self.done = done
        step = max(self.total // 10, 1)
        if done == self.total or done - self._said >= step:
            self._said = done
            self.out.write(f"  {self.label}: {done}/{self.total}\n")
            self.out.flush()

    def close(self) -> None:
        pass


class _MigrateWithProgress(migrate.Command):
    """`migrate` that moves a progress bar as each migration is applied, instead of its
    line per migration."""

    def __init__(self, progress: ProgressBar | _LineProgress) -> None:
        super().__init__()
        self.progress = progress

    def migration_progress_callback(
        self, action: str, migration: object = None, fake: bool = False
    ) -> None:
        if action == "apply_success":
            self.progress.update(self.progress.done + 1, str(migration))


class Command(BaseCommand):
    help = "Migrate, optionally create a demo workspace, and run web + worker."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--demo", action="store_true", help="Create a demo workspace.")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument(
            "--port", type=int, default=8000, help="Port of the web server (`make run PORT=`)."
        )
        parser.add_argument("--web-workers", type=int, default=2)
        parser.add_argument("--no-worker", action="store_true", help="Serve web only.")
        parser.add_argument(
            "--wsgi",
            action="store_true",
            help="Serve the WSGI application with threaded workers (no /mcp).",
        )

    def handle(self, *args, **opts) -> None:
        _check_port_free(opts["host"], opts["port"])
        base_url = f"http://{opts['host']}:{opts['port']}"
        env = {**os.environ, "SITE_URL": os.environ.get("SITE_URL", base_url)}
        env.setdefault("SANDBOX_BASE_URL", env["SITE_URL"])
        demo = None
        try:
            self._migrate()
            self._say("Collecting static files…")
            call_command("collectstatic", interactive=False, verbosity=0)
            if opts["demo"]:
                # The demo's accounts live on the sandbox, off outside DEBUG by default.
                env.setdefault("SANDBOX_ENABLED", "true")
                self._say("Creating the demo workspace…")
                demo = demo_setup()
        except KeyboardInterrupt:
            raise CommandError("Interrupted before serving.") from None

        wsgi = opts["wsgi"]
        children = [
            ChildProcess(
                gunicorn_argv(
                    f"{opts['host']}:{opts['port']}",
                    "--workers",
                    str(opts["web_workers"]),
                    "--threads",
                    "4",
                    "--access-logfile",
                    "-",
                    wsgi=wsgi,
                ),
                env=web_environment(env, wsgi=wsgi),
            )
        ]
        if not opts["no_worker"]:
            children.append(ChildProcess(manage_argv("run_worker"), env=env))
        self._say(f"Starting the web server{'' if opts['no_worker'] else ' and the worker'}…")
        self._stopping = self._signalled = False
        self._handle_signals(children)
        answered = self._wait_until_answering(children, _probe_url(opts["host"], opts["port"]))
        if answered:
            if demo is not None:
                self._print_demo(demo, base_url)
            mcp = "" if wsgi else f", MCP at {base_url}/mcp"
            self._say(f"Serving on {base_url}/{mcp} (Ctrl+C to stop)")
        self._wait(children)
        if settings.EMBEDDED_DATABASE_DIR:
            # Web workers stopped by a signal never take their pid off the embedded
            # server's list of users; drop them now, so `make db-stop` sees none left.
            embedded_database_users(settings.EMBEDDED_DATABASE_DIR)
        if not answered and not self._signalled:
            raise CommandError("A child exited before the web server answered: see above.")

    def _say(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()  # a pipe or a log buffers; each step shows as it starts

    def _migrate(self) -> None:
        executor = MigrationExecutor(connection)
        pending = len(executor.migration_plan(executor.loader.graph.leaf_nodes()))
        if not pending:
            self._say("Database schema up to date.")
            return
        self._say(f"Applying {pending} migrations…")
        out = self.stdout
        progress = (
            ProgressBar(out, "migrations", pending)
            if out.isatty()
            else _LineProgress(out, "migrations", pending)
        )
        call_command(_MigrateWithProgress(progress), interactive=False, verbosity=0)
        progress.close()

    def _handle_signals(self, children: list[ChildProcess]) -> None:
        def on_signal(signum: int, frame: FrameType | None) -> None:
            self._signalled = True
            self._stop_children(children)

        # SIGHUP too: a closed terminal must stop the children, not leave gunicorn running
        # (to gunicorn itself a hangup means "reload": it would start new workers).
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, on_signal)

    def _stop_children(self, children: list[ChildProcess]) -> None:
        self._stopping = True
        for child in children:
            child.send(signal.SIGTERM)

    def _wait_until_answering(self, children: list[ChildProcess], url: str) -> bool:
        """Poll the web server's /healthz until it answers 200 (True), or until a child
        exits or a signal asks to stop (False)."""
        with httpx.Client(trust_env=False, timeout=1) as client:
            while not self._stopping:
                if any(not child.is_running() for child in children):
                    return False
                try:
                    if client.get(url).status_code == 200:
                        return True
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
        return False

    def _print_demo(self, demo: DemoSetup, base_url: str) -> None:
        w = self.stdout.write
        w("")
        w("Demo workspace ready")
        w(f"  log in:    {base_url}/login/")
        w(f"  email:     {demo.email}")
        w(f"  password:  {demo.password}")
        w(f"  workspace: {demo.workspace.slug}")
        w(f"  API docs:  {base_url}/api/docs/")
        w(f"  try:       curl -H 'Authorization: Bearer {demo.token}' {base_url}/api/v1/me")
        w(f"  sandbox:   {', '.join('@' + h for h in demo.sandbox_handles)}")
        w(f"  API token: {demo.token}")
        w("")

    def _wait(self, children: list[ChildProcess]) -> None:
        while not self._stopping:
            if any(not child.is_running() for child in children):
                self._stop_children(children)
                break
            time.sleep(0.5)
        for child in children:
            child.wait_or_kill(timeout=60)


def _check_port_free(host: str, port: int) -> None:
    """Fail before migrating, rather than after, when another server holds the port."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family) as probe:
            # As gunicorn binds: a port whose old connections linger in TIME_WAIT is free.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise CommandError(
            f"Cannot listen on {host}:{port} ({exc.strerror}): another server holds it? "
            f"Pick another port: `make run PORT={port + 1}` or `serve --port {port + 1}`."
        ) from exc


def _probe_url(host: str, port: int) -> str:
    """The web server's /healthz, reached on loopback when it listens on every address."""
    if host in ("0.0.0.0", ""):  # noqa: S104 - a comparison, not a bind
        host = "127.0.0.1"
    elif host == "::":
        host = "[::1]"
    return f"http://{host}:{port}/healthz"
