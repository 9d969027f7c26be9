"""Guessing passwords at the login page, the admin's login, password reset requests and
signups: each is limited per account and per IP address, says so plainly with a 429, never
tells whether an account exists, and the lockout ends on its own."""

import re
from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from apps.accounts.models import User
from apps.security.models import AuthAttempt
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


def log_in(client, email, password, ip="203.0.113.5"):
    return client.post("/login/", {"username": email, "password": password}, REMOTE_ADDR=ip)


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.AUTH_LOCKOUT_ATTEMPTS = 5
    settings.AUTH_LOCKOUT_IP_ATTEMPTS = 30
    settings.AUTH_LOCKOUT_MINUTES = 15
    settings.AUTH_EMAIL_REQUESTS = 3
    settings.AUTH_EMAIL_IP_REQUESTS = 10


def test_it_locks_an_account_after_five_wrong_passwords_even_for_the_right_one(client, alice):
    for _ in range(5):
        assert log_in(client, "alice@example.com", "guess").status_code == 200

    refused = log_in(client, "alice@example.com", PASSWORD)

    assert refused.status_code == 429
    assert refused["Retry-After"].isdigit()
    page = refused.content.decode()
    assert "Too many attempts. Try again in 15 minutes." in page
    assert "_auth_user_id" not in client.session


def test_the_lockout_ends_on_its_own(client, alice):
    with time_machine.travel(timezone.now(), tick=False) as clock:
        for _ in range(5):
            log_in(client, "alice@example.com", "guess")
        clock.shift(timedelta(minutes=14))
        locked = log_in(client, "alice@example.com", PASSWORD)
        assert locked.status_code == 429
        assert "Try again in 1 minute." in locked.content.decode()

        clock.shift(timedelta(minutes=1, seconds=1))
        response = log_in(client, "alice@example.com", PASSWORD)

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(alice.pk)


def test_hammering_a_locked_account_does_not_extend_its_lockout(client, alice):
    with time_machine.travel(timezone.now(), tick=False) as clock:
        for _ in range(5):
            log_in(client, "alice@example.com", "guess")
        for _ in range(10):
            clock.shift(timedelta(minutes=1))
            assert log_in(client, "alice@example.com", "guess").status_code == 429
        clock.shift(timedelta(minutes=5, seconds=1))
        assert log_in(client, "alice@example.com", PASSWORD).status_code == 302


def test_an_unknown_address_reads_exactly_like_a_wrong_password(client, alice):
    known = log_in(client, "alice@example.com", "guess").content.decode()
    unknown = log_in(client, "nobody@example.com", "guess").content.decode()

    message = "Your email and password didn't match. Try again."
    assert message in known and message in unknown

    def neutral(page: str, email: str) -> str:
        return re.sub(r"[A-Za-z0-9]{64}", "TOKEN", page.replace(email, "X"))

    assert neutral(known, "alice@example.com") == neutral(unknown, "nobody@example.com")


def test_an_unknown_address_is_locked_out_the_same_way(client, alice):
    """The lockout counts the address typed, so it says nothing about whether it exists."""
    for email in ("alice@example.com", "nobody@example.com"):
        for _ in range(5):
            log_in(client, email, "guess")
        assert log_in(client, email, "guess").status_code == 429


def test_one_address_guessing_many_accounts_is_stopped(client, db):
    for n in range(30):
        log_in(client, f"victim{n}@example.com", "guess", ip="198.51.100.7")

    refused = log_in(client, "victim99@example.com", "guess", ip="198.51.100.7")
    elsewhere = log_in(client, "victim99@example.com", "guess", ip="198.51.100.8")

    assert refused.status_code == 429
    assert "Too many attempts" in refused.content.decode()
    assert elsewhere.status_code == 200


def test_behind_a_trusted_proxy_the_client_address_is_counted(client, db, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    for n in range(30):
        client.post(
            "/login/",
            {"username": f"v{n}@example.com", "password": "x"},
            REMOTE_ADDR="10.0.0.2",
            HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7",
        )
    # A forged left-most entry changes nothing: the proxy's own entry is what counts.
    forged = client.post(
        "/login/",
        {"username": "v99@example.com", "password": "x"},
        REMOTE_ADDR="10.0.0.2",
        HTTP_X_FORWARDED_FOR="9.9.9.9, 198.51.100.7",
    )
    other = client.post(
        "/login/",
        {"username": "v99@example.com", "password": "x"},
        REMOTE_ADDR="10.0.0.2",
        HTTP_X_FORWARDED_FOR="198.51.100.8",
    )
    assert (forged.status_code, other.status_code) == (429, 200)


def test_a_right_password_clears_the_failures(client, alice):
    for _ in range(4):
        log_in(client, "alice@example.com", "guess")
    assert log_in(client, "alice@example.com", PASSWORD).status_code == 302
    client.logout()

    for _ in range(4):
        assert log_in(client, "alice@example.com", "guess").status_code == 200
    assert log_in(client, "alice@example.com", PASSWORD).status_code == 302
    assert not AuthAttempt.objects.filter(key="alice@example.com").exists()


def test_old_attempts_are_swept(client, alice):
    with time_machine.travel(timezone.now() - timedelta(hours=3), tick=False):
        log_in(client, "alice@example.com", "guess")
    log_in(client, "bob@example.com", "guess")

    assert set(AuthAttempt.objects.values_list("key", flat=True)) == {
        "bob@example.com",
        "203.0.113.5",
    }


def test_the_admin_login_is_the_sites_login(client, db):
    staff = UserFactory(email="ops@example.com", is_staff=True, is_superuser=True)

    page = client.get("/admin/login/?next=/admin/accounts/")
    posted = client.post(
        "/admin/login/", {"username": staff.email, "password": PASSWORD, "next": "/admin/"}
    )

    assert page.status_code == 302
    assert page["Location"] == "/login/?next=%2Fadmin%2Faccounts%2F"
    # Its own form is never served, so a password posted to it is never checked.
    assert posted.status_code == 302 and posted["Location"].startswith("/login/")
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/")["Location"].startswith("/admin/login/")


def test_the_admin_login_is_throttled_with_the_sites_login(client, db):
    staff = UserFactory(email="ops@example.com", is_staff=True, is_superuser=True)
    for _ in range(5):
        log_in(client, staff.email, "guess")

    refused = client.post(
        "/login/?next=/admin/", {"username": staff.email, "password": PASSWORD, "next": "/admin/"}
    )

    assert refused.status_code == 429
    assert client.get("/admin/").status_code == 302


def test_a_staff_login_goes_on_to_the_admin(client, db):
    staff = UserFactory(email="ops@example.com", is_staff=True, is_superuser=True)
    response = client.post(
        "/login/?next=/admin/", {"username": staff.email, "password": PASSWORD, "next": "/admin/"}
    )
    assert response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/login/")["Location"] == "/admin/"


def reset(client, email, ip="203.0.113.5"):
    return client.post("/password-reset/", {"email": email}, REMOTE_ADDR=ip)


def test_password_reset_answers_the_same_for_unknown_addresses(client, alice):
    known = reset(client, "alice@example.com")
    unknown = reset(client, "nobody@example.com")

    assert known.status_code == unknown.status_code == 302
    assert known["Location"] == unknown["Location"] == "/password-reset/sent/"
    assert [m.to for m in mail.outbox] == [["alice@example.com"]]
    done = client.get("/password-reset/sent/").content.decode()
    assert "If an account exists for that address, we sent it an email" in done


def test_password_reset_requests_are_limited_per_address(client, alice):
    for _ in range(3):
        assert reset(client, "alice@example.com").status_code == 302

    refused = reset(client, "Alice@Example.com", ip="198.51.100.1")

    assert refused.status_code == 429
    assert "Too many attempts. Try again in 60 minutes." in refused.content.decode()
    assert 'value="Alice@Example.com"' in refused.content.decode()
    assert len(mail.outbox) == 3


def test_password_reset_requests_are_limited_per_ip_address(client, db):
    for n in range(10):
        reset(client, f"someone{n}@example.com")
    assert reset(client, "another@example.com").status_code == 429
    assert reset(client, "another@example.com", ip="198.51.100.1").status_code == 302


def sign_up(client, email, ip="203.0.113.5"):
    return client.post(
        "/signup/",
        {
            "email": email,
            "name": "Someone",
            "password": "a long and unusual passphrase",
            "display_timezone": "UTC",
        },
        REMOTE_ADDR=ip,
    )


def test_signups_are_limited_per_ip_address(db):
    from django.test import Client

    for n in range(10):
        assert sign_up(Client(), f"bot{n}@example.com").status_code in (200, 302)

    refused = sign_up(Client(), "bot99@example.com")

    assert refused.status_code == 429
    assert refused["Retry-After"].isdigit()
    assert "Too many attempts. Try again in 60 minutes." in refused.content.decode()
    assert not User.objects.filter(email="bot99@example.com").exists()
    assert sign_up(Client(), "person@example.com", ip="198.51.100.1").status_code == 302


def test_signups_for_one_address_are_limited(client, alice):
    """Probing whether an address has an account is capped like guessing a password."""
    for n in range(3):
        sign_up(client, "alice@example.com", ip=f"198.51.100.{n}")
    assert sign_up(client, "alice@example.com", ip="198.51.100.50").status_code == 429
