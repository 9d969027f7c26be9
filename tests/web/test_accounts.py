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


# --- reconnect first, then retry what failed on the refused token -----------------------


def _failed_on_its_token(account):
    from django.utils import timezone

    from apps.publishing.services import publication_create

    publication = publication_create(
        workspace=account.workspace,
        author=None,
        segments=[{"text": "hello"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    rendition = publication.renditions.get()
    rendition.mark_publishing()
    rendition.mark_failed(
        {"kind": "auth_expired", "message": "The token was refused.", "action": "reconnect"}
    )
    social_account_mark_needs_reconnect(account=account)
    return rendition


def test_an_account_to_reconnect_is_announced_with_reconnect_first(as_alice, news):
    _failed_on_its_token(news)
    page = as_alice.get(PAGE).content.decode()
    assert "1 account needs reconnecting" in page
    assert (
        f'<form method="post" action="/w/ws-a/accounts/{news.pk}/reconnect/">' in page
        and "Reconnect Sandbox @news</button>" in page
    )
    assert "retry-failed" not in page  # retrying before reconnecting would fail again


def test_sandbox_reconnect_ends_the_expired_token_and_offers_the_retry(as_alice, workspace_a):
    from apps.sandbox.services import sandbox_account_create

    account = sandbox_account_create(
        workspace=workspace_a, handle="expiring", behaviour={"expired_token": True}
    )
    rendition = _failed_on_its_token(account)
    remote = SandboxAccount.objects.get(handle="expiring")
    old_token = remote.access_token

    response = as_alice.post(f"{PAGE}{account.pk}/reconnect/", follow=True)
    page = response.content.decode()
    assert "Reconnected @expiring. 1 post failed on its old token: retry it from its row." in page
    remote.refresh_from_db()
    assert remote.behaviour["expired_token"] is False
    assert remote.access_token != old_token
    account.refresh_from_db()
    assert account.status == "connected"
    assert social_account_credentials(account)["access_token"] == remote.access_token
    assert "Retry the 1 failed post" in page

    response = as_alice.post(f"{PAGE}{account.pk}/retry-failed/", follow=True)
    assert "Retrying 1 failed post to @expiring now." in response.content.decode()
    rendition.refresh_from_db()
    assert rendition.status == "scheduled"
    assert rendition.manual_retry_count == 1


def test_the_retry_of_failed_posts_waits_for_the_reconnect(as_alice, news):
    rendition = _failed_on_its_token(news)
    response = as_alice.post(f"{PAGE}{news.pk}/retry-failed/", follow=True)
    assert "Reconnect @news first" in response.content.decode()
    rendition.refresh_from_db()
    assert rendition.status == "failed"


def test_the_retry_of_failed_posts_leaves_other_failures_alone(as_alice, news):
    rendition = _failed_on_its_token(news)
    as_alice.post(f"{PAGE}{news.pk}/reconnect/")
    other = _failed_on_its_token(news)
    SocialAccount.objects.filter(pk=news.pk).update(status="connected")
    other.last_error = {**other.last_error, "kind": "content_rejected", "action": "edit"}
    other.save(update_fields=["last_error"])
    as_alice.post(f"{PAGE}{news.pk}/retry-failed/")
    rendition.refresh_from_db()
    other.refresh_from_db()
    assert rendition.status == "scheduled"
    assert other.status == "failed"


def test_the_retry_of_failed_posts_is_for_the_workspace_only(as_charlie, as_vera, news):
    rendition = _failed_on_its_token(news)
    SocialAccount.objects.filter(pk=news.pk).update(status="connected")
    assert as_charlie.post(f"{PAGE}{news.pk}/retry-failed/").status_code == 404
    assert as_vera.post(f"{PAGE}{news.pk}/retry-failed/").status_code == 403
    rendition.refresh_from_db()
    assert rendition.status == "failed"


# --- platforms without their app credentials --------------------------------------------


def test_a_platform_without_its_app_credentials_is_shown_disabled(as_alice, settings):
    settings.X_CLIENT_ID = ""
    settings.META_APP_ID = settings.THREADS_APP_ID = ""
    settings.META_APP_SECRET = settings.THREADS_APP_SECRET = ""
    page = as_alice.get(PAGE).content.decode()
    assert 'href="/w/ws-a/connect/x/"' not in page
    assert 'aria-describedby="not-configured-x">Connect' in page
    assert "an operator sets X_CLIENT_ID (see docs/platforms/x.md)" in page
    assert "THREADS_APP_ID or META_APP_ID, THREADS_APP_SECRET or META_APP_SECRET" in page
    assert 'href="/w/ws-a/connect/mastodon/"' in page  # registers itself per server


def test_a_platform_with_its_app_credentials_can_be_connected(as_alice, settings):
    settings.X_CLIENT_ID = "x-client"
    page = as_alice.get(PAGE).content.decode()
    assert 'href="/w/ws-a/connect/x/"' in page
    assert "an operator sets X_CLIENT_ID" not in page


def test_a_reload_of_the_sandbox_form_address_goes_back_to_the_accounts(as_alice):
    response = as_alice.get(f"{PAGE}sandbox/")
    assert response.status_code == 302
    assert response["Location"] == PAGE
