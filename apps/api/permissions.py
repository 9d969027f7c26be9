"""Scope checks as permission classes. `read` for GET, `write` for drafts and edits,
`publish` to schedule or retry; views name what they need in `required_scopes`."""

from rest_framework import permissions
from rest_framework.request import Request

from apps.accounts.models import ApiToken, Organization

SAFE_METHODS = permissions.SAFE_METHODS


class HasWorkspaceToken(permissions.BasePermission):
    """A live token is present, its organization is not suspended, and it holds the scope the
    view asks for (``view.required_scopes``: a mapping of method to scope, or a callable)."""

    message = "This token lacks the scope this endpoint needs."

    def has_permission(self, request: Request, view) -> bool:
        token = request.auth
        if not isinstance(token, ApiToken):
            return False
        if token.workspace.organization.state != Organization.State.ACTIVE and (
            request.method not in SAFE_METHODS
        ):
            self.message = "The organization is suspended; only reads are allowed."
            return False
        scope = required_scope(request, view)
        if scope and not token.has_scope(scope):
            self.message = f"This token lacks the '{scope}' scope."
            return False
        return True


def required_scope(request: Request, view) -> str | None:
    rule = getattr(view, "required_scopes", None)
    if callable(rule):
        return rule(request)
    if isinstance(rule, dict):
        return rule.get(request.method, rule.get("*"))
    return "read" if request.method in SAFE_METHODS else "write"
