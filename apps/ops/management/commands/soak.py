"""`python manage.py soak`: the chaos soak (see apps/ops/soak.py). Prints a progress bar
to stderr and the figures as one JSON line on stdout."""

import json
import logging
import signal
import sys

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from apps.ops.soak import Soak, SoakConfig


class Command(BaseCommand):
    help = (
        "Publish K posts to M misbehaving sandbox destinations each while worker processes "
        "are killed at random; report published/failed/ambiguous, duplicates in the "
        "sandbox store, lost renditions, lateness and throughput as a JSON line."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        defaults = SoakConfig()
        parser.add_argument("--publications", type=int, default=defaults.publications)
        parser.add_argument("--destinations", type=int, default=defaults.destinations)
        parser.add_argument("--workers", type=int, default=defaults.workers)
        parser.add_argument("--workspaces", type=int, default=defaults.workspaces)
        parser.add_argument("--threads", type=int, default=defaults.threads)
        parser.add_argument(
            "--spread",
            type=float,
            default=defaults.spread_s,
            help="Seconds over which posts are due.",
        )
        parser.add_argument(
            "--kill-every",
            type=float,
            default=defaults.kill_every_s,
            help="Seconds between SIGKILLs of a random worker (0: no chaos).",
        )
        parser.add_argument("--timeout", type=float, default=defaults.timeout_s)
        parser.add_argument("--seed", type=int, default=defaults.seed)
        parser.add_argument("--keep", action="store_true", help="Keep the soak's data.")

    def handle(self, *args, **opts) -> None:
        config = SoakConfig(
            publications=opts["publications"],
            destinations=opts["destinations"],
            workers=opts["workers"],
            workspaces=opts["workspaces"],
            threads=opts["threads"],
            spread_s=opts["spread"],
            kill_every_s=opts["kill_every"],
            timeout_s=opts["timeout"],
            seed=opts["seed"],
            keep=opts["keep"],
        )
        # A stopped soak still stops its web server and workers (the run's finally block).
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
        call_command("migrate", interactive=False, verbosity=0)
        figures = Soak(config=config, progress=self.stderr).run()
        self.stdout.write(json.dumps(figures, sort_keys=False))
