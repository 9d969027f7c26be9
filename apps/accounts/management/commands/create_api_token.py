from django.core.management.base import BaseCommand, CommandError

from apps.accounts import services
from apps.accounts.models import ApiToken, Workspace
from apps.common.errors import DomainError


class Command(BaseCommand):
    help = "Create an API token for a workspace. The token is printed once, as the last line."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--workspace", required=True, help="Workspace slug.")
        parser.add_argument(
            "--scopes",
            nargs="+",
            default=["read", "write", "publish"],
            help=f"Any of: {' '.join(ApiToken.Scope.values)} (space or comma separated).",
        )
        parser.add_argument("--name", default="cli")

    def handle(self, *args, **opts) -> None:
        ws = Workspace.objects.filter(slug=opts["workspace"]).first()
        if ws is None:
            raise CommandError(f"No workspace with slug '{opts['workspace']}'.")
        scopes = [s for part in opts["scopes"] for s in part.split(",") if s]
        try:
            issued = services.api_token_create(workspace=ws, name=opts["name"], scopes=scopes)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"scopes: {' '.join(issued.token.scopes)}")
        self.stdout.write(issued.clear)
