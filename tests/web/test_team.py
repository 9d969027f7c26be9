"""Organizations and teams: creating them, usage against the plan, inviting by email
(pending until the verified owner of the address accepts the emailed link), resending and
revoking, roles, removal, the seat and owner guards, and who sees the organization page."""

import re
from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.test import Client
from django.utils import timezone

from apps.accounts.models import (
    Invitation,
    Organization,
    OrganizationMembership,
    User,
    Workspace,
    WorkspaceMembership,
)
from tests.factories import PublicationFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_a_new_user_creates_an_organization_and_its_first_workspace(client):
    user = UserFactory(email="new@example.com", display_timezone="Europe/Warsaw")
    client.force_login(user)
    assert "Create an organization" in client.get("/").content.decode()  # nothing to open
    response = client.post(
        "/o/new/",
        {
            "organization_name": "Acme",
            "workspace_name": "Social",
            "default_timezone": "Europe/Warsaw",
        },
    )
    workspace = Workspace.objects.get(name="Social")
    assert response["Location"] == f"/w/{workspace.slug}/accounts/"
    assert workspace.default_timezone == "Europe/Warsaw"
    assert OrganizationMembership.objects.get(user=user).role == "owner"
    assert client.get("/").url == f"/w/{workspace.slug}/"


def test_an_unverified_user_cannot_create_an_organization(client):
    client.force_login(UserFactory(email="new@example.com", email_verified_at=None))
    for response in (
        client.get("/o/new/"),
        client.post(
            "/o/new/",
            {"organization_name": "Acme", "workspace_name": "S", "default_timezone": "UTC"},
        ),
    ):
        assert response["Location"] == "/verify-email/"
    assert not Organization.objects.filter(name="Acme").exists()
    assert client.get("/").url == "/verify-email/"


def test_organization_create_explains_missing_fields(as_alice):
    response = as_alice.post("/o/new/", {"organization_name": "", "workspace_name": "x"})
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()


def test_an_owner_adds_a_workspace(as_alice, org_a, workspace_a):
    response = as_alice.post(
        "/o/org-a/workspaces/new/",
        {"name": "Clients", "slug": "clients", "default_timezone": "UTC"},
    )
    assert response["Location"] == "/w/clients/"
    assert Workspace.objects.get(slug="clients").organization == org_a
    taken = as_alice.post(
        "/o/org-a/workspaces/new/", {"name": "Again", "slug": "ws-a", "default_timezone": "UTC"}
    )
    assert taken.status_code == 400
    assert "already exists" in taken.content.decode()


def test_the_organization_page_shows_usage_against_the_plan(as_alice, org_a, workspace_a):
    Organization.objects.filter(pk=org_a.pk).update(monthly_post_quota=50, seats=5)
    for _ in range(3):
        PublicationFactory(workspace=workspace_a)
    old = PublicationFactory(workspace=workspace_a)
    type(old).objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=40))
    page = as_alice.get("/o/org-a/").content.decode()
    assert '<p class="stat">3 <span class="muted small">of 50</span></p>' in page
    assert '<meter min="0" max="50"' in page
    assert "47 left this month" in page
    assert '<p class="stat">3 <span class="muted small">of 5</span></p>' in page  # alice, bob, vera
    assert "Workspace A" in page


def invite_path(message) -> str:
    return re.search(r"https?://[^/\s]+(/invitations/[^/\s]+/)", message.body).group(1)


@pytest.fixture
def invited(as_alice, workspace_a, django_capture_on_commit_callbacks):
    """alice invites newbie@example.com to workspace A as viewer; returns the link's path."""
    with django_capture_on_commit_callbacks(execute=True):
        response = as_alice.post(
            "/w/ws-a/team/invite/", {"email": "Newbie@Example.com", "role": "viewer"}, follow=True
        )
    page = response.content.decode()
    assert "Invited newbie@example.com as viewer" in page
    assert "Invitations waiting" in page
    [message] = mail.outbox
    assert message.to == ["newbie@example.com"]
    return invite_path(message)


def test_an_invitation_is_pending_and_grants_nothing(invited, workspace_a):
    assert not User.objects.filter(email="newbie@example.com").exists()
    assert not WorkspaceMembership.objects.filter(user__email="newbie@example.com").exists()
    assert Invitation.objects.get().status == "pending"


def test_a_new_person_signs_up_through_the_link_and_joins_the_workspace_only(
    invited, client, workspace_a, org_a
):
    page = client.get(invited).content.decode()
    assert "Join Workspace A" in page
    assert 'value="newbie@example.com" readonly' in page

    response = client.post(
        invited,
        {"name": "Newbie", "password": "a fresh long passphrase", "display_timezone": "UTC"},
    )

    assert response["Location"] == "/w/ws-a/"
    newbie = User.objects.get(email="newbie@example.com")
    assert newbie.is_email_verified  # the link reached the mailbox
    assert WorkspaceMembership.objects.get(user=newbie, workspace=workspace_a).role == "viewer"
    assert not OrganizationMembership.objects.filter(user=newbie, organization=org_a).exists()
    assert client.get("/w/ws-a/").status_code == 200


def test_an_invitation_link_used_twice_fails(invited, client, workspace_a):
    client.post(
        invited,
        {"name": "Newbie", "password": "a fresh long passphrase", "display_timezone": "UTC"},
    )
    for again in (client.get(invited), client.post(invited)):
        assert again.status_code == 410
        assert "has been used" in again.content.decode()
    other = Client()
    used = other.post(
        invited, {"name": "Mallory", "password": "another passphrase 42", "display_timezone": "UTC"}
    )
    assert used.status_code == 410
    assert (
        WorkspaceMembership.objects.filter(workspace=workspace_a).count() == 3
    )  # bob, vera, newbie


def test_an_existing_person_logs_in_to_accept(
    as_alice, charlie, client, workspace_a, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        as_alice.post("/w/ws-a/team/invite/", {"email": "charlie@example.com", "role": "editor"})
    link = invite_path(mail.outbox[0])
    assert not WorkspaceMembership.objects.filter(user=charlie, workspace=workspace_a).exists()

    page = client.get(link).content.decode()
    assert "Log in as charlie@example.com" in page
    assert "/password-reset/" in page
    client.force_login(charlie)
    assert "Accept the invitation" in client.get(link).content.decode()
    response = client.post(link)
    assert response["Location"] == "/w/ws-a/"
    assert WorkspaceMembership.objects.get(user=charlie, workspace=workspace_a).role == "editor"


def test_an_unverified_account_with_the_address_cannot_accept(invited, client, workspace_a):
    squatter = UserFactory(email="newbie@example.com", email_verified_at=None)
    client.force_login(squatter)

    for response in (client.get(invited), client.post(invited)):
        assert response.status_code == 403
        assert "Confirm that newbie@example.com is yours first" in response.content.decode()
    assert not WorkspaceMembership.objects.filter(user=squatter).exists()
    assert Invitation.objects.get().accepted_at is None


def test_someone_signed_in_with_another_address_cannot_accept(invited, as_charlie, charlie):
    response = as_charlie.post(invited)
    assert response.status_code == 403
    assert "This invitation is for newbie@example.com" in response.content.decode()
    assert not WorkspaceMembership.objects.filter(user=charlie, workspace__slug="ws-a").exists()


def test_an_expired_invitation_is_refused_with_a_clear_message(invited, client, alice):
    with time_machine.travel(timezone.now() + timedelta(days=8)):
        response = client.get(invited)
        page = response.content.decode()
    assert response.status_code == 410
    assert "This invitation expired on" in page
    assert f"Ask {alice.name} to send a new one." in page


def test_an_unknown_link_is_explained(client, workspace_a):
    response = client.get("/invitations/not-a-real-token/")
    assert response.status_code == 404
    assert "This invitation link does not work" in response.content.decode()


def test_invitations_are_resent_and_revoked_from_the_team_page(
    invited, as_alice, client, django_capture_on_commit_callbacks
):
    invitation = Invitation.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        response = as_alice.post(f"/w/ws-a/team/invitations/{invitation.pk}/resend/", follow=True)
    assert "Sent newbie@example.com a new link" in response.content.decode()
    fresh = invite_path(mail.outbox[-1])
    assert fresh != invited
    assert client.get(invited).status_code == 404  # the old link is dead

    response = as_alice.post(f"/w/ws-a/team/invitations/{invitation.pk}/revoke/", follow=True)
    assert "Withdrew the invitation of newbie@example.com" in response.content.decode()
    assert "Invitations waiting" not in response.content.decode()
    gone = client.get(fresh)
    assert gone.status_code == 410
    assert "withdrawn" in gone.content.decode()


def test_waiting_invitations_are_listed_with_their_actions_on_both_pages(invited, as_alice):
    """The workspace's team page and the organization's page share one list: each with its
    own Resend and Revoke addresses, the organization's also saying where it leads."""
    invitation = Invitation.objects.get()
    team = as_alice.get("/w/ws-a/team/").content.decode()
    org = as_alice.get("/o/org-a/").content.decode()
    for page, base in ((team, "/w/ws-a/team/invitations/"), (org, "/o/org-a/invitations/")):
        assert "Invitations waiting" in page and invitation.email in page
        assert f'action="{base}{invitation.pk}/resend/"' in page
        assert f'action="{base}{invitation.pk}/revoke/"' in page
    assert '<th scope="col">To</th>' in org and '<th scope="col">To</th>' not in team


def test_invitations_are_managed_by_admins_only(invited, as_bob, as_charlie):
    invitation = Invitation.objects.get()
    assert as_bob.post(f"/w/ws-a/team/invitations/{invitation.pk}/revoke/").status_code == 403
    assert as_charlie.post(f"/w/ws-a/team/invitations/{invitation.pk}/revoke/").status_code == 404
    assert Invitation.objects.get().revoked_at is None


def test_an_organization_owner_adds_an_organization_member_at_once(
    as_alice, org_a, workspace_a, django_capture_on_commit_callbacks
):
    colleague = UserFactory(email="colleague@example.com")
    OrganizationMembership.objects.create(organization=org_a, user=colleague, role="member")
    with django_capture_on_commit_callbacks(execute=True):
        response = as_alice.post(
            "/w/ws-a/team/invite/",
            {"email": "colleague@example.com", "role": "editor"},
            follow=True,
        )
    assert "Added colleague@example.com as editor" in response.content.decode()
    assert WorkspaceMembership.objects.get(user=colleague, workspace=workspace_a).role == "editor"
    [message] = mail.outbox
    assert "/w/ws-a/" in message.body
    assert "/invitations/" not in message.body


def test_an_invitation_needs_a_free_seat(as_alice, org_a, workspace_a):
    Organization.objects.filter(pk=org_a.pk).update(seats=3)  # alice, bob and vera
    response = as_alice.post("/w/ws-a/team/invite/", {"email": "x@example.com", "role": "editor"})
    assert response.status_code == 400
    assert "All 3 seats of Org A are taken." in response.content.decode()
    assert not Invitation.objects.exists()


def test_an_invitation_with_a_bad_email_is_explained(as_alice, workspace_a):
    response = as_alice.post("/w/ws-a/team/invite/", {"email": "not-an-email", "role": "editor"})
    assert response.status_code == 400
    assert "Enter a valid email address." in response.content.decode()


def test_workspace_roles_change_and_members_are_removed(as_alice, bob, org_a, workspace_a):
    OrganizationMembership.objects.create(organization=org_a, user=bob, role="member")
    as_alice.post(f"/w/ws-a/team/{bob.pk}/role/", {"role": "viewer"})
    assert WorkspaceMembership.objects.get(user=bob, workspace=workspace_a).role == "viewer"
    as_alice.post(f"/w/ws-a/team/{bob.pk}/remove/")
    assert not WorkspaceMembership.objects.filter(user=bob, workspace=workspace_a).exists()


def test_the_team_page_lists_roles(as_vera, workspace_a):
    page = as_vera.get("/w/ws-a/team/").content.decode()
    assert "alice@example.com" in page
    assert "as organization owner" in page
    assert "bob@example.com" in page
    assert "Invite by email" not in page  # viewers read only


def test_an_organization_invitation_makes_a_member_once_accepted(
    as_alice, bob, org_a, workspace_a, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = as_alice.post(
            "/o/org-a/invite/", {"email": "bob@example.com", "role": "admin"}, follow=True
        )
    assert "Invited bob@example.com as admin" in response.content.decode()
    assert not OrganizationMembership.objects.filter(user=bob).exists()
    client = Client()
    client.force_login(bob)
    response = client.post(invite_path(mail.outbox[0]))
    assert response["Location"] == "/o/org-a/"
    assert OrganizationMembership.objects.get(user=bob).role == "admin"


def test_organization_roles_keep_an_owner(as_alice, alice, bob, org_a, workspace_a):
    OrganizationMembership.objects.create(organization=org_a, user=bob, role="admin")

    response = as_alice.post(f"/o/org-a/members/{alice.pk}/role/", {"role": "member"}, follow=True)
    assert "keeps at least one owner" in response.content.decode()
    assert OrganizationMembership.objects.get(user=alice).role == "owner"

    response = as_alice.post(f"/o/org-a/members/{alice.pk}/remove/", follow=True)
    assert "keeps at least one owner" in response.content.decode()


def test_only_an_owner_grants_ownership(client, bob, org_a, workspace_a):
    OrganizationMembership.objects.create(organization=org_a, user=bob, role="admin")
    client.force_login(bob)
    response = client.post(f"/o/org-a/members/{bob.pk}/role/", {"role": "owner"}, follow=True)
    assert "Only an owner can" in response.content.decode()
    assert OrganizationMembership.objects.get(user=bob).role == "admin"


def test_removing_from_the_organization_removes_from_its_workspaces(
    as_alice, bob, org_a, workspace_a
):
    OrganizationMembership.objects.create(organization=org_a, user=bob, role="member")
    as_alice.post(f"/o/org-a/members/{bob.pk}/remove/")
    assert not OrganizationMembership.objects.filter(user=bob).exists()
    assert not WorkspaceMembership.objects.filter(user=bob).exists()


def test_plain_members_cannot_open_the_organization_page(client, bob, org_a):
    OrganizationMembership.objects.create(organization=org_a, user=bob, role="member")
    client.force_login(bob)
    response = client.get("/o/org-a/")
    assert response.status_code == 403
    assert "Usage this month" not in response.content.decode()
    assert "alice@example.com" not in response.content.decode()
    assert client.post("/o/org-a/invite/", {"email": "y@example.com"}).status_code == 403
    assert client.get("/o/org-a/workspaces/new/").status_code == 403
    assert 'href="/o/org-a/"' not in client.get("/settings/").content.decode()


def test_a_workspace_member_cannot_open_the_organization_page(as_bob, workspace_a):
    """bob was invited to workspace A only: the organization's page, its other workspaces,
    members and usage are not his to see."""
    response = as_bob.get("/o/org-a/")
    assert response.status_code == 404
    assert "alice@example.com" not in response.content.decode()
    team = as_bob.get("/w/ws-a/team/").content.decode()
    assert 'href="/o/org-a/"' not in team


def test_the_organization_page_lists_workspace_only_people_and_invitations(
    as_alice, invited, workspace_a
):
    page = as_alice.get("/o/org-a/").content.decode()
    assert "People with workspace access only" in page
    assert "bob@example.com" in page and "vera@example.com" in page
    assert "newbie@example.com" in page  # waiting
    assert "1 of them reserved by invitations waiting" in page


def test_removing_a_workspace_only_person_from_the_organization(as_alice, bob, workspace_a):
    as_alice.post(f"/o/org-a/members/{bob.pk}/remove/")
    assert not WorkspaceMembership.objects.filter(user=bob).exists()
