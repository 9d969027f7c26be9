import pytest

from apps.accounts.models import OrganizationMembership
from apps.accounts.permissions import Action, can, workspace_role, workspaces_for
from tests.factories import OrganizationMembershipFactory, UserFactory


def test_organization_owner_administers_every_workspace(alice, workspace_a):
    assert workspace_role(alice, workspace_a) == "admin"
    assert all(can(alice, workspace_a, action) for action in Action)


@pytest.mark.parametrize(
    ("action", "allowed"),
    [(Action.VIEW, True), (Action.EDIT, True), (Action.PUBLISH, True), (Action.ADMIN, False)],
)
def test_editor_rights(bob, workspace_a, action, allowed):
    assert can(bob, workspace_a, action) is allowed


@pytest.mark.parametrize(
    ("action", "allowed"),
    [(Action.VIEW, True), (Action.EDIT, False), (Action.PUBLISH, False), (Action.ADMIN, False)],
)
def test_viewer_rights(vera, workspace_a, action, allowed):
    assert can(vera, workspace_a, action) is allowed


def test_organization_admin_is_workspace_admin(org_a, workspace_a):
    admin = UserFactory()
    OrganizationMembershipFactory(
        organization=org_a, user=admin, role=OrganizationMembership.Role.ADMIN
    )
    assert workspace_role(admin, workspace_a) == "admin"


def test_plain_organization_member_has_no_workspace_access(org_a, workspace_a):
    member = UserFactory()
    OrganizationMembershipFactory(organization=org_a, user=member)
    assert workspace_role(member, workspace_a) is None
    assert not can(member, workspace_a, Action.VIEW)


def test_an_outsider_has_no_role(charlie, workspace_a, workspace_b):
    assert workspace_role(charlie, workspace_a) is None
    assert list(workspaces_for(charlie)) == [workspace_b]


def test_workspaces_for_lists_direct_and_organization_workspaces(alice, bob, workspace_a):
    assert list(workspaces_for(alice)) == [workspace_a]
    assert list(workspaces_for(bob)) == [workspace_a]


def test_an_inactive_user_has_no_role(bob, workspace_a):
    bob.is_active = False
    bob.save()
    assert workspace_role(bob, workspace_a) is None
