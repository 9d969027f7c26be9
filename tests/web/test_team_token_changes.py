"""Whoever changes a role on the team or organization page is told which of that
person's API tokens the change narrowed, restored or revoked; the tokens page shows a
narrowed token's grant beside what it may do now."""

import pytest
from django.test import Client

from apps.accounts import membership, services
from apps.accounts.models import ApiToken
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def dana(workspace_a):
    person = UserFactory(email="dana@example.com")
    membership.workspace_member_set(workspace=workspace_a, user=person, role="admin")
    return person


@pytest.fixture
def tokens(workspace_a, dana):
    return [
        services.api_token_create(
            workspace=workspace_a, name=name, scopes=scopes, created_by=dana
        ).token
        for name, scopes in (("deploy", ["read", "write", "admin"]), ("hooks", ["admin"]))
    ]


def _owner(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def test_the_team_page_names_each_token_a_demotion_changed(alice, dana, tokens):
    deploy, hooks = tokens
    response = _owner(alice).post(f"/w/ws-a/team/{dana.pk}/role/", {"role": "viewer"}, follow=True)

    page = response.content.decode()
    assert "dana@example.com is now viewer." in page
    assert "Their API tokens changed with the role:" in page
    assert (
        f"“deploy” ({deploy.prefix}…) in Workspace A now has read (had read, write, admin); "
        "it keeps its grant of read, write, admin for a role that allows it" in page
    )
    assert f"“hooks” ({hooks.prefix}…) in Workspace A now has nothing (had admin)" in page
    assert ApiToken.objects.get(pk=hooks.pk).revoked_at is None


def test_the_tokens_page_shows_the_grant_beside_what_a_token_may_do_now(alice, dana, tokens):
    client = _owner(alice)
    client.post(f"/w/ws-a/team/{dana.pk}/role/", {"role": "viewer"})

    page = client.get("/w/ws-a/tokens/").content.decode()

    assert '<span class="token-effective">read</span>' in page
    assert "granted read, write, admin" in page
    assert '<span class="token-effective">nothing</span>' in page

    client.post(f"/w/ws-a/team/{dana.pk}/role/", {"role": "admin"})
    page = client.get("/w/ws-a/tokens/").content.decode()

    assert "token-effective" not in page and "read, write, admin" in page


def test_removing_someone_names_the_tokens_revoked(alice, dana, tokens):
    response = _owner(alice).post(f"/w/ws-a/team/{dana.pk}/remove/", follow=True)

    page = response.content.decode()
    assert "was revoked" in page and "deploy" in page and "hooks" in page
    assert not ApiToken.objects.filter(created_by=dana, revoked_at__isnull=True).exists()


def test_a_change_that_touches_no_token_says_nothing_of_tokens(alice, bob):
    response = _owner(alice).post(f"/w/ws-a/team/{bob.pk}/role/", {"role": "viewer"}, follow=True)

    assert "Their API tokens changed" not in response.content.decode()


def test_the_organization_page_names_them_too(alice, org_a, workspace_a):
    erin = UserFactory(email="erin@example.com")
    membership.organization_member_set(organization=org_a, user=erin, role="admin")
    token = services.api_token_create(
        workspace=workspace_a, name="erin's", scopes=["read", "admin"], created_by=erin
    ).token

    response = _owner(alice).post(
        f"/o/{org_a.slug}/members/{erin.pk}/role/", {"role": "member"}, follow=True
    )

    assert f"“erin&#x27;s” ({token.prefix}…) in Workspace A was revoked" in (
        response.content.decode()
    )
