"""Email verification: a signed, expiring link for the account it names, doing nothing
once used; resending is paced; operators' users count as verified."""

import re
from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command
from django.utils import timezone

from apps.accounts import verification
from apps.accounts.models import User
from apps.accounts.services import user_sign_up
from apps.common.errors import Conflict
from apps.web.demo import demo_setup
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def token_of(message) -> str:
    return re.search(r"/verify-email/([^/\s]+)/", message.body).group(1)


@pytest.fixture
def signed_up(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        user = user_sign_up(email="dana@example.com", password="a long passphrase")
    return user


def test_sign_up_leaves_the_address_unverified_and_mails_a_link(signed_up, settings):
    assert not signed_up.is_email_verified
    [message] = mail.outbox
    assert message.to == ["dana@example.com"]
    assert f"{settings.SITE_URL.rstrip('/')}/verify-email/" in message.body


def test_the_link_verifies_its_own_account_once(signed_up):
    token = token_of(mail.outbox[0])

    assert verification.email_verify(token=token, user=signed_up) is True
    signed_up.refresh_from_db()
    assert signed_up.is_email_verified
    assert verification.email_verify(token=token, user=signed_up) is False  # used up


def test_the_link_does_not_verify_another_account(signed_up, alice):
    token = token_of(mail.outbox[0])

    with pytest.raises(Conflict) as refused:
        verification.email_verify(token=token, user=alice)

    assert refused.value.code == "VERIFICATION_OTHER_ACCOUNT"
    signed_up.refresh_from_db()
    assert not signed_up.is_email_verified


def test_the_link_expires(signed_up):
    token = token_of(mail.outbox[0])

    with (
        time_machine.travel(timezone.now() + timedelta(days=4)),
        pytest.raises(verification.VerificationLinkInvalid) as refused,
    ):
        verification.email_verify(token=token, user=signed_up)

    assert "expired" in refused.value.message
    signed_up.refresh_from_db()
    assert not signed_up.is_email_verified


def test_a_forged_link_is_refused(signed_up):
    token = token_of(mail.outbox[0])
    with pytest.raises(verification.VerificationLinkInvalid):
        verification.email_verify(token=token[:-2] + "xx", user=signed_up)


def test_resending_is_paced(signed_up, django_capture_on_commit_callbacks):
    with pytest.raises(Conflict) as refused:
        verification.email_verification_send(user=signed_up)
    assert refused.value.code == "VERIFICATION_RECENTLY_SENT"

    with (
        time_machine.travel(timezone.now() + timedelta(seconds=61)),
        django_capture_on_commit_callbacks(execute=True),
    ):
        verification.email_verification_send(user=signed_up)
    assert len(mail.outbox) == 2


def test_command_and_demo_users_are_verified():
    call_command("create_workspace", "Ops", "--owner", "ops@example.com", "--password", "x" * 12)
    assert User.objects.get(email="ops@example.com").is_email_verified

    demo_setup()
    assert User.objects.get(email="demo@example.com").is_email_verified


def test_superusers_are_verified():
    user = User.objects.create_superuser(email="root@example.com", password="x" * 12)
    assert user.is_email_verified


def test_existing_users_count_as_verified_after_the_migration():
    """The data migration fills every existing account's verification."""
    from importlib import import_module

    from django.apps import apps as django_apps

    user = UserFactory(email="old@example.com", email_verified_at=None)
    fill = import_module("apps.accounts.migrations.0009_fill_email_verified").fill
    fill(django_apps, None)

    user.refresh_from_db()
    assert user.email_verified_at == user.created_at
