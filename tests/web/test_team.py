"""Organizations and teams: creating them, usage against the plan, inviting by email
(new people get a set-password link), roles, removal, and the seat and owner guards."""

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from apps.accounts.models import (
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
    assert '<p class="stat">1 <span class="muted small">of 5</span></p>' in page  # alice
    assert "Workspace A" in page


def invite_link(message) -> str:
    return re.search(r"https?://[^/\s]+(/reset/\S+/)", message.body).group(1)


def test_inviting_a_new_person_creates_them_and_mails_a_set_password_link(
    as_alice, client, workspace_a, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = as_alice.post(
            "/w/ws-a/team/invite/", {"email": "Newbie@Example.com", "role": "viewer"}, follow=True
        )
    assert "Invited newbie@example.com" in response.content.decode()
    newbie = User.objects.get(email="newbie@example.com")
    assert not newbie.has_usable_password()
    assert WorkspaceMembership.objects.get(user=newbie, workspace=workspace_a).role == "viewer"
    assert OrganizationMembership.objects.get(user=newbie).role == "member"

    [message] = mail.outbox
    assert message.to == ["newbie@example.com"]
    assert "Workspace A" in message.subject
    link = invite_link(message)
    form = client.get(link, follow=True)
    assert "Choose a password" in form.content.decode()
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "a fresh long passphrase", "new_password2": "a fresh long passphrase"},
    )
    assert done["Location"] == "/reset/done/"
    assert client.login(username="newbie@example.com", password="a fresh long passphrase")


def test_inviting_an_existing_person_adds_them_and_tells_them(
    as_alice, charlie, workspace_a, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        as_alice.post("/w/ws-a/team/invite/", {"email": "charlie@example.com", "role": "editor"})
    assert WorkspaceMembership.objects.get(user=charlie, workspace=workspace_a).role == "editor"
    [message] = mail.outbox
    assert "/login/" in message.body
    assert "/reset/" not in message.body


def test_an_invitation_needs_a_free_seat(as_alice, org_a, workspace_a):
    Organization.objects.filter(pk=org_a.pk).update(seats=1)
    response = as_alice.post("/w/ws-a/team/invite/", {"email": "x@example.com", "role": "editor"})
    assert response.status_code == 400
    assert "All 1 seats of Org A are taken." in response.content.decode()
    assert not User.objects.filter(email="x@example.com").exists()


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


def test_organization_roles_keep_an_owner(as_alice, alice, bob, org_a, workspace_a):
    as_alice.post("/o/org-a/invite/", {"email": "bob@example.com", "role": "admin"})
    assert OrganizationMembership.objects.get(user=bob).role == "admin"

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


def test_plain_members_see_the_organization_but_cannot_manage_it(client, bob, org_a):
    OrganizationMembership.objects.create(organization=org_a, user=bob, role="member")
    client.force_login(bob)
    page = client.get("/o/org-a/").content.decode()
    assert "Usage this month" in page
    assert "Invite someone" not in page
    assert client.post("/o/org-a/invite/", {"email": "y@example.com"}).status_code == 403
    assert client.get("/o/org-a/workspaces/new/").status_code == 403
