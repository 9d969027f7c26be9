"""A person's API tokens follow their role: when the role shrinks or goes, so do they.

Authentication already bounds every token by its creator's role of the moment
(``apps.accounts.services.api_token_authenticate``). The membership services also bring
the stored scopes down in the same transaction as the role change, so the tokens page, the
audit log and the owner who made the change see what each token can still do: a token
left with some power is narrowed to it, one left with none (or whose creator lost the
workspace) is revoked with everything minted from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q
from django.utils import timezone

from apps.accounts.models import (
    ApiToken,
    Organization,
    OrganizationMembership,
    User,
    WorkspaceMembership,
)
from apps.accounts.permissions import effective_role, holds_power, role_bound_scopes
from apps.common import events


@dataclass(frozen=True)
class TokenChange:
    """What a role change did to one token: its scopes before and after, and whether it
    was revoked (``after`` is then empty)."""

    token_id: int
    name: str
    prefix: str
    workspace: str
    before: tuple[str, ...]
    after: tuple[str, ...]

    @property
    def revoked(self) -> bool:
        return not self.after

    def describe(self) -> str:
        """One line for the person who changed the role."""
        label = f"“{self.name}” ({self.prefix}…) in {self.workspace}"
        if self.revoked:
            return f"{label} was revoked"
        return f"{label} now has {', '.join(self.after)} (had {', '.join(self.before)})"

    def as_record(self) -> dict:
        """The change as the audit log keeps it."""
        return {
            "token": self.token_id,
            "name": self.name,
            "prefix": self.prefix,
            "workspace": self.workspace,
            "before": list(self.before),
            "after": list(self.after),
            "revoked": self.revoked,
            "summary": self.describe(),
        }


def describe(changes: list[TokenChange]) -> str:
    """The sentence the web app shows after a role change that touched tokens."""
    listed = "; ".join(change.describe() for change in changes)
    return f"Their API tokens changed with the role: {listed}."


def tokens_fit_role(*, user: User, organization: Organization) -> list[TokenChange]:
    """Narrow or revoke the live tokens the user made in the organization's workspaces so
    that none holds a scope their role there no longer allows. Call inside the transaction
    that changed the role (the membership rows must already say the new roles). Returns
    what changed, token by token; tokens that still fit are left alone."""
    tokens = list(
        ApiToken.objects.filter(
            created_by=user, workspace__organization=organization, revoked_at__isnull=True
        )
        .select_related("workspace")
        .select_for_update(of=("self",))
        .order_by("pk")
    )
    if not tokens:
        return []
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
    changes: list[TokenChange] = []
    revoke: list[ApiToken] = []
    now = timezone.now()
    for token in tokens:
        role = effective_role(user, org_role, workspace_roles.get(token.workspace_id))
        after = role_bound_scopes(list(token.scopes), role)
        if after == list(token.scopes):
            continue
        if role is None or not holds_power(after):
            after = []
            revoke.append(token)
        else:
            ApiToken.objects.filter(pk=token.pk).update(scopes=after, updated_at=now)
        changes.append(
            TokenChange(
                token_id=token.pk,
                name=token.name,
                prefix=token.prefix,
                workspace=token.workspace.name,
                before=tuple(token.scopes),
                after=tuple(after),
            )
        )
        token.scopes = after
    if revoke:
        _revoke(revoke, now=now)
    return changes


def _revoke(tokens: list[ApiToken], *, now) -> None:
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
