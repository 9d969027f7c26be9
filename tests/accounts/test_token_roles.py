"""A token is never worth more than the person who made it is now: authentication bounds
the scopes it was granted by the creator's current role (in the one query it reads), so a
demotion narrows it and a promotion restores it; removal revokes it for good. A role change
says, in its transaction, which tokens it changed."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.accounts import membership, services
from apps.accounts.models import ApiToken, OrganizationMembership, WorkspaceMembership
from apps.accounts.permissions import scopes_for_role
from apps.accounts.token_roles import effective_scopes
from apps.audit.models import AuditEvent
from tests.factories import UserFactory, WorkspaceFactory

pytestmark = pytest.mark.django_db

ALL = ["read", "write", "publish", "admin", "mcp"]


@pytest.fixture
def dana(workspace_a):
    """A workspace admin of A, who made an all-scope token there."""
    person = UserFactory(email="dana@example.com")
    membership.workspace_member_set(workspace=workspace_a, user=person, role="admin")
    return person


def _issue(workspace, user, scopes=ALL, name="deploy", parent=None):
    return services.api_token_create(
        workspace=workspace, name=name, scopes=scopes, created_by=user, parent=parent
    )


def test_each_role_allows_its_powers_and_any_client():
    assert scopes_for_role("admin") == {"read", "write", "publish", "admin", "mcp"}
    assert scopes_for_role("editor") == {"read", "write", "publish", "mcp"}
    assert scopes_for_role("viewer") == {"read", "mcp"}
    assert scopes_for_role(None) == set()


# --- at authentication --------------------------------------------------------------------


def test_authentication_bounds_the_scopes_by_the_role_of_the_moment(workspace_a, dana):
    issued = _issue(workspace_a, dana)
    # Changed around the services (an operator's SQL, a restore): the bound still holds.
    WorkspaceMembership.objects.filter(user=dana).update(role="viewer")

    token = services.api_token_authenticate(issued.clear)

    assert token is not None and token.scopes == ["read", "mcp"]
    assert ApiToken.objects.get(pk=issued.token.pk).scopes == ALL  # stored as granted


def test_authentication_stays_one_query(workspace_a, dana):
    issued = _issue(workspace_a, dana)
    services.api_token_authenticate(issued.clear)  # touches last_used_at once

    with CaptureQueriesContext(connection) as queries:
        token = services.api_token_authenticate(issued.clear)

    assert token is not None and token.scopes == ALL
    assert len(queries.captured_queries) == 1


def test_an_organization_admins_token_follows_the_organization_role(org_a, workspace_a):
    erin = UserFactory(email="erin@example.com")
    membership.organization_member_set(organization=org_a, user=erin, role="admin")
    issued = _issue(workspace_a, erin)
    OrganizationMembership.objects.filter(user=erin).update(role="member")

    # A plain organization member has no role in the workspace: the token stops.
    assert services.api_token_authenticate(issued.clear) is None


def test_the_operators_tokens_keep_their_scopes(workspace_a):
    issued = services.api_token_create(workspace=workspace_a, name="ops", scopes=ALL)

    assert services.api_token_authenticate(issued.clear).scopes == ALL


# --- role changes -------------------------------------------------------------------------


def test_a_demotion_narrows_the_tokens_and_says_which(workspace_a, dana, alice):
    kept = _issue(workspace_a, dana, name="deploy")
    powerless = _issue(workspace_a, dana, scopes=["admin", "mcp"], name="admin-only")
    untouched = _issue(workspace_a, dana, scopes=["read"], name="reader")

    change = membership.workspace_member_change(
        workspace=workspace_a, user=dana, role="viewer", actor=alice
    )

    by_name = {c.name: c for c in change.tokens}
    assert set(by_name) == {"deploy", "admin-only"}
    assert by_name["deploy"].after == ("read", "mcp") and by_name["deploy"].kind == "narrowed"
    assert by_name["admin-only"].after == ("mcp",) and not by_name["admin-only"].revoked
    # Nothing is rewritten or revoked: the grant waits for a role that allows it.
    for issued in (kept, powerless, untouched):
        issued.token.refresh_from_db()
        assert issued.token.revoked_at is None
    assert kept.token.scopes == ALL and powerless.token.scopes == ["admin", "mcp"]
    assert services.api_token_authenticate(kept.clear).scopes == ["read", "mcp"]
    assert services.api_token_authenticate(powerless.clear).scopes == ["mcp"]

    event = AuditEvent.objects.get(action="member.role_changed")
    assert event.metadata["previous"] == "admin" and event.metadata["role"] == "viewer"
    assert event.metadata["tokens_revoked"] == []
    assert set(event.metadata["tokens_narrowed"]) == {kept.token.pk, powerless.token.pk}
    assert any(
        "now has read, mcp (had read, write, publish, admin, mcp)" in line
        for line in event.metadata["tokens"]
    )


def test_a_promotion_restores_what_a_demotion_narrowed(workspace_a, dana, alice):
    issued = _issue(workspace_a, dana)
    membership.workspace_member_change(workspace=workspace_a, user=dana, role="viewer", actor=alice)

    change = membership.workspace_member_change(
        workspace=workspace_a, user=dana, role="admin", actor=alice
    )

    assert [(c.token_id, c.kind) for c in change.tokens] == [(issued.token.pk, "restored")]
    assert change.tokens[0].before == ("read", "mcp") and change.tokens[0].after == tuple(ALL)
    assert services.api_token_authenticate(issued.clear).scopes == ALL
    event = AuditEvent.objects.filter(action="member.role_changed").latest("pk")
    assert event.metadata["tokens_restored"] == [issued.token.pk]


def test_a_promotion_gives_no_token_more_than_its_grant(workspace_a, bob, alice):
    issued = _issue(workspace_a, bob, scopes=["read", "write"])

    change = membership.workspace_member_change(
        workspace=workspace_a, user=bob, role="admin", actor=alice
    )

    assert change.tokens == []
    issued.token.refresh_from_db()
    assert issued.token.scopes == ["read", "write"]
    assert services.api_token_authenticate(issued.clear).scopes == ["read", "write"]


def test_a_change_within_the_grants_bound_says_nothing(workspace_a, dana, alice):
    _issue(workspace_a, dana, scopes=["read"])

    change = membership.workspace_member_change(
        workspace=workspace_a, user=dana, role="editor", actor=alice
    )

    assert change.tokens == []


def test_the_listing_says_what_each_token_may_do_now(workspace_a, dana, alice):
    issued = _issue(workspace_a, dana)
    operators = services.api_token_create(workspace=workspace_a, name="ops", scopes=ALL)
    membership.workspace_member_change(workspace=workspace_a, user=dana, role="editor", actor=alice)
    tokens = list(ApiToken.objects.filter(workspace=workspace_a).select_related("created_by"))

    effective_scopes(tokens, workspace=workspace_a)

    by_pk = {t.pk: t for t in tokens}
    assert by_pk[issued.token.pk].effective_scopes == ["read", "write", "publish", "mcp"]
    assert by_pk[operators.token.pk].effective_scopes == ALL


def test_removal_revokes_every_token_of_the_person_there(workspace_a, dana, alice):
    issued = _issue(workspace_a, dana)

    changes = membership.workspace_member_remove(workspace=workspace_a, user=dana, removed_by=alice)

    assert [c.token_id for c in changes] == [issued.token.pk] and changes[0].revoked
    issued.token.refresh_from_db()
    assert issued.token.revoked_at is not None
    event = AuditEvent.objects.get(action="member.removed")
    assert event.metadata["tokens_revoked"] == [issued.token.pk]


def test_an_organization_demotion_narrows_tokens_in_each_workspace(org_a, workspace_a, alice):
    other = WorkspaceFactory(organization=org_a, name="Workspace C", slug="ws-c")
    erin = UserFactory(email="erin@example.com")
    membership.organization_member_set(organization=org_a, user=erin, role="admin")
    membership.workspace_member_set(workspace=other, user=erin, role="editor")
    in_a, in_c = _issue(workspace_a, erin), _issue(other, erin)

    change = membership.organization_role_change(
        organization=org_a, user=erin, role="member", changed_by=alice
    )

    # No role left in A (revoked); an editor in C (narrowed to an editor's scopes).
    by_token = {c.token_id: c for c in change.tokens}
    assert by_token[in_a.token.pk].revoked
    assert by_token[in_c.token.pk].after == ("read", "write", "publish", "mcp")
    assert services.api_token_authenticate(in_a.clear) is None
    assert services.api_token_authenticate(in_c.clear).scopes == ["read", "write", "publish", "mcp"]


def test_leaving_the_organization_revokes_tokens_everywhere_in_it(org_a, workspace_a, dana, alice):
    issued = _issue(workspace_a, dana)

    changes = membership.organization_member_remove(organization=org_a, user=dana, removed_by=alice)

    assert [c.token_id for c in changes] == [issued.token.pk]
    issued.token.refresh_from_db()
    assert issued.token.revoked_at is not None
