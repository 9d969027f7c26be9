"""`python manage.py soak`: the chaos soak (see loadtest/soak.py). Prints a progress bar
to stderr and the figures as one JSON line on stdout."""

import json
import logging
import signal
import sys

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from loadtest.soak import Soak, SoakConfig, resolve_platforms


class Command(BaseCommand):
    help = (
        "Publish K posts to M misbehaving destinations each (sandbox accounts, or the real "
        "adapters against the platform fakes) while worker processes are killed at random; "
        "report published/failed/ambiguous, duplicates and lost posts counted at each "
        "platform, lateness and throughput as a JSON line."
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
        parser.add_argument(
            "--platforms",
            default="sandbox",
            help="sandbox, all (every real platform, through its fake), or a comma list.",
        )
        parser.add_argument(
            "--fault-rate",
            type=float,
            default=defaults.fault_rate,
            help="Chance per eligible call of each fault of the platform fakes (0: calm).",
        )

    def handle(self, *args, **opts) -> None:
        try:
            platforms = resolve_platforms(opts["platforms"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if not 0 <= opts["fault_rate"] <= 1:
            raise CommandError("--fault-rate is a probability, from 0 to 1.")
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
            platforms=platforms,
            fault_rate=opts["fault_rate"],
        )
        # A stopped soak still stops its web server and workers (the run's finally block).
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
        call_command("migrate", interactive=False, verbosity=0)
        figures = Soak(config=config, progress=self.stderr).run()
        self.stdout.write(json.dumps(figures, sort_keys=False))
