"""The accounts page: status, platforms to connect with their readiness, sandbox accounts
with a behaviour, reconnect and disconnect."""

import pytest

from apps.accounts.models import SocialAccount
from apps.accounts.services import social_account_credentials, social_account_mark_needs_reconnect
from apps.sandbox.models import SandboxAccount
from tests.factories import RenditionFactory

pytestmark = pytest.mark.django_db

PAGE = "/w/ws-a/accounts/"


def test_it_lists_accounts_with_their_status_and_the_platforms_to_connect(as_alice, news):
    social_account_mark_needs_reconnect(account=news)
    page = as_alice.get(PAGE).content.decode()
    assert "@news" in page
    assert "Needs reconnect" in page
    assert "reconnect to keep publishing" in page
    assert 'href="/w/ws-a/connect/mastodon/"' in page
    assert 'href="/w/ws-a/connect/bluesky/password/"' in page
    assert page.count("readiness-experimental") >= 11  # no platform validated live yet


def test_the_platforms_to_connect_carry_their_notes_and_docs_pages(as_alice):
    page = as_alice.get(PAGE).content.decode()
    assert "API access for new apps needs Reddit" in page
    assert "w_organization_social" in page
    for platform in ("mastodon", "bluesky", "linkedin", "x", "reddit", "youtube"):
        assert f"docs/platforms/{platform}.md" in page


def test_a_sandbox_account_is_connected_with_its_behaviour(as_alice, workspace_a):
    response = as_alice.post(
        f"{PAGE}sandbox/",
        {
            "handle": "demo-flaky",
            "text_limit": "120",
            "server_error_times": "2",
            "reject_content": "on",
            "honours_idempotency_key": "",
        },
    )
    assert response.status_code == 302
    account = SocialAccount.objects.get(workspace=workspace_a, handle="demo-flaky")
    assert account.status == "connected"
    assert account.settings["text_limit"] == 120
    remote = SandboxAccount.objects.get(handle="demo-flaky")
    assert remote.behaviour["server_error_times"] == 2
    assert remote.behaviour["reject_content"] is True
    assert remote.behaviour["honours_idempotency_key"] is False


def test_a_taken_or_invalid_handle_is_explained(as_alice, news):
    taken = as_alice.post(f"{PAGE}sandbox/", {"handle": "news"})
    assert taken.status_code == 400
    assert "&#x27;news&#x27; is taken." in taken.content.decode()
    spaced = as_alice.post(f"{PAGE}sandbox/", {"handle": "two words"})
    assert spaced.status_code == 400
    assert "Invalid handle." in spaced.content.decode()


def test_disconnecting_an_unused_account_removes_it(as_alice, news):
    response = as_alice.post(f"{PAGE}{news.pk}/disconnect/", follow=True)
    assert "Disconnected and removed @news." in response.content.decode()
    assert not SocialAccount.objects.filter(pk=news.pk).exists()


def test_disconnecting_an_account_with_history_disables_it_and_erases_credentials(as_alice, news):
    RenditionFactory(publication__workspace=news.workspace, social_account=news)
    as_alice.post(f"{PAGE}{news.pk}/disconnect/")
    news.refresh_from_db()
    assert news.status == "disabled"
    assert social_account_credentials(news) == {}


def test_reconnecting_a_sandbox_account_restores_it(as_alice, news):
    RenditionFactory(publication__workspace=news.workspace, social_account=news)
    as_alice.post(f"{PAGE}{news.pk}/disconnect/")
    response = as_alice.post(f"{PAGE}{news.pk}/reconnect/", follow=True)
    assert "Reconnected @news." in response.content.decode()
    news.refresh_from_db()
    assert news.status == "connected"
    remote = SandboxAccount.objects.get(handle="news")
    assert social_account_credentials(news)["access_token"] == remote.access_token


def test_reconnecting_a_platform_account_goes_through_its_connect_flow(as_alice, workspace_a):
    from tests.factories import SocialAccountFactory

    account = SocialAccountFactory(workspace=workspace_a, platform="bluesky", handle="me.bsky")
    response = as_alice.post(f"{PAGE}{account.pk}/reconnect/")
    assert response["Location"] == "/w/ws-a/connect/bluesky/password/"


def test_a_viewer_sees_the_accounts_without_admin_controls(as_vera, news):
    page = as_vera.get(PAGE).content.decode()
    assert "@news" in page
    assert "Disconnect" not in page
    assert "Connect the sandbox account" not in page
