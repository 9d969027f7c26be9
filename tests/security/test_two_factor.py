"""Two-factor with an authenticator app: enrolling from the settings page, the second step
at login (the admin's too), recovery codes shown once, hashed and single use, turning it
off with the password and a code, and guessing codes throttled."""

import re
import time
from datetime import timedelta

import pyotp
import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from apps.security import two_factor
from apps.security.models import RecoveryCode, TotpDevice
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


def secret_on_page(page: str) -> str:
    return re.search(r'id="totp-secret">([A-Z2-7 ]+)<', page).group(1).replace(" ", "")


def codes_on_page(page: str) -> list[str]:
    return re.findall(r"<li>([a-z2-9]{5}-[a-z2-9]{5})</li>", page)


def code_for(secret: str, *, offset_steps: int = 0) -> str:
    return pyotp.TOTP(secret).at(time.time() + 30 * offset_steps)


def enroll(client: Client) -> tuple[str, list[str]]:
    """Walk the settings pages; returns the secret and the recovery codes shown."""
    assert client.post("/settings/two-factor/enroll/", {"start": "1"}).status_code == 302
    page = client.get("/settings/two-factor/enroll/").content.decode()
    secret = secret_on_page(page)
    shown = client.post("/settings/two-factor/enroll/", {"code": code_for(secret)})
    assert shown.status_code == 200
    assert "no-store" in shown["Cache-Control"]
    return secret, codes_on_page(shown.content.decode())


@pytest.fixture
def enrolled(alice):
    client = Client()
    client.force_login(alice)
    secret, codes = enroll(client)
    return secret, codes


def log_in(client, email="alice@example.com", password=PASSWORD, **extra):
    return client.post("/login/", {"username": email, "password": password, **extra})


def test_enrolling_shows_the_qr_code_and_secret_and_needs_a_right_code(alice):
    client = Client()
    client.force_login(alice)
    assert "Set up two-factor" in client.get("/settings/").content.decode()

    client.post("/settings/two-factor/enroll/", {"start": "1"})
    page = client.get("/settings/two-factor/enroll/").content.decode()
    secret = secret_on_page(page)
    assert 'src="data:image/svg+xml' in page
    assert "otpauth://totp/Socialpost:alice%40example.com?secret=" + secret in page

    wrong = client.post("/settings/two-factor/enroll/", {"code": "000000"})
    assert wrong.status_code == 400
    assert "That code didn" in wrong.content.decode()
    assert not TotpDevice.objects.get(user=alice).is_confirmed

    shown = client.post("/settings/two-factor/enroll/", {"code": code_for(secret)})
    codes = codes_on_page(shown.content.decode())
    assert len(codes) == 10
    assert TotpDevice.objects.get(user=alice).is_confirmed
    assert "On: logging in asks for a code" in client.get("/settings/").content.decode()
    # Shown once: the settings page no longer shows them, and only their hashes are kept.
    later = client.get("/settings/two-factor/").content.decode()
    assert "10 of 10 recovery codes left" in later
    assert not any(code in later for code in codes)
    stored = set(RecoveryCode.objects.values_list("code_hash", flat=True))
    assert not any(code.replace("-", "") in stored or code in stored for code in codes)
    assert bytes(TotpDevice.objects.get(user=alice).secret_ciphertext).find(secret.encode()) < 0


def test_a_password_alone_no_longer_logs_in(enrolled):
    client = Client()
    response = log_in(client)

    assert response["Location"] == "/login/verify/"
    assert "_auth_user_id" not in client.session
    assert client.get("/settings/")["Location"].startswith("/login/")


def test_the_second_step_logs_in_with_the_apps_code_once(enrolled, alice):
    secret, _ = enrolled
    code = code_for(secret, offset_steps=1)
    client = Client()
    log_in(client, next="/settings/")

    wrong = client.post("/login/verify/", {"code": "123456"})
    assert wrong.status_code == 400
    assert "_auth_user_id" not in client.session

    right = client.post("/login/verify/", {"code": code})
    assert right["Location"] == "/settings/"
    assert client.session["_auth_user_id"] == str(alice.pk)

    # The same code replayed by someone who watched it typed is refused.
    other = Client()
    log_in(other)
    assert other.post("/login/verify/", {"code": code}).status_code == 400
    assert "_auth_user_id" not in other.session


def test_a_recovery_code_works_once(enrolled, alice):
    _, codes = enrolled
    client = Client()
    log_in(client)
    assert client.post("/login/verify/", {"code": codes[0].upper()}).status_code == 302
    assert RecoveryCode.objects.filter(user=alice, used_at__isnull=False).count() == 1

    again = Client()
    log_in(again)
    assert again.post("/login/verify/", {"code": codes[0]}).status_code == 400
    assert "_auth_user_id" not in again.session


def test_guessing_codes_is_throttled(enrolled, alice, settings):
    secret, _ = enrolled
    client = Client()
    log_in(client)
    for _ in range(5):
        assert client.post("/login/verify/", {"code": "000000"}).status_code == 400

    refused = client.post("/login/verify/", {"code": code_for(secret)})

    assert refused.status_code == 429
    assert "Too many attempts. Try again in 15 minutes." in refused.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_code_step_expires(enrolled):
    secret, _ = enrolled
    client = Client()
    log_in(client)
    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        response = client.post("/login/verify/", {"code": code_for(secret)})
    assert response["Location"] == "/login/"
    assert "_auth_user_id" not in client.session


def test_the_code_step_needs_the_password_step_first(db):
    response = Client().post("/login/verify/", {"code": "123456"})
    assert response["Location"] == "/login/"


def test_the_admin_needs_the_second_step_too(db):
    staff = UserFactory(email="ops@example.com", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)
    secret, _ = enroll(client)
    client.logout()

    response = client.post(
        "/login/?next=/admin/", {"username": staff.email, "password": PASSWORD, "next": "/admin/"}
    )
    assert response["Location"] == "/login/verify/"
    assert client.get("/admin/").status_code == 302  # not in yet

    done = client.post("/login/verify/", {"code": code_for(secret, offset_steps=1)})
    assert done["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_turning_it_off_needs_the_password_and_a_code(enrolled, alice):
    secret, _ = enrolled
    client = Client()
    client.force_login(alice)

    wrong_password = client.post(
        "/settings/two-factor/disable/", {"password": "nope", "code": code_for(secret)}
    )
    wrong_code = client.post(
        "/settings/two-factor/disable/", {"password": PASSWORD, "code": "000000"}
    )
    assert wrong_password.status_code == wrong_code.status_code == 400
    assert "The password or the code is wrong." in wrong_code.content.decode()
    assert TotpDevice.objects.filter(user=alice).exists()

    done = client.post(
        "/settings/two-factor/disable/",
        {"password": PASSWORD, "code": code_for(secret, offset_steps=1)},
    )
    assert done["Location"] == "/settings/two-factor/"
    assert not TotpDevice.objects.filter(user=alice).exists()
    assert not RecoveryCode.objects.filter(user=alice).exists()
    assert log_in(Client())["Location"] == "/"


def test_new_recovery_codes_replace_the_old_ones(enrolled, alice):
    secret, old = enrolled
    client = Client()
    client.force_login(alice)
    shown = client.post(
        "/settings/two-factor/recovery-codes/", {"password": PASSWORD, "code": old[0]}
    )
    new = codes_on_page(shown.content.decode())
    assert len(new) == 10 and not set(new) & set(old)

    client = Client()
    log_in(client)
    assert client.post("/login/verify/", {"code": old[1]}).status_code == 400
    assert client.post("/login/verify/", {"code": new[0]}).status_code == 302


def test_key_rotation_re_encrypts_the_secrets(enrolled, alice, settings):
    secret, _ = enrolled
    device = TotpDevice.objects.get(user=alice)
    old_key = settings.ENCRYPTION_KEYS[0]
    settings.ENCRYPTION_KEYS = ["k9:" + "A" * 43, old_key]

    assert two_factor.totp_secrets_rotate_keys() == 1

    device.refresh_from_db()
    assert device.secret_key_id == "k9"
    settings.ENCRYPTION_KEYS = ["k9:" + "A" * 43]
    assert two_factor.device_secret(device) == secret


def test_turning_two_factor_on_and_off_is_in_the_audit_log(db):
    """Switching it on (confirming the enrollment) and off each leave one audit event."""
    import pyotp

    from apps.audit.models import AuditEvent
    from apps.security import two_factor
    from tests.factories import UserFactory

    user = UserFactory(email="totp-audit@example.com")
    device = two_factor.totp_enroll_start(user=user)
    code = pyotp.TOTP(two_factor.device_secret(device)).now()
    assert two_factor.totp_enroll_confirm(user=user, code=code)
    two_factor.totp_disable(user=user)
    two_factor.totp_disable(user=user)  # already off: nothing more to record
    actions = list(
        AuditEvent.objects.filter(target_id=str(user.pk)).values_list("action", flat=True)
    )
    assert actions == ["user.two_factor_enabled", "user.two_factor_disabled"]
