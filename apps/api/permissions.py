"""Scope checks as permission classes. `read` for GET, `write` for drafts and edits,
`publish` to schedule, retry and resolve; views name what they need in `required_scopes`.

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

from apps.accounts.models import ApiToken, Organization
from apps.common.errors import PermissionDenied

SAFE_METHODS = permissions.SAFE_METHODS

Scopes = str | tuple[str, ...] | None
ScopeRule = Scopes | Callable[..., Scopes]


class InsufficientScope(PermissionDenied):
    code = "INSUFFICIENT_SCOPE"


class HasWorkspaceToken(permissions.BasePermission):
    """A live token is present, its organization is active (suspended ones may only read),
    and it holds every scope the view asks for.

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
        if token.workspace.organization.state != Organization.State.ACTIVE and (
            request.method not in SAFE_METHODS
        ):
            return self._deny(
                PermissionDenied(
                    "The organization is suspended; only reads are allowed.",
                    code="ORGANIZATION_SUSPENDED",
                )
            )
        return self._deny(_missing(token, required_scope(request, view)))

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        rule = _rule_for(getattr(view, "required_object_scopes", None), request, view)
        if callable(rule):
            rule = rule(request, obj)
        return self._deny(_missing(request.auth, rule))

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


def _as_tuple(scopes: Scopes) -> tuple[str, ...]:
    if scopes is None:
        return ()
    return (scopes,) if isinstance(scopes, str) else tuple(scopes)


def _missing(token: ApiToken, scopes: Scopes) -> InsufficientScope | None:
    missing = [scope for scope in _as_tuple(scopes) if not token.has_scope(scope)]
    if not missing:
        return None
    return InsufficientScope(
        f"This token lacks the '{missing[0]}' scope."
        if len(missing) == 1
        else f"This token lacks the scopes {', '.join(missing)}.",
        details={"required": list(_as_tuple(scopes)), "token_scopes": list(token.scopes)},
    )


def check_grantable(token: ApiToken, scopes: list[str]) -> None:
    """A token may create tokens only with scopes it holds itself (no escalation)."""
    beyond = [scope for scope in scopes if not token.has_scope(scope)]
    if beyond:
        raise PermissionDenied(
            f"A token cannot grant scopes it does not hold: {', '.join(beyond)}.",
            code="SCOPE_ESCALATION",
            details={"scopes": beyond, "token_scopes": list(token.scopes)},
        )
