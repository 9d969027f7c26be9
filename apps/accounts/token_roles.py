"""A person's API tokens follow their role: narrowed while it is smaller, whole again
when it grows back, revoked when it goes.

A token keeps the scopes it was granted. Authentication computes what it may do now, the
granted scopes intersected with its creator's current role
(``apps.accounts.services.api_token_authenticate``), so a demotion narrows a token and a
promotion restores it without rewriting it. Losing the workspace is different: the token
is revoked, with everything minted from it, for good. The membership services call
``tokens_fit_role`` in the same transaction as the role change, so the owner who made it,
the tokens page and the audit log see what each token can do now.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from apps.accounts.models import (
    ApiToken,
    Organization,
    OrganizationMembership,
    User,
    Workspace,
    WorkspaceMembership,
)
from apps.accounts.permissions import effective_role, role_bound_scopes
from apps.common import events


@dataclass(frozen=True)
class TokenChange:
    """What a role change did to one token: what it could do before and after (``after``
    is empty once revoked), and what it was granted (kept, and usable again as far as a
    later role allows)."""

    token_id: int
    name: str
    prefix: str
    workspace: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    granted: tuple[str, ...] = ()
    revoked: bool = False

    @property
    def kind(self) -> str:
        """ "revoked", "narrowed" (it lost a scope) or "restored" (it only gained)."""
        if self.revoked:
            return "revoked"
        if set(self.before) - set(self.after):
            return "narrowed"
        return "restored"

    def describe(self) -> str:
        """One line for the person who changed the role."""
        label = f"“{self.name}” ({self.prefix}…) in {self.workspace}"
        if self.revoked:
            return f"{label} was revoked"
        now = ", ".join(self.after) or "nothing"
        line = f"{label} now has {now} (had {', '.join(self.before) or 'nothing'})"
        if tuple(self.after) != tuple(self.granted):
            line += f"; it keeps its grant of {', '.join(self.granted)} for a role that allows it"
        return line

    def as_record(self) -> dict:
        """The change as the audit log keeps it."""
        return {
            "token": self.token_id,
            "name": self.name,
            "prefix": self.prefix,
            "workspace": self.workspace,
            "before": list(self.before),
            "after": list(self.after),
            "granted": list(self.granted),
            "revoked": self.revoked,
            "kind": self.kind,
            "summary": self.describe(),
        }


def describe(changes: list[TokenChange]) -> str:
    """The sentence the web app shows after a role change that touched tokens."""
    listed = "; ".join(change.describe() for change in changes)
    return f"Their API tokens changed with the role: {listed}."


def _live_tokens(user: User, organization: Organization, *, lock: bool) -> list[ApiToken]:
    tokens = ApiToken.objects.filter(
        created_by=user, workspace__organization=organization, revoked_at__isnull=True
    ).select_related("workspace")
    if lock:
        tokens = tokens.select_for_update(of=("self",))
    return list(tokens.order_by("pk"))


def _roles(user: User, organization: Organization, tokens: list[ApiToken]) -> dict[int, str | None]:
    """The user's effective role in each of the tokens' workspaces, as the rows say now."""
    org_role = (
        OrganizationMembership.objects.filter(user=user, organization=organization)
        .values_list("role", flat=True)
        .first()
    )
    workspace_roles = dict(
        WorkspaceMembership.objects.filter(
            user=user, workspace_id__in={t.workspace_id for t in tokens}
        ).values_list("workspace_id", "role")
    )
    return {
        t.workspace_id: effective_role(user, org_role, workspace_roles.get(t.workspace_id))
        for t in tokens
    }


def token_powers(*, user: User, organization: Organization) -> dict[int, tuple[str, ...]]:
    """What each of the user's live tokens in the organization may do now, by token id.
    Read it before a role change and hand it to ``tokens_fit_role`` after."""
    tokens = _live_tokens(user, organization, lock=False)
    if not tokens:
        return {}
    roles = _roles(user, organization, tokens)
    return {t.pk: tuple(role_bound_scopes(list(t.scopes), roles[t.workspace_id])) for t in tokens}


def tokens_fit_role(
    *, user: User, organization: Organization, before: dict[int, tuple[str, ...]] | None = None
) -> list[TokenChange]:
    """Say what the user's new roles do to their live tokens in the organization, and
    revoke (with their descendants) those in a workspace the user no longer has a role in.
    Call inside the transaction that changed the role (the membership rows must already
    say the new roles), with ``before`` from ``token_powers`` read before the change
    (without it, a token is compared with its grant). No token's granted scopes are
    rewritten: authentication bounds them by the role of the moment. Returns the tokens
    whose powers changed, token by token."""
    tokens = _live_tokens(user, organization, lock=True)
    if not tokens:
        return []
    roles = _roles(user, organization, tokens)
    changes: list[TokenChange] = []
    revoke: list[ApiToken] = []
    for token in tokens:
        role = roles[token.workspace_id]
        granted = tuple(token.scopes)
        was = (before or {}).get(token.pk, granted)
        now = () if role is None else tuple(role_bound_scopes(list(granted), role))
        if role is not None and now == was:
            continue
        if role is None:
            revoke.append(token)
        changes.append(
            TokenChange(
                token_id=token.pk,
                name=token.name,
                prefix=token.prefix,
                workspace=token.workspace.name,
                before=was,
                after=now,
                granted=granted,
                revoked=role is None,
            )
        )
    if revoke:
        _revoke(revoke, now=timezone.now())
    return changes


def effective_scopes(tokens: Iterable[ApiToken], *, workspace: Workspace) -> None:
    """Set ``effective_scopes`` on each of the workspace's tokens (their ``created_by``
    loaded): what it may do now, its grant bounded by its creator's current role; nothing
    once revoked; an operator's token, made by no one, its grant. Two queries, whatever
    the number of tokens."""
    tokens = list(tokens)
    creators = {t.created_by_id for t in tokens if t.created_by_id is not None}
    org_roles: dict[int, str] = {}
    workspace_roles: dict[int, str] = {}
    if creators:
        org_roles = dict(
            OrganizationMembership.objects.filter(
                user_id__in=creators, organization_id=workspace.organization_id
            ).values_list("user_id", "role")
        )
        workspace_roles = dict(
            WorkspaceMembership.objects.filter(
                user_id__in=creators, workspace=workspace
            ).values_list("user_id", "role")
        )
    for token in tokens:
        scopes = list(token.scopes)
        if token.is_revoked:
            scopes = []
        elif token.created_by is not None:
            role = effective_role(
                token.created_by,
                org_roles.get(token.created_by.pk),
                workspace_roles.get(token.created_by.pk),
            )
            scopes = role_bound_scopes(scopes, role)
        token.effective_scopes = scopes


def _revoke(tokens: list[ApiToken], *, now: datetime) -> None:
    """Revoke the tokens and every token minted from them (as ``api_token_revoke``)."""
    ids: list[int] = []
    for token in tokens:
        ids += [token.pk, *ApiToken.objects.descendants_of(token)]
    ApiToken.objects.filter(Q(pk__in=ids), revoked_at__isnull=True).update(
        revoked_at=now, updated_at=now
    )
    for token in tokens:
        token.revoked_at = now
        events.emit(events.TOKEN_REVOKED, token=token)
