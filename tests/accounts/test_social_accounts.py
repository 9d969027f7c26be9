"""Disconnecting a social account: the one rule the web app and the API share."""

from apps.accounts import services
from apps.accounts.models import SocialAccount
from tests.factories import RenditionFactory


def _connected(workspace) -> SocialAccount:
    return services.social_account_connect(
        workspace=workspace,
        platform="sandbox",
        remote_id="r-1",
        handle="leaving",
        credentials={"access_token": "secret"},
        token_expires_at=None,
    )


def test_an_account_no_publication_names_is_deleted(workspace_a):
    account = _connected(workspace_a)

    assert services.social_account_disconnect(account=account) is None

    assert not SocialAccount.objects.filter(pk=account.pk).exists()


def test_an_account_with_history_is_kept_disabled_without_credentials(workspace_a):
    account = _connected(workspace_a)
    rendition = RenditionFactory(publication__workspace=workspace_a, social_account=account)

    kept = services.social_account_disconnect(account=account)

    assert kept is not None and kept.pk == account.pk
    account.refresh_from_db()
    assert account.status == SocialAccount.Status.DISABLED
    assert account.credentials_ciphertext is None
    assert account.credentials_key_id == ""
    assert account.token_expires_at is None
    assert services.social_account_credentials(account) == {}
    assert list(account.renditions.all()) == [rendition]


def test_reconnecting_a_disconnected_account_brings_the_same_row_back(workspace_a):
    account = _connected(workspace_a)
    RenditionFactory(publication__workspace=workspace_a, social_account=account)
    services.social_account_disconnect(account=account)

    again = _connected(workspace_a)

    assert again.pk == account.pk
    assert again.status == SocialAccount.Status.CONNECTED
    assert services.social_account_credentials(again) == {"access_token": "secret"}
