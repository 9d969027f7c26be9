"""The organization's security log page: its owners and admins only, its own events
only (and its members' sign-ins), paged and filtered."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from apps.accounts.models import OrganizationMembership
from apps.audit import actions
from apps.audit.context import Actor
from apps.audit.models import AuditEvent
from apps.audit.services import audit_prune, audit_record
from apps.common.acting import acting_as

pytestmark = pytest.mark.django_db

URL = "/o/org-a/security-log/"


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def as_alice(alice, org_a, workspace_a):
    return client_for(alice)


def test_the_organization_page_links_to_the_log_for_admins(as_alice):
    assert URL in as_alice.get("/o/org-a/").content.decode()


def test_a_plain_member_cannot_see_the_log(org_a, bob, workspace_a):
    OrganizationMembership.objects.create(organization=org_a, user=bob)
    client = client_for(bob)
    assert client.get(URL).status_code == 403
    assert URL not in client.get("/o/org-a/").content.decode()


def test_an_outsider_gets_a_404(charlie, org_a, org_b):
    assert client_for(charlie).get(URL).status_code == 404


def test_an_org_admin_sees_the_log(org_a, bob, workspace_a):
    OrganizationMembership.objects.create(organization=org_a, user=bob, role="admin")
    assert client_for(bob).get(URL).status_code == 200


def test_other_organizations_events_never_show(as_alice, alice, charlie, org_a, workspace_b):
    with acting_as(user=alice):
        audit_record(action=actions.TOKEN_CREATED, organization=org_a, target_label="ours-token")
    with acting_as(user=charlie):
        audit_record(action=actions.TOKEN_CREATED, workspace=workspace_b, target_label="theirs")
    # charlie's sign-in belongs to no organization, and charlie is not a member of org A.
    audit_record(
        action=actions.LOGIN,
        target_type="user",
        target_id=charlie.pk,
        target_label=charlie.email,
        actor=Actor(user=charlie),
    )
    page = as_alice.get(URL).content.decode()
    assert "ours-token" in page
    assert "theirs" not in page
    assert "charlie@example.com" not in page


def test_members_sign_ins_show_but_not_after_they_leave(as_alice, alice, org_a, bob):
    membership = OrganizationMembership.objects.create(organization=org_a, user=bob)
    Client().post("/login/", {"username": bob.email, "password": "wrong"})
    page = as_alice.get(URL).content.decode()
    assert "Failed sign-in" in page and "bob@example.com" in page
    membership.delete()
    assert "bob@example.com" not in as_alice.get(URL + "?action=user.login_failed").content.decode()


def test_the_log_filters_by_action_and_person(as_alice, alice, org_a, bob):
    OrganizationMembership.objects.create(organization=org_a, user=bob)
    with acting_as(user=alice):
        audit_record(action=actions.TOKEN_CREATED, organization=org_a, target_label="t-alice")
    with acting_as(user=bob):
        audit_record(action=actions.TOKEN_REVOKED, organization=org_a, target_label="t-bob")
    by_action = as_alice.get(URL, {"action": actions.TOKEN_REVOKED}).content.decode()
    assert "t-bob" in by_action and "t-alice" not in by_action
    by_person = as_alice.get(URL, {"person": alice.pk}).content.decode()
    assert "t-alice" in by_person and "t-bob" not in by_person


def test_an_unknown_filter_is_a_form_error(as_alice):
    response = as_alice.get(URL, {"action": "drop.tables"})
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()


def test_the_log_is_paged_newest_first(as_alice, org_a):
    AuditEvent.objects.bulk_create(
        AuditEvent(organization=org_a, action=actions.TOKEN_CREATED, target_label=f"tok-{i:03}")
        for i in range(60)
    )
    first = as_alice.get(URL).content.decode()
    assert "tok-059" in first and "tok-009" not in first
    assert "Page 1 of 2" in first
    second = as_alice.get(URL, {"page": 2}).content.decode()
    assert "tok-009" in second and "tok-059" not in second


def test_the_admin_lists_events_and_allows_no_edits(admin_client, org_a):
    event = audit_record(action=actions.TOKEN_CREATED, organization=org_a, target_label="tok")
    assert admin_client.get("/admin/audit/auditevent/").status_code == 200
    detail = admin_client.get(f"/admin/audit/auditevent/{event.pk}/change/")
    assert detail.status_code == 200
    assert 'name="_save"' not in detail.content.decode()
    assert admin_client.get("/admin/audit/auditevent/add/").status_code == 403
    assert admin_client.post(f"/admin/audit/auditevent/{event.pk}/delete/").status_code == 403
    assert AuditEvent.objects.filter(pk=event.pk).exists()


def test_pruning_forgets_events_past_the_retention(settings, org_a):
    settings.AUDIT_RETENTION_DAYS = 400
    old = audit_record(action=actions.TOKEN_CREATED, organization=org_a)
    recent = audit_record(action=actions.TOKEN_CREATED, organization=org_a)
    AuditEvent.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=401))
    AuditEvent.objects.filter(pk=recent.pk).update(created_at=timezone.now() - timedelta(days=399))
    assert audit_prune() == 1
    assert list(AuditEvent.objects.values_list("pk", flat=True)) == [recent.pk]


def test_the_prune_job_is_registered_as_periodic():
    from apps.jobs.registry import get_job_type

    assert get_job_type("audit.prune").is_periodic
