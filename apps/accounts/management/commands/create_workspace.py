from django.core.management.base import BaseCommand, CommandError

from apps.accounts import membership, services
from apps.accounts.models import Organization


class Command(BaseCommand):
    help = "Create a workspace (and its organization when none is named) owned by EMAIL."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name")
        parser.add_argument("--owner", required=True, help="Owner's email (created if new).")
        parser.add_argument("--organization", help="Slug of an existing organization.")
        parser.add_argument("--slug", help="Workspace slug (derived from NAME by default).")
        parser.add_argument("--timezone", default="UTC", help="Default display zone.")
        parser.add_argument("--password", help="Password for a newly created owner.")

    def handle(self, *args, **opts) -> None:
        # The operator names the owner: their address counts as verified.
        owner = services.user_get_or_create(
            email=opts["owner"], password=opts["password"], verified=True
        )
        if opts["organization"]:
            org = Organization.objects.filter(slug=opts["organization"]).first()
            if org is None:
                raise CommandError(f"No organization with slug '{opts['organization']}'.")
            membership.organization_member_set(organization=org, user=owner, role="owner")
        else:
            org = services.organization_create(name=opts["name"], owner=owner)
        try:
            ws = services.workspace_create(
                organization=org,
                name=opts["name"],
                slug=opts["slug"],
                default_timezone=opts["timezone"],
                admin=owner,
            )
        except Exception as exc:  # ValidationError from full_clean
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"organization: {org.slug}")
        self.stdout.write(f"workspace: {ws.slug}")
