"""Who may open a web page: every workspace page goes through `workspace_view`.

A workspace the user cannot see is a 404 (never a 403, so slugs don't leak); a workspace
the user sees but may not act in is a 403. The decision itself is always
`apps.accounts.permissions.can`. A suspended or deleted organization is read-only: pages
open, and every write is refused (403) with a page saying why, as the API refuses its
tokens' writes. Joining or creating anything takes a verified email address.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone

from apps.accounts.http import AuthenticatedRequest
from apps.accounts.membership import MANAGERS, organization_role
from apps.accounts.models import Organization, Workspace
from apps.accounts.permissions import Action, can, role_can, workspace_role, workspaces_for

LAST_WORKSPACE_KEY = "last_workspace"
# Methods that change nothing: all a read-only (suspended or deleted) organization serves.
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# The header an htmx request's refusal carries, so the page can say why (static/js/app.js).
REFUSAL_HEADER = "X-Refusal"


class WorkspaceRequest(AuthenticatedRequest):
    """A request to a workspace page: `workspace_view` sets these."""

    workspace: Workspace
    role: str


def is_htmx(request: HttpRequest) -> bool:
    """True for requests htmx sends (they answer with a fragment, not a page)."""
    return request.headers.get("HX-Request") == "true"


def workspace_for(
    request: AuthenticatedRequest, slug: str, action: Action = Action.VIEW
) -> tuple[Workspace, str]:
    """The workspace the user may `action` in, and their role there: 404 when they cannot
    see it, 403 when they see it but may not do that."""
    workspace = get_object_or_404(workspaces_for(request.user), slug=slug)
    role = workspace_role(request.user, workspace)
    if not role_can(role, action):
        raise PermissionDenied(f"Your role in {workspace.name} does not allow this.")
    assert role is not None  # role_can refuses no role
    return workspace, role


def require(request: WorkspaceRequest, action: Action) -> None:
    """Refuse (403) an action the user's role does not allow in request.workspace."""
    if not can(request.user, request.workspace, action):
        raise PermissionDenied(f"Your role in {request.workspace.name} does not allow this.")


def read_only_refusal(
    request: HttpRequest, organization: Organization, *, writes: bool = False
) -> HttpResponse | None:
    """The 403 answering a write to a suspended or deleted organization, or None when the
    organization is active or the request only reads (its method changes nothing, unless
    the caller ``writes`` anyway: an OAuth callback is a GET)."""
    if organization.is_active or (request.method in READ_METHODS and not writes):
        return None
    message = (
        f"{organization.name} is {organization.state}, so everything in it is read-only: you "
        "can look, but nothing can be changed, scheduled or published. Nothing was saved."
    )
    context = {"organization": organization, "message": message}
    response = render(request, "web/organizations/read_only.html", context, status=403)
    # Without the organization's name: a header carries Latin-1 only.
    response[REFUSAL_HEADER] = (
        f"This organization is {organization.state}: it is read-only, and nothing was saved."
    )
    return response


def workspace_view(action: Action = Action.VIEW, *, writes: bool | None = None) -> Callable:
    """Decorate a view taking (request, workspace_slug, ...): the user is logged in and
    may `action` in the workspace, which is set on request.workspace. Times render in the
    user's display zone while the view runs.

    A view that ``writes`` (by default: any action beyond VIEW) refuses its non-GET
    requests while the organization is suspended or deleted; ``writes=False`` marks a POST
    that changes nothing (the composer's live check)."""
    writes = action != Action.VIEW if writes is None else writes

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @login_required
        @functools.wraps(view)
        def wrapper(
            request: WorkspaceRequest, workspace_slug: str, *args, **kwargs
        ) -> HttpResponse:
            workspace, role = workspace_for(request, workspace_slug, action)
            if writes and (refused := read_only_refusal(request, workspace.organization)):
                return refused
            request.workspace = workspace
            request.role = role
            if request.session.get(LAST_WORKSPACE_KEY) != workspace.slug:
                request.session[LAST_WORKSPACE_KEY] = workspace.slug  # a write: only on change
            with timezone.override(request.user.display_timezone):
                return view(request, *args, **kwargs)

        return wrapper

    return decorator


def post_only(page: str, *keep: str) -> Callable:
    """Decorate an action that only a form's POST performs. A GET of its address (a
    person reloading the page a refused form answered, or opening a copied link) is
    redirected to ``page``, the page that holds the form, instead of the browser's bare
    "405"; other methods still get 405. ``keep`` names the view's URL arguments that
    ``page`` takes as well (``pk``, ``org_slug``); a workspace page gets the workspace's
    slug. Goes inside ``workspace_view`` so a GET is still checked for access first."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method in ("GET", "HEAD"):
                target = {name: kwargs[name] for name in keep}
                workspace = getattr(request, "workspace", None)
                if isinstance(workspace, Workspace):
                    target["workspace_slug"] = workspace.slug
                return redirect(page, **target)
            if request.method != "POST":
                return HttpResponseNotAllowed(["POST"])
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


def organization_for(request: AuthenticatedRequest, slug: str) -> Organization:
    """An organization the user owns or administers: its pages show every workspace, member
    and figure, so they are for them only. A plain member gets a 403, anyone else a 404."""
    organization = get_object_or_404(
        Organization.objects.filter(memberships__user=request.user), slug=slug
    )
    if organization_role(request.user, organization) not in MANAGERS:
        raise PermissionDenied("Only the organization's owners and admins open its pages.")
    return organization


def user_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A logged-in page outside a workspace; times render in the user's display zone."""

    @login_required
    @functools.wraps(view)
    def wrapper(request: AuthenticatedRequest, *args, **kwargs) -> HttpResponse:
        with timezone.override(request.user.display_timezone):
            return view(request, *args, **kwargs)

    return wrapper


def verified_user_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A `user_view` that creates or joins something: someone whose email address is not
    verified yet is sent to the "check your email" page instead (nothing is done)."""

    @user_view
    @functools.wraps(view)
    def wrapper(request: AuthenticatedRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_email_verified:
            return redirect("email-verification")
        return view(request, *args, **kwargs)

    return wrapper


def permits(request: AuthenticatedRequest, workspace: Workspace, action: Action | str) -> bool:
    """`can`, remembered for the rest of the request (a page asks several times); in the
    page's own workspace, from the role `workspace_view` read."""
    current = getattr(request, "workspace", None)
    role = getattr(request, "role", None)
    if isinstance(current, Workspace) and current.pk == workspace.pk and role:
        return role_can(role, action)
    memo = request.__dict__.setdefault("_web_permits", {})
    key = (workspace.pk, str(action))
    if key not in memo:
        memo[key] = can(request.user, workspace, action)
    return memo[key]
