"""Key rotation runs the accounts' own re-encryption, then every app's registered hook."""

import io

import pytest
from django.core.management import call_command

from apps.accounts import key_rotation


@pytest.fixture
def hooks(monkeypatch):
    registered = dict(key_rotation._hooks)
    monkeypatch.setattr(key_rotation, "_hooks", registered)
    return registered


def test_the_webhooks_app_registers_its_secret_rotation(hooks):
    from apps.webhooks.services import webhook_secrets_rotate_keys

    assert hooks["webhook secret(s)"] is webhook_secrets_rotate_keys


@pytest.mark.django_db
def test_the_command_runs_every_registered_hook_and_reports_its_count(hooks):
    ran = []
    key_rotation.register("widget key(s)", lambda: ran.append("widgets") or 3)

    out = io.StringIO()
    call_command("rotate_encryption_keys", stdout=out)

    assert ran == ["widgets"]
    assert out.getvalue().startswith(
        "re-encrypted 0 account(s) and 0 webhook secret(s) and 0 two-factor secret(s) and "
        "3 widget key(s) under key '"
    )
