"""The demo workspace `serve --demo` creates: a user, an organization, a workspace, its
sandbox accounts, a few posts that show each delivery outcome, and a fresh API token.
Running it again reuses what exists and issues a new token."""

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from apps.accounts import services
from apps.accounts.models import Organization, SocialAccount, User, Workspace
from apps.accounts.verification import user_mark_email_verified
from apps.publishing.services.publications import publication_create
from apps.sandbox.services import sandbox_account_create

DEMO_EMAIL = "demo@example.com"
DEMO_PASSWORD = "demo-password"  # noqa: S105 - a local demo account, printed on purpose
DEMO_WORKSPACE = "demo"
DEMO_ZONE = "Europe/Warsaw"
# Sandbox accounts of the demo: two that behave, one flaky now and then (its failures are
# retried and end published), and three that each show one outcome a team must meet.
DEMO_SANDBOX_ACCOUNTS: dict[str, dict[str, int]] = {
    "demo-news": {},
    "demo-team": {"latency_ms": 300},
    "demo-flaky": {
        "rate_limit_times": 1,
        "retry_after_s": 5,
        "server_error_times": 1,
        "server_error_percent": 15,
    },
    # Over its rate limit for the day: posts wait for their next try.
    "demo-limited": {"rate_limit_times": 100_000, "retry_after_s": 900},
    # Refuses every post as a content error: a failure a person fixes by editing the text.
    "demo-strict": {"reject_content": True},
    # Stores the first post but the answer is lost, honours no idempotency key and cannot be
    # listed: nobody can tell whether it was published, so a person is asked to check.
    "demo-unsure": {"lost_answer_times": 1, "honours_idempotency_key": False, "lists_posts": False},
}
# (text, destination handles, when: "now" or "tomorrow 09:00" in the workspace's zone)
DEMO_POSTS = [
    ("Welcome to the demo: this post went out to two accounts.", ["demo-news", "demo-team"], "now"),
    ("Tomorrow morning's post, waiting for its time.", ["demo-news", "demo-flaky"], "tomorrow"),
    (
        "This account is over its rate limit: the post waits for its next try.",
        ["demo-limited"],
        "now",
    ),
    (
        "This account refuses every post: edit the text and retry, or reconnect.",
        ["demo-strict"],
        "now",
    ),
    (
        "Sent, but the answer was lost: check the account and say whether it is there.",
        ["demo-unsure"],
        "now",
    ),
]


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
        # Times are shown in the workspace's zone, so the seeded 09:00 reads as 09:00.
        user = User.objects.create_user(
            email=DEMO_EMAIL, password=DEMO_PASSWORD, name="Demo", display_timezone=DEMO_ZONE
        )
    user_mark_email_verified(user=user, method="operator")  # the demo's own address
    workspace = Workspace.objects.filter(slug=DEMO_WORKSPACE).first()
    created = workspace is None
    if workspace is None:
        org = Organization.objects.filter(slug="demo").first() or services.organization_create(
            name="Demo organization", slug="demo", owner=user
        )
        workspace = services.workspace_create(
            organization=org,
            name="Demo",
            slug=DEMO_WORKSPACE,
            admin=user,
            default_timezone=DEMO_ZONE,
        )
    accounts = {}
    for handle, behaviour in DEMO_SANDBOX_ACCOUNTS.items():
        account = SocialAccount.objects.filter(
            workspace=workspace, platform="sandbox", handle=handle
        ).first()
        accounts[handle] = account or sandbox_account_create(
            workspace=workspace, handle=handle, behaviour=behaviour
        )
    if created:
        _seed_posts(workspace, user, accounts)
    issued = services.api_token_create(
        workspace=workspace,
        name="demo",
        scopes=["read", "write", "publish", "admin", "mcp"],
        created_by=user,
    )
    return DemoSetup(DEMO_EMAIL, DEMO_PASSWORD, workspace, issued.clear)


def _seed_posts(workspace: Workspace, user: User, accounts: dict[str, SocialAccount]) -> None:
    """Posts a new demo workspace starts with, one per outcome. They go through the real
    pipeline once the worker runs: what the pages show is what happened."""
    tomorrow_9 = _tomorrow_at_9(workspace.default_timezone)
    for text, handles, when in DEMO_POSTS:
        publication_create(
            workspace=workspace,
            author=user,
            segments=[{"text": text}],
            destinations=[{"account": accounts[h].pk} for h in handles],
            scheduled_at=tomorrow_9 if when == "tomorrow" else None,
            status="scheduled",
        )


def _tomorrow_at_9(zone_name: str) -> datetime:
    zone = ZoneInfo(zone_name)
    day = timezone.now().astimezone(zone).date() + timedelta(days=1)
    return datetime.combine(day, time(9, 0), tzinfo=zone)
