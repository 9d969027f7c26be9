"""Each security action leaves exactly one audit event, attributed to whoever acted: the
signed-in person on the web, the token on the API, nobody on a failed sign-in."""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts import membership, services
from apps.accounts.models import ApiToken, OrganizationMembership, SocialAccount, User
from apps.audit.models import AuditEvent
from apps.common import events
from apps.common.acting import acting_as
from apps.publishing.services import rendition_resolve
from apps.renditions.models import Rendition
from apps.webhooks.endpoints import (
    webhook_endpoint_create,
    webhook_endpoint_delete,
    webhook_endpoint_rotate_secret,
    webhook_endpoint_update,
)
from tests.factories import PublicationFactory, RenditionFactory, UserFactory

pytestmark = pytest.mark.django_db

AGENT = "Mozilla/5.0 (audit test)"


def only(action: str) -> AuditEvent:
    found = list(AuditEvent.objects.filter(action=action))
    assert len(found) == 1, [str(e) for e in found]
    return found[0]


@pytest.fixture
def as_alice(alice, workspace_a):
    client = Client(HTTP_USER_AGENT=AGENT, REMOTE_ADDR="203.0.113.7")
    client.force_login(alice)
    return client


@pytest.fixture
def token_a(workspace_a, alice):
    return services.api_token_create(
        workspace=workspace_a, name="deploy", scopes=["read", "write", "admin"], created_by=alice
    )


@pytest.fixture
def api_as_token(token_a):
    client = APIClient(REMOTE_ADDR="198.51.100.4")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_a.clear}")
    return client


def test_a_sign_in_is_recorded_with_the_address_and_browser(alice):
    alice.set_password("pw-123456789")
    alice.save()
    client = Client(HTTP_USER_AGENT=AGENT, REMOTE_ADDR="203.0.113.9")
    response = client.post("/login/", {"username": alice.email, "password": "pw-123456789"})
    assert response.status_code == 302
    event = only("user.login")
    assert (event.actor_user, event.target_id, event.organization) == (alice, str(alice.pk), None)
    assert (event.ip, event.user_agent) == ("203.0.113.9", AGENT)


def test_a_failed_sign_in_names_the_account_tried_not_an_actor(alice):
    client = Client(REMOTE_ADDR="203.0.113.66")
    response = client.post("/login/", {"username": "ALICE@example.com", "password": "wrong"})
    assert response.status_code == 200
    event = only("user.login_failed")
    assert event.actor_user is None and event.actor_label == ""
    assert (event.target_type, event.target_id) == ("user", str(alice.pk))
    assert event.ip == "203.0.113.66"
    assert "wrong" not in str(event.metadata)


def test_a_failed_sign_in_of_an_unknown_address_is_kept_for_the_operator(db):
    Client().post("/login/", {"username": "nobody@example.com", "password": "x"})
    event = only("user.login_failed")
    assert (event.target_type, event.target_label) == ("", "nobody@example.com")


def test_inviting_records_the_inviter(as_alice, alice, org_a):
    response = as_alice.post("/o/org-a/invite/", {"email": "new@example.com", "role": "member"})
    assert response.status_code == 302
    event = only("member.invited")
    assert (event.organization, event.actor_user, event.target_label) == (
        org_a,
        alice,
        "new@example.com",
    )
    assert event.metadata["role"] == "member"
    assert event.ip == "203.0.113.7"


def test_changing_an_organization_role_records_before_and_after(as_alice, alice, org_a, bob):
    OrganizationMembership.objects.create(organization=org_a, user=bob)
    response = as_alice.post(f"/o/org-a/members/{bob.pk}/role/", {"role": "admin"})
    assert response.status_code == 302
    event = only("member.role_changed")
    assert (event.actor_user, event.target_id, event.workspace) == (alice, str(bob.pk), None)
    assert event.metadata == {"previous": "member", "role": "admin"}


def test_changing_a_workspace_role_is_recorded_once(as_alice, alice, workspace_a, bob):
    response = as_alice.post(f"/w/ws-a/team/{bob.pk}/role/", {"role": "viewer"})
    assert response.status_code == 302
    event = only("member.role_changed")
    assert (event.actor_user, event.workspace, event.organization) == (
        alice,
        workspace_a,
        workspace_a.organization,
    )
    assert event.metadata == {"previous": "editor", "role": "viewer"}


def test_setting_the_same_role_records_nothing(as_alice, bob, workspace_a):
    as_alice.post(f"/w/ws-a/team/{bob.pk}/role/", {"role": "editor"})
    assert not AuditEvent.objects.filter(action="member.role_changed").exists()


def test_removing_members_is_recorded(as_alice, alice, org_a, workspace_a, bob, vera):
    OrganizationMembership.objects.create(organization=org_a, user=bob)
    as_alice.post(f"/w/ws-a/team/{vera.pk}/remove/")
    as_alice.post(f"/o/org-a/members/{bob.pk}/remove/")
    removed = AuditEvent.objects.filter(action="member.removed").order_by("pk")
    assert [(e.target_id, e.workspace_id, e.actor_user_id) for e in removed] == [
        (str(vera.pk), workspace_a.pk, alice.pk),
        (str(bob.pk), None, alice.pk),
    ]


def test_minting_and_revoking_a_token_on_the_web(as_alice, alice, workspace_a):
    as_alice.post("/w/ws-a/tokens/new/", {"name": "ci", "scopes": ["read"]})
    created = only("token.created")
    token = ApiToken.objects.get(name="ci")
    assert (created.actor_user, created.workspace, created.target_id) == (
        alice,
        workspace_a,
        str(token.pk),
    )
    as_alice.post(f"/w/ws-a/tokens/{token.pk}/revoke/")
    revoked = only("token.revoked")
    assert (revoked.actor_user, revoked.target_label) == (alice, str(token))


def test_a_token_minting_a_token_is_the_actor(api_as_token, token_a, alice):
    AuditEvent.objects.all().delete()  # the fixture's own mint
    response = api_as_token.post("/api/v1/tokens", {"name": "child", "scopes": ["read"]})
    assert response.status_code == 201, response.content
    event = only("token.created")
    assert event.actor_token == token_a.token
    assert event.actor_user == alice  # the token's creator, for filtering by person
    assert event.actor_label.startswith("API token deploy")
    assert event.ip == "198.51.100.4"
    assert event.metadata["parent"] == token_a.token.pk


def test_revoking_twice_records_once(token_a):
    services.api_token_revoke(token=token_a.token)
    services.api_token_revoke(token=token_a.token)
    assert AuditEvent.objects.filter(action="token.revoked").count() == 1


def test_connecting_and_disconnecting_an_account(as_alice, alice, workspace_a):
    response = as_alice.post("/w/ws-a/accounts/sandbox/", {"handle": "news"})
    assert response.status_code in (200, 302)
    account = SocialAccount.objects.get(handle="news")
    connected = only("account.connected")
    assert (connected.actor_user, connected.target_label) == (alice, "sandbox:news")
    as_alice.post(f"/w/ws-a/accounts/{account.pk}/disconnect/")
    disconnected = only("account.disconnected")
    assert (disconnected.actor_user, disconnected.target_id) == (alice, str(account.pk))
    assert not SocialAccount.objects.filter(pk=account.pk).exists()  # label outlives it
    assert disconnected.target_label == "sandbox:news"


def test_disconnecting_through_the_api_records_the_token(api_as_token, token_a, workspace_a):
    account = services.social_account_connect(
        workspace=workspace_a, platform="sandbox", remote_id="1", handle="h", credentials={}
    )
    response = api_as_token.delete(f"/api/v1/accounts/{account.pk}")
    assert response.status_code in (200, 204), response.content
    assert only("account.disconnected").actor_token == token_a.token


def test_webhook_changes_are_recorded(settings, alice, workspace_a):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    settings.WEBHOOK_ALLOW_HTTP = True
    with acting_as(user=alice):
        endpoint, _ = webhook_endpoint_create(workspace=workspace_a, url="http://127.0.0.1:9/h")
        webhook_endpoint_update(endpoint=endpoint, is_active=False)
        webhook_endpoint_rotate_secret(endpoint=endpoint)
        webhook_endpoint_delete(endpoint=endpoint)
    for action in (
        "webhook.created",
        "webhook.updated",
        "webhook.secret_rotated",
        "webhook.deleted",
    ):
        event = only(action)
        assert (event.actor_user, event.workspace, event.target_label) == (
            alice,
            workspace_a,
            "http://127.0.0.1:9/h",
        )
    assert only("webhook.updated").metadata == {"changes": ["is_active"], "is_active": False}


@pytest.mark.parametrize("outcome", ["published", "failed", "retry"])
def test_resolving_an_ambiguous_delivery_records_the_person(outcome, alice, workspace_a):
    publication = PublicationFactory(workspace=workspace_a)
    rendition = RenditionFactory(
        publication=publication,
        status=Rendition.Status.FAILED,
        ambiguous=True,
        last_error={"kind": "outcome_unknown", "message": "?"},
    )
    with acting_as(user=alice):
        rendition_resolve(
            rendition=rendition, outcome=outcome, provider_url="https://x.example/1", user=alice
        )
    event = only("rendition.resolved")
    assert (event.actor_user, event.workspace, event.target_id) == (
        alice,
        workspace_a,
        str(rendition.pk),
    )
    assert event.metadata["outcome"] == outcome


def test_an_action_that_is_rolled_back_leaves_no_event(alice, org_a, workspace_a):
    from apps.common.errors import Conflict

    with pytest.raises(Conflict), acting_as(user=alice):
        # The last owner cannot step down: the role change is refused and undone.
        membership.organization_role_set(
            organization=org_a, user=alice, role="member", changed_by=alice
        )
    assert not AuditEvent.objects.filter(action="member.role_changed").exists()


def test_two_factor_events_are_recorded_for_the_person(alice):
    events.emit(events.TWO_FACTOR_ENABLED, user=alice)
    event = only("user.two_factor_enabled")
    assert (event.target_id, event.organization) == (str(alice.pk), None)


def test_an_added_member_is_recorded(org_a, workspace_a):
    newcomer = UserFactory(email="newcomer@example.com")
    with acting_as(user=newcomer):
        membership.workspace_member_set(workspace=workspace_a, user=newcomer, role="editor")
    event = only("member.added")
    assert (event.actor_user, event.organization, event.workspace) == (
        newcomer,
        org_a,
        workspace_a,
    )
    assert event.metadata == {"role": "editor"}
    assert User.objects.filter(pk=newcomer.pk).exists()
