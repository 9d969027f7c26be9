"""Memberships and seats: one rule for every client. A seat is held by anyone with a role
in the organization or in one of its workspaces."""

import pytest

from apps.accounts.membership import (
    organization_member_set,
    seats,
    workspace_member_remove,
    workspace_member_set,
)
from apps.accounts.models import Organization, OrganizationMembership, WorkspaceMembership
from apps.accounts.services import workspace_create
from apps.common.errors import QuotaExceeded
from tests.factories import UserFactory


def test_a_workspace_member_from_outside_gets_the_workspace_only_and_takes_a_seat(
    org_a, workspace_a
):
    newcomer = UserFactory()
    before = seats(org_a).members

    membership = workspace_member_set(workspace=workspace_a, user=newcomer, role="editor")

    assert membership.role == WorkspaceMembership.Role.EDITOR
    assert not OrganizationMembership.objects.filter(organization=org_a, user=newcomer).exists()
    assert seats(org_a).members == before + 1


def test_a_workspace_member_from_outside_needs_a_free_seat(org_a, workspace_a):
    Organization.objects.filter(pk=org_a.pk).update(seats=seats(org_a).members)
    newcomer = UserFactory()

    with pytest.raises(QuotaExceeded) as refused:
        workspace_member_set(workspace=workspace_a, user=newcomer, role="viewer")

    assert refused.value.code == "SEATS_EXHAUSTED"
    assert not WorkspaceMembership.objects.filter(user=newcomer).exists()
    assert not OrganizationMembership.objects.filter(user=newcomer).exists()


def test_a_person_in_two_workspaces_takes_one_seat(org_a, workspace_a, bob):
    other = workspace_create(organization=org_a, name="Other")
    before = seats(org_a).members

    workspace_member_set(workspace=other, user=bob, role="viewer")

    assert seats(org_a).members == before


def test_leaving_the_last_workspace_frees_the_seat(org_a, workspace_a, bob):
    before = seats(org_a).members

    workspace_member_remove(workspace=workspace_a, user=bob)

    assert seats(org_a).members == before - 1


def test_a_member_of_the_organization_changes_workspace_role_with_every_seat_taken(
    org_a, workspace_a, bob
):
    OrganizationMembership.objects.create(organization=org_a, user=bob, role="member")
    Organization.objects.filter(pk=org_a.pk).update(seats=seats(org_a).members)

    membership = workspace_member_set(workspace=workspace_a, user=bob, role="admin")

    assert membership.role == WorkspaceMembership.Role.ADMIN
    assert WorkspaceMembership.objects.get(workspace=workspace_a, user=bob).role == "admin"


def test_an_organization_member_takes_a_seat_once(org_a, alice):
    Organization.objects.filter(pk=org_a.pk).update(seats=1)  # alice's

    organization_member_set(organization=org_a, user=alice, role="owner")  # already in
    with pytest.raises(QuotaExceeded):
        organization_member_set(organization=org_a, user=UserFactory(), role="member")


def test_a_new_workspace_makes_its_creator_admin(org_a, alice):
    workspace = workspace_create(organization=org_a, name="Launch", admin=alice)

    assert WorkspaceMembership.objects.get(workspace=workspace, user=alice).role == "admin"
