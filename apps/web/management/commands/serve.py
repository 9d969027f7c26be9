"""`python manage.py serve [--demo]`: the one command to try the product.

Migrates, optionally creates a demo workspace, then runs the web server (gunicorn with
uvicorn workers: the site and the MCP endpoint at /mcp; `--wsgi` for threaded WSGI workers,
without /mcp) and the worker as child processes until interrupted.
"""

import os
import signal
import time

from django.core.management import call_command
from django.core.management.base import BaseCommand

from apps.common.processes import ChildProcess, gunicorn_argv, manage_argv, web_environment
from apps.web.demo import DemoSetup, demo_setup


class Command(BaseCommand):
    help = "Migrate, optionally create a demo workspace, and run web + worker."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--demo", action="store_true", help="Create a demo workspace.")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--web-workers", type=int, default=2)
        parser.add_argument("--no-worker", action="store_true", help="Serve web only.")
        parser.add_argument(
            "--wsgi",
            action="store_true",
            help="Serve the WSGI application with threaded workers (no /mcp).",
        )

    def handle(self, *args, **opts) -> None:
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        base_url = f"http://{opts['host']}:{opts['port']}"
        env = {**os.environ, "SITE_URL": os.environ.get("SITE_URL", base_url)}
        env.setdefault("SANDBOX_BASE_URL", env["SITE_URL"])
        if opts["demo"]:
            # The demo's accounts live on the sandbox, which is off outside DEBUG by default.
            env.setdefault("SANDBOX_ENABLED", "true")
            self._print_demo(demo_setup(), base_url)

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
        mcp = "" if wsgi else f", MCP at {base_url}/mcp"
        self.stdout.write(f"Serving on {base_url}/{mcp} (Ctrl+C to stop)")
        self._wait(children)

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
        stopping = False

        def stop(signum, frame) -> None:
            nonlocal stopping
            stopping = True
            for child in children:
                child.send(signal.SIGTERM)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        while not stopping:
            if any(not child.is_running() for child in children):
                stop(None, None)
                break
            time.sleep(0.5)
        for child in children:
            child.wait_or_kill(timeout=60)
