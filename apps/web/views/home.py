"""The start page (which workspace to open) and each workspace's overview."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.http import AuthenticatedRequest
from apps.accounts.invitations import pending_for
from apps.accounts.models import SocialAccount
from apps.accounts.permissions import Action, can, workspaces_for
from apps.publications.models import Publication
from apps.renditions.models import Rendition
from apps.web import first_steps
from apps.web.access import LAST_WORKSPACE_KEY, WorkspaceRequest, workspace_view

P = Publication.Status


@login_required
@require_GET
def home(request: AuthenticatedRequest) -> HttpResponse:
    """Open the workspace used last, else the first one; someone in no workspace yet is
    welcomed and offered to create an organization or to accept the invitations waiting
    for their address (once it is verified: until then, the "check your email" page)."""
    workspaces = workspaces_for(request.user)
    last = request.session.get(LAST_WORKSPACE_KEY)
    workspace = (last and workspaces.filter(slug=last).first()) or workspaces.first()
    if workspace is None:
        if not request.user.is_email_verified:
            return redirect("email-verification")
        context = {"invitations": pending_for(request.user)}
        return render(request, "web/home/welcome.html", context)
    return redirect("workspace-home", workspace_slug=workspace.slug)


@workspace_view(Action.VIEW)
@require_GET
def workspace_home(request: WorkspaceRequest) -> HttpResponse:
    workspace = request.workspace
    publications = Publication.objects.for_workspace(workspace).prefetch_related(
        "segments", "renditions__social_account"
    )
    attention = (
        Rendition.objects.for_workspace(workspace)
        .filter(status=Rendition.Status.FAILED)
        .exclude(next_retry_at__isnull=False, ambiguous=False)
        .select_related("social_account", "publication")
        .order_by("-updated_at")[:10]
    )
    context = {
        "workspace": workspace,
        "section": "home",
        "upcoming": publications.filter(
            status__in=[P.SCHEDULED, P.PUBLISHING], scheduled_at__gte=timezone.now()
        ).order_by("scheduled_at")[:8],
        "recent": publications.filter(
            status__in=[P.PUBLISHED, P.PARTIALLY_PUBLISHED, P.FAILED, P.PUBLISHING]
        ).order_by("-updated_at")[:8],
        "drafts": publications.filter(status=P.DRAFT).order_by("-updated_at")[:5],
        "attention": attention,
        "accounts_to_fix": SocialAccount.objects.for_workspace(workspace).exclude(
            status=SocialAccount.Status.CONNECTED
        ),
        "account_count": SocialAccount.objects.for_workspace(workspace).count(),
        "first_steps": _first_steps_shown(request),
    }
    return render(request, "web/home/workspace.html", context)


def _first_steps_shown(request: WorkspaceRequest) -> list[first_steps.Step]:
    """The checklist for people who can act on it, until every step is done or it is hidden."""
    workspace = request.workspace
    if not can(request.user, workspace, Action.EDIT) or first_steps.is_hidden(
        request.session, workspace
    ):
        return []
    steps = first_steps.first_steps(workspace)
    return [] if all(step.done for step in steps) else steps


@workspace_view(Action.VIEW)
@require_POST
def first_steps_hide(request: WorkspaceRequest) -> HttpResponse:
    first_steps.hide(request.session, request.workspace)
    return redirect("workspace-home", workspace_slug=request.workspace.slug)
