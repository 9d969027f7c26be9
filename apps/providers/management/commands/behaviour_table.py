"""`python manage.py behaviour_table`: print the per-platform behaviour table of
docs/delivery.md as the catalog and the adapters give it; `--write` rewrites it in place."""

from django.core.management.base import BaseCommand, CommandParser

from apps.providers.behaviour_table import behaviour_table, delivery_doc, with_table


class Command(BaseCommand):
    help = "Print (or --write into docs/delivery.md) the per-platform behaviour table."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--write", action="store_true", help="Rewrite docs/delivery.md.")

    def handle(self, *args, **opts) -> None:
        if not opts["write"]:
            self.stdout.write(behaviour_table())
            return
        path = delivery_doc()
        path.write_text(with_table(path.read_text(encoding="utf-8")), encoding="utf-8")
        self.stdout.write(f"Wrote the behaviour table into {path}.")
