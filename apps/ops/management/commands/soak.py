"""`python manage.py soak`: the chaos soak (see loadtest/soak.py). Prints a progress bar
to stderr and the figures as one JSON line on stdout.

`--chaos MODE` (repeatable) picks the fault of our own infrastructure each run plays
(loadtest/soak_chaos.py); several modes are several runs, one after the other, reported
together. Without it the run is today's: workers SIGKILLed every `--kill-every` seconds."""

import dataclasses
import json
import logging
import signal
import sys

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from loadtest.soak import Soak, SoakConfig, resolve_behaviours, resolve_platforms
from loadtest.soak_chaos import KILL, MODES, PRIVATE_MODES, FaultTimes


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
            default=None,
            help=f"Seconds between SIGKILLs of a random worker (0: none; default "
            f"{defaults.kill_every_s:g} without --chaos or with --chaos kill, else 0).",
        )
        times = defaults.fault_times
        parser.add_argument(
            "--chaos",
            action="append",
            choices=MODES,
            default=[],
            help="The fault of our own infrastructure a run plays (repeatable: one run each). "
            "kill: SIGKILLed workers; db-restart-fast, db-restart-immediate (pg_ctl restart "
            "-m fast/immediate), db-down-30s (stopped 30 s), connections (another client "
            "takes every free connection for 20 s): on a private PostgreSQL the soak starts; "
            "pause: a worker SIGSTOPped past its lease, then SIGCONT; hang: the first "
            "organization's destinations hang to the provider timeout for --hang-for s, "
            "then the run settles (after a reference run without the fault).",
        )
        parser.add_argument(
            "--chaos-every",
            type=float,
            default=times.every_s,
            help="Seconds from the end of one fault to the next.",
        )
        parser.add_argument(
            "--chaos-times", type=int, default=times.times, help="Faults played per run."
        )
        parser.add_argument(
            "--pause",
            type=float,
            default=times.pause_s,
            help="Seconds a paused worker stays stopped (past its lease and a settle).",
        )
        parser.add_argument(
            "--hang-for",
            type=float,
            default=times.hang_s,
            help="Under hang, seconds the first organization's destinations hang from the "
            "first due time before the fault lifts (default: --spread, so every post falls "
            "due while they hang).",
        )
        parser.add_argument(
            "--private-db",
            action="store_true",
            help="Run on a private PostgreSQL started for the run, whatever the mode.",
        )
        parser.add_argument(
            "--no-reference",
            action="store_true",
            help="Under hang, skip the fault-free reference run.",
        )
        parser.add_argument("--timeout", type=float, default=defaults.timeout_s)
        parser.add_argument("--seed", type=int, default=defaults.seed)
        parser.add_argument("--keep", action="store_true", help="Keep the soak's data.")
        _platform_arguments(parser, defaults)

    def handle(self, *args, **opts) -> None:
        try:
            platforms = resolve_platforms(opts["platforms"])
            account_behaviours = resolve_behaviours(opts["behaviour"], platforms)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if not 0 <= opts["fault_rate"] <= 1:
            raise CommandError("--fault-rate is a probability, from 0 to 1.")
        if opts["chaos_times"] < 0 or min(opts["chaos_every"], opts["pause"]) < 0:
            raise CommandError("--chaos-times, --chaos-every and --pause are not negative.")
        if opts["hang_for"] is not None and opts["hang_for"] < 0:
            raise CommandError("--hang-for is not negative.")
        modes = list(dict.fromkeys(opts["chaos"])) or [None]
        config = SoakConfig(
            publications=opts["publications"],
            destinations=opts["destinations"],
            workers=opts["workers"],
            workspaces=opts["workspaces"],
            threads=opts["threads"],
            spread_s=opts["spread"],
            kill_every_s=0.0,
            timeout_s=opts["timeout"],
            seed=opts["seed"],
            keep=opts["keep"],
            platforms=platforms,
            fault_rate=opts["fault_rate"],
            fault_times=FaultTimes(
                every_s=opts["chaos_every"],
                times=opts["chaos_times"],
                pause_s=opts["pause"],
                hang_s=opts["hang_for"],
            ),
            private_db=opts["private_db"],
            hang_reference=not opts["no_reference"],
            account_behaviours=account_behaviours,
            first_comments=opts["first_comments"],
            replies=opts["replies"],
        )
        # The progress bars redraw one line with "\r": no newline added to each write.
        self.stderr.ending = ""
        # A stopped soak still stops its web server and workers (the run's finally block).
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
        if not opts["private_db"] and any(m not in PRIVATE_MODES for m in modes):
            call_command("migrate", interactive=False, verbosity=0)
        runs = {}
        for mode in modes:
            kill_every = opts["kill_every"]
            if kill_every is None:  # today's chaos unless another mode was asked for
                kill_every = SoakConfig.kill_every_s if mode in (None, KILL) else 0.0
            run = dataclasses.replace(config, chaos=mode, kill_every_s=kill_every)
            if len(modes) > 1:
                self.stderr.write(f"-- chaos {mode}\n")
            runs[mode] = Soak(config=run, progress=self.stderr).run()
        if len(modes) == 1:
            figures = runs[modes[0]]
        else:
            figures = {
                "chaos": modes,
                **{
                    total: sum(r[total] for r in runs.values())
                    for total in ("duplicates", "duplicates_by_key", "duplicates_by_text")
                },
                "lost": sum(r["lost"] for r in runs.values()),
                "stuck": sum(r["stuck"] for r in runs.values()),
                "still_running": sum(r["still_running"] for r in runs.values()),
                "runs": runs,
            }
        self.stdout.write(json.dumps(figures, sort_keys=False))


def _platform_arguments(parser: CommandParser, defaults: SoakConfig) -> None:
    """Which platforms, and how their fakes misbehave."""
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
    parser.add_argument(
        "--behaviour",
        action="append",
        default=[],
        metavar="PLATFORM:NAME",
        help="Open a second account per workspace on PLATFORM's fake with the account "
        "behaviour NAME switched on (repeatable; all: every behaviour every chosen fake "
        "offers, such as reddit:spam_removed, reddit:media_fails, youtube:lock_private).",
    )
    parser.add_argument(
        "--first-comments",
        action="store_true",
        help="Give every publication a first comment, counted at each platform that takes one.",
    )
    parser.add_argument(
        "--replies",
        type=int,
        default=0,
        metavar="N",
        help="Once the posts are settled, reply from the inbox to a visitor's comment under N "
        "published sandbox posts (workers still killed); each reply counted at the sandbox.",
    )
