"""Invitations: pending until the verified owner of the address accepts them through the
single-use emailed link; resent, revoked, expired; seats reserved; events emitted."""

import re
from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from apps.accounts import invitations
from apps.accounts.models import (
    Invitation,
    Organization,
    OrganizationMembership,
    User,
    WorkspaceMembership,
)
from apps.common import events
from apps.common.errors import Conflict, PermissionDenied, QuotaExceeded, ValidationFailed
from tests.factories import OrganizationMembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def token_of(message) -> str:
    return re.search(r"/invitations/([^/\s]+)/", message.body).group(1)


@pytest.fixture
def invite(alice, workspace_a, django_capture_on_commit_callbacks):
    """Invite an address to workspace A as alice; returns (invitation, clear token)."""

    def make(email="newbie@example.com", role="editor", workspace=workspace_a, **kwargs):
        before = len(mail.outbox)
        with django_capture_on_commit_callbacks(execute=True):
            outcome = invitations.invitation_create(
                organization=workspace_a.organization,
                email=email,
                role=role,
                invited_by=kwargs.pop("by", alice),
                workspace=workspace,
            )
        assert len(mail.outbox) == before + 1
        return outcome.invitation, token_of(mail.outbox[-1])

    return make


@pytest.fixture
def recorded(monkeypatch):
    """Every event emitted while the test runs, as (name, payload); still delivered (and
    its payload checked) by the real emit."""
    seen: list[tuple[str, dict]] = []
    real = events.emit

    def emit(name, **payload):
        seen.append((name, payload))
        real(name, **payload)

    monkeypatch.setattr(events, "emit", emit)
    return seen


def test_inviting_grants_nothing_and_emails_a_single_link_from_site_url(
    invite, workspace_a, settings
):
    invitation, clear = invite("Newbie@Example.com", role="viewer")

    assert invitation.email == "newbie@example.com"
    assert invitation.status == "pending"
    assert invitation.token_hash == Invitation.hash_token(clear)
    assert clear not in invitation.token_hash
    assert not User.objects.filter(email="newbie@example.com").exists()
    [message] = mail.outbox
    assert message.to == ["newbie@example.com"]
    assert f"{settings.SITE_URL.rstrip('/')}/invitations/{clear}/" in message.body
    assert "Workspace A" in message.subject


def test_a_verified_user_with_the_address_accepts_once(invite, workspace_a, org_a):
    invitation, clear = invite(role="viewer")
    newbie = UserFactory(email="newbie@example.com")

    accepted = invitations.invitation_accept(
        invitation=invitations.invitation_for_token(clear), user=newbie
    )

    assert accepted.accepted_at is not None and accepted.accepted_by == newbie
    assert WorkspaceMembership.objects.get(workspace=workspace_a, user=newbie).role == "viewer"
    # A workspace invitation gives that workspace only, not the organization.
    assert not OrganizationMembership.objects.filter(organization=org_a, user=newbie).exists()
    with pytest.raises(Conflict) as again:
        invitations.invitation_accept(invitation=invitation, user=newbie)
    assert again.value.code == "INVITATION_USED"


def test_an_unverified_account_with_the_address_cannot_accept(invite, workspace_a):
    invitation, _ = invite()
    squatter = UserFactory(email="newbie@example.com", email_verified_at=None)

    with pytest.raises(PermissionDenied) as refused:
        invitations.invitation_accept(invitation=invitation, user=squatter)

    assert refused.value.code == "EMAIL_NOT_VERIFIED"
    assert not WorkspaceMembership.objects.filter(user=squatter).exists()
    invitation.refresh_from_db()
    assert invitation.accepted_at is None


def test_someone_with_another_address_cannot_accept(invite, charlie):
    invitation, _ = invite()

    with pytest.raises(PermissionDenied) as refused:
        invitations.invitation_accept(invitation=invitation, user=charlie)

    assert refused.value.code == "INVITATION_OTHER_EMAIL"
    assert not WorkspaceMembership.objects.filter(user=charlie).exists()


def test_an_expired_invitation_is_refused_then_resent_with_a_new_link(invite, alice):
    invitation, old = invite()
    newbie = UserFactory(email="newbie@example.com")

    with time_machine.travel(timezone.now() + timedelta(days=8)):
        with pytest.raises(Conflict) as refused:  # noqa: SIM117 - the travel spans more
            invitations.invitation_accept(invitation=invitation, user=newbie)
        assert refused.value.code == "INVITATION_EXPIRED"
        assert "Ask" in refused.value.message

        invitations.invitation_resend(invitation=invitation, by=alice)
        assert invitations.invitation_for_token(old) is None  # the old link is dead
        invitation.refresh_from_db()
        assert invitation.status == "pending"
        invitations.invitation_accept(invitation=invitation, user=newbie)
    assert WorkspaceMembership.objects.filter(user=newbie).exists()


def test_a_revoked_invitation_cannot_be_accepted(invite, alice):
    invitation, _ = invite()
    invitations.invitation_revoke(invitation=invitation, by=alice)
    newbie = UserFactory(email="newbie@example.com")

    with pytest.raises(Conflict) as refused:
        invitations.invitation_accept(invitation=invitation, user=newbie)

    assert refused.value.code == "INVITATION_REVOKED"
    assert not WorkspaceMembership.objects.filter(user=newbie).exists()


def test_inviting_the_same_address_again_renews_the_open_invitation(invite):
    first, old = invite(role="viewer")
    second, new = invite(role="editor")

    assert first.pk == second.pk
    assert Invitation.objects.open().count() == 1
    second.refresh_from_db()
    assert second.role == "editor"
    assert invitations.invitation_for_token(old) is None
    assert invitations.invitation_for_token(new) == second


def test_an_invitation_reserves_a_seat(invite, org_a, alice, workspace_a):
    # alice, bob and vera hold seats; one left.
    Organization.objects.filter(pk=org_a.pk).update(seats=4)
    invite("one@example.com")

    with pytest.raises(QuotaExceeded) as refused:
        invitations.invitation_create(
            organization=org_a,
            email="two@example.com",
            role="editor",
            invited_by=alice,
            workspace=workspace_a,
        )

    assert refused.value.code == "SEATS_EXHAUSTED"
    assert "pending invitations" in refused.value.message
    assert not Invitation.objects.filter(email="two@example.com").exists()


def test_accepting_needs_a_free_seat_when_the_plan_shrank(invite, org_a):
    invitation, _ = invite()
    Organization.objects.filter(pk=org_a.pk).update(seats=3)  # alice, bob, vera
    newbie = UserFactory(email="newbie@example.com")

    with pytest.raises(QuotaExceeded):
        invitations.invitation_accept(invitation=invitation, user=newbie)

    assert not WorkspaceMembership.objects.filter(user=newbie).exists()


def test_an_organization_invitation_gives_the_organization_role(invite, org_a):
    invitation, _ = invite("lead@example.com", role="admin", workspace=None)
    lead = UserFactory(email="lead@example.com")

    invitations.invitation_accept(invitation=invitation, user=lead)

    assert OrganizationMembership.objects.get(organization=org_a, user=lead).role == "admin"


def test_only_an_owner_offers_ownership(org_a, bob):
    OrganizationMembershipFactory(organization=org_a, user=bob, role="admin")

    with pytest.raises(PermissionDenied):
        invitations.invitation_create(
            organization=org_a, email="x@example.com", role="owner", invited_by=bob
        )


def test_a_role_of_the_wrong_kind_is_refused(org_a, alice, workspace_a):
    with pytest.raises(ValidationFailed):
        invitations.invitation_create(
            organization=org_a,
            email="x@example.com",
            role="owner",
            invited_by=alice,
            workspace=workspace_a,
        )


def test_current_members_are_not_invited_again(org_a, alice, bob, workspace_a):
    with pytest.raises(Conflict) as in_workspace:
        invitations.invitation_create(
            organization=org_a,
            email="bob@example.com",
            role="viewer",
            invited_by=alice,
            workspace=workspace_a,
        )
    assert in_workspace.value.code == "ALREADY_MEMBER"
    with pytest.raises(Conflict):
        invitations.invitation_create(
            organization=org_a, email="alice@example.com", role="member", invited_by=alice
        )


def test_an_organization_manager_adds_a_verified_organization_member_at_once(
    org_a, alice, workspace_a, django_capture_on_commit_callbacks
):
    colleague = UserFactory(email="colleague@example.com")
    OrganizationMembershipFactory(organization=org_a, user=colleague, role="member")

    with django_capture_on_commit_callbacks(execute=True):
        outcome = invitations.invitation_create(
            organization=org_a,
            email="colleague@example.com",
            role="editor",
            invited_by=alice,
            workspace=workspace_a,
        )

    assert outcome.invitation is None
    assert WorkspaceMembership.objects.get(workspace=workspace_a, user=colleague).role == "editor"
    [message] = mail.outbox
    assert "/w/ws-a/" in message.body


def test_a_workspace_admin_invites_even_an_organization_member(org_a, workspace_a, invite):
    """Only organization owners and admins (who see every member) add people at once."""
    ws_admin = UserFactory(email="wsadmin@example.com")
    WorkspaceMembership.objects.create(workspace=workspace_a, user=ws_admin, role="admin")
    colleague = UserFactory(email="colleague@example.com")
    OrganizationMembershipFactory(organization=org_a, user=colleague, role="member")

    invitation, _ = invite("colleague@example.com", by=ws_admin)

    assert invitation is not None
    assert not WorkspaceMembership.objects.filter(user=colleague).exists()


def test_an_unverified_organization_member_is_invited_not_added(org_a, alice, workspace_a, invite):
    colleague = UserFactory(email="colleague@example.com", email_verified_at=None)
    OrganizationMembershipFactory(organization=org_a, user=colleague, role="member")

    invitation, _ = invite("colleague@example.com")

    assert invitation.status == "pending"
    assert not WorkspaceMembership.objects.filter(user=colleague).exists()


def test_a_suspended_organization_is_joined_by_nobody(invite, org_a):
    invitation, _ = invite()
    Organization.objects.filter(pk=org_a.pk).update(state=Organization.State.SUSPENDED)
    newbie = UserFactory(email="newbie@example.com")

    with pytest.raises(PermissionDenied) as refused:
        invitations.invitation_accept(invitation=invitation, user=newbie)

    assert refused.value.code == "ORGANIZATION_SUSPENDED"


def test_signing_up_through_the_link_verifies_the_address_and_accepts(invite, workspace_a):
    invitation, _ = invite(role="viewer")

    user = invitations.invitation_sign_up(
        invitation=invitation, password="a long fresh passphrase", name="New"
    )

    assert user.email == "newbie@example.com" and user.is_email_verified
    assert WorkspaceMembership.objects.get(user=user, workspace=workspace_a).role == "viewer"
    invitation.refresh_from_db()
    assert invitation.accepted_by == user


def test_signing_up_through_the_link_is_refused_when_the_address_has_an_account(invite):
    invitation, _ = invite()
    UserFactory(email="newbie@example.com", email_verified_at=None)

    with pytest.raises(Conflict) as refused:
        invitations.invitation_sign_up(invitation=invitation, password="a long passphrase")

    assert refused.value.code == "ACCOUNT_EXISTS"


def test_pending_invitations_are_listed_only_for_a_verified_address(invite):
    invitation, _ = invite()
    squatter = UserFactory(email="newbie@example.com", email_verified_at=None)
    assert list(invitations.pending_for(squatter)) == []

    squatter.email_verified_at = timezone.now()
    assert list(invitations.pending_for(squatter)) == [invitation]


def test_the_lifecycle_emits_events(invite, alice, recorded, django_capture_on_commit_callbacks):
    invitation, _ = invite()
    newbie = UserFactory(email="newbie@example.com")
    invitations.invitation_accept(invitation=invitation, user=newbie)
    other, _ = invite("other@example.com")
    invitations.invitation_revoke(invitation=other, by=alice)

    names = [name for name, _ in recorded]
    assert names == [
        events.MEMBER_INVITED,
        events.MEMBER_ADDED,
        events.MEMBER_INVITE_ACCEPTED,
        events.MEMBER_INVITED,
        events.MEMBER_INVITE_REVOKED,
    ]
    assert recorded[0][1] == {"invitation": invitation, "actor": alice, "resent": False}
    assert recorded[1][1]["user"] == newbie and recorded[1][1]["role"] == "editor"
