import base64
import io
import os

import pytest
from django.core.management import call_command

from apps.accounts import crypto, services
from apps.accounts.models import SocialAccount
from tests.factories import SocialAccountFactory


def _key(key_id: str) -> str:
    return f"{key_id}:" + base64.urlsafe_b64encode(os.urandom(32)).decode()


@pytest.fixture
def ring(settings):
    old, new = _key("old"), _key("new")
    settings.ENCRYPTION_KEYS = [old]
    return {"old": old, "new": new}


def _connect(workspace, **creds):
    return services.social_account_connect(
        workspace=workspace,
        platform="mastodon",
        remote_id="109",
        handle="@alice@example.social",
        credentials=creds or {"access_token": "secret-token"},
    )


def test_it_round_trips_and_never_stores_the_clear_secret(ring, workspace_a):
    account = _connect(workspace_a)
    account.refresh_from_db()
    assert account.credentials_key_id == "old"
    assert b"secret-token" not in bytes(account.credentials_ciphertext)
    assert services.social_account_credentials(account) == {"access_token": "secret-token"}


def test_old_ciphertext_still_decrypts_after_a_new_key_is_added(ring, settings, workspace_a):
    account = _connect(workspace_a)
    settings.ENCRYPTION_KEYS = [ring["new"], ring["old"]]
    account.refresh_from_db()
    assert services.social_account_credentials(account)["access_token"] == "secret-token"


def test_rotate_command_reencrypts_under_the_newest_key(ring, settings, workspace_a):
    account = _connect(workspace_a)
    settings.ENCRYPTION_KEYS = [ring["new"], ring["old"]]
    call_command("rotate_encryption_keys", stdout=io.StringIO())
    account.refresh_from_db()
    assert account.credentials_key_id == "new"
    settings.ENCRYPTION_KEYS = [ring["new"]]  # the old key can now go
    assert services.social_account_credentials(account)["access_token"] == "secret-token"


def test_a_removed_key_gives_a_clear_error(ring, settings, workspace_a):
    account = _connect(workspace_a)
    settings.ENCRYPTION_KEYS = [ring["new"]]
    with pytest.raises(crypto.CredentialsError, match="key 'old'.*not in ENCRYPTION_KEYS"):
        services.social_account_credentials(account)


def test_a_wrong_key_under_the_same_id_gives_a_clear_error(ring, settings, workspace_a):
    account = _connect(workspace_a)
    settings.ENCRYPTION_KEYS = [_key("old")]
    with pytest.raises(crypto.CredentialsError, match="could not be decrypted"):
        services.social_account_credentials(account)


def test_a_ciphertext_copied_to_another_tenant_fails(ring, workspace_a, workspace_b):
    account = _connect(workspace_a)
    other = SocialAccountFactory(workspace=workspace_b, platform="mastodon")
    SocialAccount.objects.filter(pk=other.pk).update(
        credentials_key_id=account.credentials_key_id,
        credentials_ciphertext=account.credentials_ciphertext,
    )
    other.refresh_from_db()
    with pytest.raises(crypto.CredentialsError):
        services.social_account_credentials(other)


def test_a_malformed_key_ring_fails_fast(settings):
    from django.core.exceptions import ImproperlyConfigured

    settings.ENCRYPTION_KEYS = ["k1:c2hvcnQ"]
    with pytest.raises(ImproperlyConfigured, match="32 bytes"):
        crypto.key_ring()


def test_reconnecting_replaces_credentials_and_status(ring, workspace_a):
    account = _connect(workspace_a)
    services.social_account_mark_needs_reconnect(account=account)
    again = _connect(workspace_a, access_token="fresh")
    assert again.pk == account.pk
    assert again.status == SocialAccount.Status.CONNECTED
    assert services.social_account_credentials(again) == {"access_token": "fresh"}


def test_rotate_command_reencrypts_webhook_secrets_too(ring, settings, workspace_a):
    from apps.webhooks.models import WebhookEndpoint
    from apps.webhooks.services import webhook_endpoint_create, webhook_endpoint_secret

    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True  # no DNS lookup of the example host
    endpoint, secret = webhook_endpoint_create(workspace=workspace_a, url="https://127.0.0.1/in")
    settings.ENCRYPTION_KEYS = [ring["new"], ring["old"]]
    out = io.StringIO()
    call_command("rotate_encryption_keys", stdout=out)
    assert "1 webhook secret(s)" in out.getvalue()
    settings.ENCRYPTION_KEYS = [ring["new"]]
    assert webhook_endpoint_secret(WebhookEndpoint.objects.get(pk=endpoint.pk)) == secret
