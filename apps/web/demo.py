"""The demo workspace `serve --demo` creates: a user, an organization, a workspace and a
fresh API token. Running it again reuses what exists and issues a new token."""

from dataclasses import dataclass

from django.db import transaction

from apps.accounts import services
from apps.accounts.models import Organization, SocialAccount, User, Workspace
from apps.sandbox.services import sandbox_account_create

DEMO_EMAIL = "demo@example.com"
DEMO_PASSWORD = "demo-password"  # noqa: S105 - a local demo account, printed on purpose
DEMO_WORKSPACE = "demo"
# Sandbox accounts of the demo: two that behave, and one that shows how failures look.
DEMO_SANDBOX_ACCOUNTS = {
    "demo-news": {},
    "demo-team": {"latency_ms": 300},
    "demo-flaky": {"rate_limit_times": 1, "retry_after_s": 5, "server_error_times": 1},
}


@dataclass(frozen=True)
class DemoSetup:
    email: str
    password: str
    workspace: Workspace
    token: str
    sandbox_handles: tuple[str, ...] = tuple(DEMO_SANDBOX_ACCOUNTS)


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
    for handle, behaviour in DEMO_SANDBOX_ACCOUNTS.items():
        exists = SocialAccount.objects.filter(
            workspace=workspace, platform="sandbox", handle=handle
        ).exists()
        if not exists:
            sandbox_account_create(workspace=workspace, handle=handle, behaviour=behaviour)
    issued = services.api_token_create(
        workspace=workspace,
        name="demo",
        scopes=["read", "write", "publish", "admin", "mcp"],
        created_by=user,
    )
    return DemoSetup(DEMO_EMAIL, DEMO_PASSWORD, workspace, issued.clear)
