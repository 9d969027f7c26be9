"""What an API token may do: the one policy the DRF API and the MCP endpoint both ask.

A token acts in its workspace with the scopes it holds (``read``, ``write``, ``publish``,
``admin`` for what a workspace admin does: tokens, webhooks, connected accounts; plus
``mcp`` for that client). A suspended organization's tokens may only read: a call is a
read when it needs no scope beyond ``read``, whatever its HTTP method (validating a draft
or previewing a series is a read). A token creates other tokens only with scopes it holds
itself.

Each check answers the refusal (a domain error with the envelope's code and details) or
None, so the API's permission classes can report it their way and the MCP tools raise it.
"""

from __future__ import annotations

from apps.accounts.models import ApiToken, Organization
from apps.common.errors import PermissionDenied

# A rule's scopes: one scope name, several (all needed), or None (any live token).
Scopes = str | tuple[str, ...] | None

# Scopes that change nothing: the only calls a suspended organization may make.
READ_SCOPES = frozenset({ApiToken.Scope.READ})


class InsufficientScope(PermissionDenied):
    code = "INSUFFICIENT_SCOPE"


def scopes_tuple(scopes: Scopes) -> tuple[str, ...]:
    if scopes is None:
        return ()
    return (scopes,) if isinstance(scopes, str) else tuple(scopes)


def scope_refusal(token: ApiToken, scopes: Scopes) -> InsufficientScope | None:
    """INSUFFICIENT_SCOPE naming what is needed and what the token holds, or None."""
    needed = scopes_tuple(scopes)
    missing = [scope for scope in needed if not token.has_scope(scope)]
    if not missing:
        return None
    return InsufficientScope(
        f"This token lacks the '{missing[0]}' scope."
        if len(missing) == 1
        else f"This token lacks the scopes {', '.join(missing)}.",
        details={"required": list(needed), "token_scopes": list(token.scopes)},
    )


def is_write(scopes: Scopes) -> bool:
    return not READ_SCOPES.issuperset(scopes_tuple(scopes))


def suspension_refusal(token: ApiToken, scopes: Scopes) -> PermissionDenied | None:
    """ORGANIZATION_SUSPENDED for a write by a token of an organization that is not
    active, or None."""
    if not is_write(scopes) or token.workspace.organization.state == Organization.State.ACTIVE:
        return None
    return PermissionDenied(
        "The organization is suspended; only reads are allowed.",
        code="ORGANIZATION_SUSPENDED",
    )


def token_refusal(token: ApiToken, scopes: Scopes) -> PermissionDenied | None:
    """Why the token may not make a call that needs these scopes, or None: a suspended
    organization refuses writes first, then every needed scope must be held."""
    return suspension_refusal(token, scopes) or scope_refusal(token, scopes)


def token_authorize(token: ApiToken, scopes: Scopes) -> None:
    """Raise the refusal ``token_refusal`` finds."""
    refusal = token_refusal(token, scopes)
    if refusal is not None:
        raise refusal


def check_grantable(token: ApiToken, scopes: list[str]) -> None:
    """A token may create tokens only with scopes it holds itself (no escalation)."""
    beyond = [scope for scope in scopes if not token.has_scope(scope)]
    if beyond:
        raise PermissionDenied(
            f"A token cannot grant scopes it does not hold: {', '.join(beyond)}.",
            code="SCOPE_ESCALATION",
            details={"scopes": beyond, "token_scopes": list(token.scopes)},
        )
