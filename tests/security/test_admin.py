"""The security app's admin pages open, and an operator can turn off a person's
two-factor (lost phone and codes)."""

import pytest
from django.test import Client

from apps.security import two_factor
from apps.security.models import AuthAttempt, TotpDevice
from apps.security.throttle import attempt_begin
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator():
    client = Client()
    client.force_login(UserFactory(email="ops@example.com", is_staff=True, is_superuser=True))
    return client


@pytest.mark.parametrize("model", ["authattempt", "ratecounter", "totpdevice", "recoverycode"])
def test_each_changelist_opens(operator, alice, model):
    attempt_begin(action=AuthAttempt.Action.LOGIN, account=alice.email, ip="192.0.2.1")
    two_factor.totp_enroll_start(user=alice)
    assert operator.get(f"/admin/security/{model}/").status_code == 200


def test_an_operator_turns_off_a_persons_two_factor(operator, alice):
    device = two_factor.totp_enroll_start(user=alice)
    response = operator.post(
        "/admin/security/totpdevice/",
        {"action": "turn_off", "_selected_action": [device.pk]},
    )
    assert response.status_code == 302
    assert not TotpDevice.objects.filter(user=alice).exists()
