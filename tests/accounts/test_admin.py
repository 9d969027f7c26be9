import pytest
from django.urls import reverse

from apps.accounts.cli_login import cli_login_start
from tests.factories import SocialAccountFactory

CHANGELISTS = [
    "accounts_user",
    "accounts_organization",
    "accounts_workspace",
    "accounts_organizationmembership",
    "accounts_workspacemembership",
    "accounts_invitation",
    "accounts_apitoken",
    "accounts_clilogin",
    "accounts_socialaccount",
]


@pytest.mark.parametrize("name", CHANGELISTS)
def test_changelist_renders_with_search(admin_client, workspace_a, make_token, name):
    make_token(workspace_a)
    SocialAccountFactory(workspace=workspace_a)
    cli_login_start(client_name="laptop")
    url = reverse(f"admin:{name}_changelist")
    assert admin_client.get(url).status_code == 200
    assert admin_client.get(url, {"q": "a"}).status_code == 200


def test_social_account_page_never_shows_credentials(admin_client, workspace_a, settings):
    from apps.accounts import services

    account = services.social_account_connect(
        workspace=workspace_a,
        platform="x",
        remote_id="1",
        handle="a",
        credentials={"access_token": "very-secret-value"},
    )
    page = admin_client.get(reverse("admin:accounts_socialaccount_change", args=[account.pk]))
    assert page.status_code == 200
    assert b"very-secret-value" not in page.content
    assert b"credentials_ciphertext" not in page.content


def test_suspend_action(admin_client, org_a):
    url = reverse("admin:accounts_organization_changelist")
    admin_client.post(url, {"action": "suspend", "_selected_action": [org_a.pk]})
    org_a.refresh_from_db()
    assert org_a.state == "suspended"
