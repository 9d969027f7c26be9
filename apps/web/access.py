"""Who may open a web page: every workspace page goes through `workspace_view`.

A workspace the user cannot see is a 404 (never a 403, so slugs don't leak); a workspace
the user sees but may not act in is a 403. The decision itself is always
`apps.accounts.permissions.can`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone

from apps.accounts.models import Organization, OrganizationMembership, User, Workspace
from apps.accounts.permissions import Action, can, workspace_role, workspaces_for

LAST_WORKSPACE_KEY = "last_workspace"


class WorkspaceRequest(HttpRequest):
    """A request to a workspace page: `workspace_view` sets these."""

    user: User
    workspace: Workspace
    role: str


def is_htmx(request: HttpRequest) -> bool:
    """True for requests htmx sends (they answer with a fragment, not a page)."""
    return request.headers.get("HX-Request") == "true"


def workspace_for(request: HttpRequest, slug: str, action: Action = Action.VIEW) -> Workspace:
    """The workspace the user may `action` in: 404 when they cannot see it, 403 when they
    see it but may not do that."""
    workspace = get_object_or_404(workspaces_for(request.user), slug=slug)
    if not can(request.user, workspace, action):
        raise PermissionDenied(f"Your role in {workspace.name} does not allow this.")
    return workspace


def require(request: WorkspaceRequest, action: Action) -> None:
    """Refuse (403) an action the user's role does not allow in request.workspace."""
    if not can(request.user, request.workspace, action):
        raise PermissionDenied(f"Your role in {request.workspace.name} does not allow this.")


def workspace_view(action: Action = Action.VIEW) -> Callable:
    """Decorate a view taking (request, workspace_slug, ...): the user is logged in and
    may `action` in the workspace, which is set on request.workspace. Times render in the
    user's display zone while the view runs."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @login_required
        @functools.wraps(view)
        def wrapper(request: HttpRequest, workspace_slug: str, *args, **kwargs) -> HttpResponse:
            workspace = workspace_for(request, workspace_slug, action)
            request.workspace = workspace
            request.role = workspace_role(request.user, workspace)
            if request.session.get(LAST_WORKSPACE_KEY) != workspace.slug:
                request.session[LAST_WORKSPACE_KEY] = workspace.slug  # a write: only on change
            with timezone.override(request.user.display_timezone):
                return view(request, *args, **kwargs)

        return wrapper

    return decorator


def organization_for(request: HttpRequest, slug: str, *, manage: bool = False) -> Organization:
    """An organization the user belongs to (404 otherwise); with manage, only its owners
    and admins (403 for plain members)."""
    organization = get_object_or_404(
        Organization.objects.exclude(state=Organization.State.DELETED).filter(
            memberships__user=request.user
        ),
        slug=slug,
    )
    if manage and organization_role(request.user, organization) not in MANAGERS:
        raise PermissionDenied("Only the organization's owners and admins manage it.")
    return organization


MANAGERS = (OrganizationMembership.Role.OWNER, OrganizationMembership.Role.ADMIN)


def organization_role(user: User, organization: Organization) -> str | None:
    return (
        OrganizationMembership.objects.filter(user=user, organization=organization)
        .values_list("role", flat=True)
        .first()
    )


def user_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A logged-in page outside a workspace; times render in the user's display zone."""

    @login_required
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        with timezone.override(request.user.display_timezone):
            return view(request, *args, **kwargs)

    return wrapper


def permits(request: HttpRequest, workspace: Workspace, action: Action | str) -> bool:
    """`can`, remembered for the rest of the request (a page asks several times)."""
    memo = request.__dict__.setdefault("_web_permits", {})
    key = (workspace.pk, str(action))
    if key not in memo:
        memo[key] = can(request.user, workspace, action)
    return memo[key]
