"""`python manage.py bench_queue`: measure the queue with real worker processes.

A figure to track, not a test. It runs against the configured database (start it on a
database no other worker uses: other workers would take the bench's jobs), creates its
own organizations and removes them, its jobs and its workers' rows afterwards.
"""

import argparse
import json
import os

from django.core.management.base import BaseCommand, CommandParser
from django.db import connection

from loadtest.bench_queue import Bench, BenchConfig


def _int_list(value: str) -> list[int]:
    try:
        return [int(part.replace("_", "")) for part in value.split(",") if part.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a list of integers: {value!r}") from exc


class Command(BaseCommand):
    help = (
        "Enqueue N no-op jobs over W organizations, drain them with P run_worker processes, "
        "then measure start latency (immediate and scheduled jobs) and fairness (one "
        "organization's burst against nine small ones), beside a raw-SQL reference loop on "
        "the same database. Progress goes to stderr; the last line on stdout is one JSON "
        "object."
    )

    # Workers need no URL or template checks, and start faster without them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        defaults = BenchConfig()
        parser.add_argument("--jobs", type=int, default=defaults.jobs, help="N (throughput).")
        parser.add_argument("--orgs", type=int, default=defaults.orgs, help="W organizations.")
        parser.add_argument("--workers", type=int, default=defaults.workers, help="P processes.")
        parser.add_argument("--threads", type=int, default=defaults.threads)
        parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
        parser.add_argument(
            "--cap", type=int, default=defaults.cap, help="In-flight cap of every organization."
        )
        parser.add_argument("--latency-jobs", type=int, default=defaults.latency_jobs)
        parser.add_argument("--scheduled-jobs", type=int, default=defaults.scheduled_jobs)
        parser.add_argument(
            "--fair-big", type=int, default=defaults.fair_big, help="The bursting org's jobs."
        )
        parser.add_argument("--fair-small-orgs", type=int, default=defaults.fair_small_orgs)
        parser.add_argument("--fair-small-jobs", type=int, default=defaults.fair_small_jobs)
        parser.add_argument("--no-fairness", action="store_true", help="Skip the fairness run.")
        parser.add_argument("--timeout", type=float, default=defaults.timeout_s)
        parser.add_argument(
            "--no-raw-reference",
            action="store_true",
            help="Skip the raw-SQL reference loop (raw_limit_jobs_per_s, ratio_to_raw).",
        )
        parser.add_argument(
            "--history",
            type=int,
            default=defaults.history,
            help="Finished jobs put in the table before measuring.",
        )
        parser.add_argument(
            "--history-steps",
            type=_int_list,
            default=(),
            help="Comma-separated history sizes (e.g. 0,100000,1000000): claim_ms_p50 is "
            "measured at each, growing the history in place, before the other scenarios.",
        )
        parser.add_argument(
            "--probe-claims",
            type=int,
            default=defaults.probe_claims,
            help="Claims timed for claim_ms_p50 (one due job each, no worker running).",
        )
        parser.add_argument(
            "--scenario",
            choices=["standard", "burst-trickle", "everyone-at-nine"],
            default="standard",
            help="burst-trickle: after the standard scenarios, a burst of --burst-jobs jobs "
            "of one organization, then the latency runs again (burst_trickle_* keys). "
            "everyone-at-nine: after the standard scenarios, --nine-orgs organizations with "
            "one job each due at the same instant (everyone_at_nine_* keys: start delay "
            "after run_at, the last one's included).",
        )
        parser.add_argument("--burst-jobs", type=int, default=defaults.burst_jobs)
        parser.add_argument("--nine-orgs", type=int, default=defaults.nine_orgs)
        parser.add_argument(
            "--idle-orgs",
            type=int,
            default=defaults.idle_orgs,
            help="Organizations with 3 jobs each due days ahead put in the table before "
            "measuring (claim_ms_p50_by_idle_orgs at 0, 10000 and 100000 up to N, and N).",
        )

    def handle(self, *args, **options) -> None:
        config = BenchConfig(
            jobs=options["jobs"],
            orgs=options["orgs"],
            workers=options["workers"],
            threads=options["threads"],
            batch_size=options["batch_size"],
            cap=options["cap"],
            latency_jobs=options["latency_jobs"],
            scheduled_jobs=options["scheduled_jobs"],
            fair_big=options["fair_big"],
            fair_small_orgs=options["fair_small_orgs"],
            fair_small_jobs=options["fair_small_jobs"],
            timeout_s=options["timeout"],
            raw_reference=not options["no_raw_reference"],
            history=options["history"],
            history_steps=tuple(options["history_steps"]),
            probe_claims=options["probe_claims"],
            burst_trickle=options["scenario"] == "burst-trickle",
            burst_jobs=options["burst_jobs"],
            idle_orgs=options["idle_orgs"],
            everyone_at_nine=options["scenario"] == "everyone-at-nine",
            nine_orgs=options["nine_orgs"],
        )
        self.stderr.ending = ""  # the progress bar redraws its line with "\r"
        figures = Bench(config=config, progress=self.stderr).run(
            fairness=not options["no_fairness"]
        )
        result = {
            "jobs": config.jobs,
            "orgs": config.orgs,
            "workers": config.workers,
            "threads": config.threads,
            "batch_size": config.batch_size,
            "cap": config.cap,
            **figures,
            "postgres": connection.cursor().connection.info.server_version,
            "cpus": os.cpu_count(),
        }
        self.stdout.write(json.dumps(result))
