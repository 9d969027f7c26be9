"""The first-steps checklist a new workspace's overview shows until every step is done
(or the person hides it): what to do next, each step linking to where it is done."""

from dataclasses import dataclass

from django.urls import reverse

from apps.accounts.models import ApiToken, SocialAccount, Workspace, WorkspaceMembership
from apps.publications.models import Publication
from apps.webhooks.models import WebhookEndpoint

HIDDEN_KEY = "first_steps_hidden"  # session: slugs of workspaces whose checklist is hidden


@dataclass(frozen=True)
class Step:
    title: str
    hint: str
    url: str
    done: bool


def first_steps(workspace: Workspace) -> list[Step]:
    slug = workspace.slug
    posts = Publication.objects.for_workspace(workspace)
    return [
        Step(
            "Connect an account",
            "A platform account, or a sandbox account to try things safely.",
            reverse("workspace-accounts", args=[slug]),
            SocialAccount.objects.for_workspace(workspace).exists(),
        ),
        Step(
            "Write your first post",
            "Compose once, adapt the text per destination.",
            reverse("composer", args=[slug]),
            posts.exists(),
        ),
        Step(
            "Schedule a post",
            "Pick a time in your zone; the calendar shows what is coming.",
            reverse("calendar", args=[slug]),
            posts.exclude(status__in=[Publication.Status.DRAFT, Publication.Status.CANCELLED])
            .filter(scheduled_at__isnull=False)
            .exists(),
        ),
        Step(
            "Invite a teammate",
            "Editors write, admins also connect accounts and manage the team.",
            reverse("workspace-team", args=[slug]),
            WorkspaceMembership.objects.filter(workspace=workspace).count() > 1,
        ),
        Step(
            "Connect your tools",
            "An API token or a webhook, to post from your own systems or hear what happened.",
            reverse("api-tokens", args=[slug]),
            ApiToken.objects.for_workspace(workspace).exists()
            or WebhookEndpoint.objects.for_workspace(workspace).exists(),
        ),
    ]


def is_hidden(session, workspace: Workspace) -> bool:
    return workspace.slug in session.get(HIDDEN_KEY, [])


def hide(session, workspace: Workspace) -> None:
    hidden = set(session.get(HIDDEN_KEY, []))
    hidden.add(workspace.slug)
    session[HIDDEN_KEY] = sorted(hidden)
