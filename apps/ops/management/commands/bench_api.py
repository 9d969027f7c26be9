"""`python manage.py bench_api`: the token API under load through gunicorn (see
loadtest/bench_api.py). A progress bar on stderr, the figures as one JSON line on stdout."""

import json
import logging
import signal
import sys

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from loadtest.bench_api import ApiBench, ApiBenchConfig


class Command(BaseCommand):
    help = (
        "Create publications (to N destinations) and read them back through the API served "
        "by gunicorn; print requests/s and latency p50/p99 for each. With --bulk, create "
        "posts through POST /publications/bulk instead and print items/s."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        defaults = ApiBenchConfig()
        parser.add_argument("--creates", type=int, default=defaults.creates)
        parser.add_argument(
            "--serial-creates",
            type=int,
            default=defaults.serial_creates,
            help="Creates sent one at a time before the concurrent ones (create_c1_*).",
        )
        parser.add_argument("--reads", type=int, default=defaults.reads)
        parser.add_argument("--destinations", type=int, default=defaults.destinations)
        parser.add_argument(
            "--concurrency", type=int, default=defaults.concurrency, help="Client threads."
        )
        parser.add_argument("--web-workers", type=int, default=defaults.web_workers)
        parser.add_argument("--web-threads", type=int, default=defaults.web_threads)
        parser.add_argument("--keep", action="store_true", help="Keep the benchmark's data.")
        parser.add_argument(
            "--wsgi",
            action="store_true",
            help="Serve the WSGI application with threaded workers (the default is ASGI).",
        )
        parser.add_argument(
            "--bulk",
            action="store_true",
            help="Instead: create --bulk-items posts through POST /publications/bulk and "
            "print bulk_items_per_s and bulk_total_s.",
        )
        parser.add_argument("--bulk-items", type=int, default=defaults.bulk_items)
        parser.add_argument(
            "--bulk-accounts",
            type=int,
            default=defaults.bulk_accounts,
            help="Sandbox accounts the posts are spread over (one destination each).",
        )
        parser.add_argument(
            "--bulk-batch", type=int, default=defaults.bulk_batch, help="Items a request."
        )
        parser.add_argument(
            "--bulk-concurrency",
            type=int,
            default=defaults.bulk_concurrency,
            help="Bulk requests in flight at once.",
        )

    def handle(self, *args, **opts) -> None:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
        call_command("migrate", interactive=False, verbosity=0)
        config = ApiBenchConfig(
            creates=opts["creates"],
            serial_creates=opts["serial_creates"],
            reads=opts["reads"],
            destinations=opts["destinations"],
            concurrency=opts["concurrency"],
            web_workers=opts["web_workers"],
            web_threads=opts["web_threads"],
            keep=opts["keep"],
            wsgi=opts["wsgi"],
            bulk=opts["bulk"],
            bulk_items=opts["bulk_items"],
            bulk_accounts=opts["bulk_accounts"],
            bulk_batch=opts["bulk_batch"],
            bulk_concurrency=opts["bulk_concurrency"],
        )
        self.stdout.write(json.dumps(ApiBench(config=config, progress=self.stderr).run()))
