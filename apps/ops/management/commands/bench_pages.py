"""`python manage.py bench_pages`: each page's p50 at the size of a hosted workspace (see
loadtest/bench_pages.py). A progress bar on stderr while filling; a table, then the
figures as one JSON line, on stdout."""

import json
import signal
import sys

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from loadtest.bench_pages import PAGE_NAMES, PagesBench, PagesBenchConfig, table


def _pages(raw: str) -> tuple[str, ...]:
    names = tuple(name for name in raw.split(",") if name)
    unknown = [name for name in names if name not in PAGE_NAMES]
    if unknown:
        raise CommandError(f"Unknown pages {', '.join(unknown)}; known: {', '.join(PAGE_NAMES)}.")
    return names


def _sizes(raw: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in raw.split(","))
    except ValueError:
        raise CommandError(
            "--sizes is a comma-separated list of numbers, e.g. 1000,50000"
        ) from None
    if not sizes or any(size < 1 for size in sizes):
        raise CommandError("--sizes are positive numbers of publications.")
    return sizes


class Command(BaseCommand):
    help = (
        "Fill a workspace (and a second tenant beside it) to each size of scheduled "
        "publications with bulk SQL, then print each page's p50 over HTTP (Django's test "
        "client): every web page <= 300 ms, /readyz <= 20 ms, an API list of 50 <= 50 ms."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        defaults = PagesBenchConfig()
        parser.add_argument(
            "--sizes",
            default=",".join(str(s) for s in defaults.sizes),
            help="Publications per tenant, one run each (default 1000,50000).",
        )
        parser.add_argument("--destinations", type=int, default=defaults.destinations)
        parser.add_argument(
            "--repeats", type=int, default=defaults.repeats, help="Measured requests a page."
        )
        parser.add_argument("--keep", action="store_true", help="Keep the benchmark's data.")
        parser.add_argument(
            "--pages",
            default="",
            help="Measure only these pages, comma-separated (e.g. queue,series_list); "
            "default every page.",
        )

    def handle(self, *args, **opts) -> None:
        pages = _pages(opts["pages"])
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
        call_command("migrate", interactive=False, verbosity=0)
        config = PagesBenchConfig(
            sizes=_sizes(opts["sizes"]),
            destinations=opts["destinations"],
            repeats=opts["repeats"],
            keep=opts["keep"],
            pages=pages,
        )
        result = PagesBench(config=config, progress=self.stderr).run()
        self.stdout.write(table(result))
        self.stdout.write(json.dumps(result))
