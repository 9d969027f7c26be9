"""Who may read a workspace's sandbox witness pages (`/sandbox/posts`, a post's page).

What a sandbox account holds belongs to the workspace that opened it, like the rest of its
data: the caller shows that workspace's API token (`Authorization: Bearer`, `read` scope)
or is signed in as someone who may view it. Any other account is a 404, as another
workspace's object is everywhere else.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpRequest

from apps.accounts import access
from apps.accounts import services as account_services
from apps.accounts.models import ApiToken, Workspace
from apps.accounts.permissions import workspaces_for
from apps.common.errors import DomainError


class NotAuthenticated(DomainError):
    code = "NOT_AUTHENTICATED"
    http_status = 401


def viewer_workspaces(request: HttpRequest) -> QuerySet[Workspace]:
    """The workspaces whose sandbox accounts the caller may read; raises a DomainError
    (401 without credentials or with a bad token, 403 for a token without `read`)."""
    header = request.headers.get("Authorization", "")
    if header:
        keyword, _, clear = header.partition(" ")
        token = (
            account_services.api_token_authenticate(clear.strip())
            if keyword.lower() == "bearer" and clear.strip()
            else None
        )
        if token is None:
            raise NotAuthenticated(
                "The token is unknown or has been revoked; use 'Authorization: Bearer "
                "<API token>' of the workspace that owns the sandbox account.",
                code="INVALID_TOKEN",
            )
        refusal = access.scope_refusal(token, ApiToken.Scope.READ)
        if refusal is not None:
            raise refusal
        return Workspace.objects.filter(pk=token.workspace_id)
    if request.user.is_authenticated:
        return workspaces_for(request.user)
    raise NotAuthenticated(
        "Sign in, or send 'Authorization: Bearer <API token>' of the workspace that owns "
        "the sandbox account."
    )
