"""Scope checks as permission classes. `read` for GET, `write` for drafts and edits,
`publish` to schedule, retry and resolve; views name what they need in `required_scopes`.
The policy itself (scopes, suspended organizations) is ``apps.accounts.access``, which the
MCP tools share.

A rule is a scope name, a tuple of scope names (all needed), None (no scope: any live
token), or a callable ``rule(request) -> scopes`` for rules that read the body (creating a
scheduled publication needs ``publish`` as well as ``write``). ``required_scopes`` maps the
viewset action (``list``, ``create``, ``retry``...) or the HTTP method to a rule; ``"*"`` is
the fallback. Rules that depend on the object itself go in ``required_object_scopes``
(same shape, callables take ``(request, obj)``), checked when the view loads the object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework import permissions
from rest_framework.request import Request

from apps.accounts.access import Scopes, token_refusal
from apps.accounts.models import ApiToken
from apps.accounts.permissions import holds_power
from apps.common.errors import PermissionDenied

SAFE_METHODS = permissions.SAFE_METHODS

ScopeRule = Scopes | Callable[..., Scopes]


def client_refusal(token: ApiToken) -> PermissionDenied | None:
    """MCP_ONLY_TOKEN for a token that holds nothing but client scopes (``mcp``): it was
    made for an MCP client, and the REST API is not its door. None otherwise. Judged on
    what the token was granted: one made with powers that its creator's current role
    takes away is refused for the missing scope, not as an MCP client's."""
    granted = token.granted_scopes if token.granted_scopes is not None else token.scopes
    if holds_power(list(granted)):
        return None
    return PermissionDenied(
        "This token only serves MCP clients. Use a token with the read, write or publish "
        "scope for the REST API.",
        code="MCP_ONLY_TOKEN",
        details={"token_scopes": list(token.scopes)},
    )


class HasWorkspaceToken(permissions.BasePermission):
    """A live token is present, its organization is active (suspended ones may only read:
    make calls that need no scope beyond `read`), and it holds every scope the view asks
    for. A token with nothing but the ``mcp`` scope is refused (``client_refusal``).

    A missing or refused token is answered 401 by DRF (the authentication class raises or
    no token was sent). A refusal sets ``message`` and ``code`` (what plain DRF views
    report) and ``denial``: the domain error with details (scopes needed and held) that
    ``apps.api.base.WorkspaceViewSet`` raises instead.
    """

    message = "This token lacks the scope this endpoint needs."
    code = "INSUFFICIENT_SCOPE"
    denial: PermissionDenied | None = None

    def has_permission(self, request: Request, view: Any) -> bool:
        token = request.auth
        if not isinstance(token, ApiToken):
            return False
        return self._deny(
            client_refusal(token) or token_refusal(token, required_scope(request, view))
        )

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        rule = _rule_for(getattr(view, "required_object_scopes", None), request, view)
        if callable(rule):
            rule = rule(request, obj)
        return self._deny(token_refusal(request.auth, rule))

    def _deny(self, denial: PermissionDenied | None) -> bool:
        if denial is None:
            return True
        self.denial, self.message, self.code = denial, denial.message, denial.code
        return False


def _rule_for(rules: Any, request: Request, view: Any) -> ScopeRule:
    if not isinstance(rules, dict):
        return rules
    action = getattr(view, "action", None)
    if action in rules:
        return rules[action]
    return rules.get(request.method, rules.get("*"))


def required_scope(request: Request, view: Any) -> Scopes:
    """The scopes the view needs for this request (before its object is loaded)."""
    rules = getattr(view, "required_scopes", None)
    if rules is None:
        return "read" if request.method in SAFE_METHODS else "write"
    rule = rules if callable(rules) else _rule_for(rules, request, view)
    if callable(rule):
        rule = rule(request)
    return rule
