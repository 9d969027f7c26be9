"""`python manage.py run_worker`: run jobs until SIGTERM/SIGINT (or, with --burst, until
nothing is due)."""

from django.core.management.base import BaseCommand, CommandParser

from apps.jobs.shutdown import stop_on_signals
from apps.jobs.worker import Worker


def _types(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


class Command(BaseCommand):
    help = (
        "Claim due jobs and run them on a thread pool. Wakes on LISTEN/NOTIFY, otherwise "
        "sleeps until the next job is due or the poll interval ends. SIGTERM/SIGINT: stop "
        "claiming, let running jobs finish within the grace period, exit 0 (a second "
        "signal ends the grace period)."
    )

    # Workers need no URL or template checks, and start faster without them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--threads", type=int, help="Handler threads (default WORKER_THREADS, 4)."
        )
        parser.add_argument(
            "--batch-size",
            type=int,
            help="Jobs claimed per batch and held at most (default WORKER_BATCH_SIZE, or "
            "--threads). Raise it for many short jobs.",
        )
        parser.add_argument(
            "--poll", type=float, help="Seconds between polls without NOTIFY (WORKER_POLL_S)."
        )
        parser.add_argument(
            "--types",
            "--queues",
            type=_types,
            help="Comma-separated job types to run (default: all).",
        )
        parser.add_argument(
            "--grace", type=float, help="Seconds running jobs get after SIGTERM (WORKER_GRACE_S)."
        )
        parser.add_argument("--name", help="Worker name (default host:pid:random).")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument(
            "--burst", action="store_true", help="Run what is due, then exit (cron, tests)."
        )
        mode.add_argument("--once", action="store_true", help="Run one batch, then exit.")

    def handle(self, *args, **options) -> None:
        worker = Worker(
            threads=options["threads"],
            batch_size=options["batch_size"],
            poll_s=options["poll"],
            types=options["types"],
            grace_s=options["grace"],
            name=options["name"],
        )
        stop_on_signals(worker)
        self.stdout.write(
            f"Worker {worker.name} started: threads={worker.threads} "
            f"batch={worker.batch_size} types={','.join(worker.types or ['*'])}"
        )
        worker.run(burst=options["burst"], once=options["once"])
        self.stdout.write(
            f"Worker {worker.name} stopped: {worker.jobs_done} outcome(s) written, "
            f"{worker.claims} claim(s), {worker.contended_claims} found every due "
            "organization being claimed by other workers."
        )
