"""The demo workspace `serve --demo` creates: a user, an organization, a workspace and a
fresh API token. Running it again reuses what exists and issues a new token."""

from dataclasses import dataclass

from django.db import transaction

from apps.accounts import services
from apps.accounts.models import Organization, User, Workspace

DEMO_EMAIL = "demo@example.com"
DEMO_PASSWORD = "demo-password"  # noqa: S105 - a local demo account, printed on purpose
DEMO_WORKSPACE = "demo"


@dataclass(frozen=True)
class DemoSetup:
    email: str
    password: str
    workspace: Workspace
    token: str


@transaction.atomic
def demo_setup() -> DemoSetup:
    user = User.objects.filter(email=DEMO_EMAIL).first()
    if user is None:
        user = User.objects.create_user(email=DEMO_EMAIL, password=DEMO_PASSWORD, name="Demo")
    workspace = Workspace.objects.filter(slug=DEMO_WORKSPACE).first()
    if workspace is None:
        org = Organization.objects.filter(slug="demo").first() or services.organization_create(
            name="Demo organization", slug="demo", owner=user
        )
        workspace = services.workspace_create(
            organization=org,
            name="Demo",
            slug=DEMO_WORKSPACE,
            admin=user,
            default_timezone="Europe/Warsaw",
        )
    issued = services.api_token_create(
        workspace=workspace,
        name="demo",
        scopes=["read", "write", "publish", "cli", "mcp"],
        created_by=user,
    )
    return DemoSetup(DEMO_EMAIL, DEMO_PASSWORD, workspace, issued.clear)
