"""Two-factor authentication: an authenticator app (TOTP, RFC 6238) and single-use
recovery codes.

Enrolling creates an unconfirmed device; the first right code confirms it and issues the
recovery codes, shown once. From then on a login needs a code after the password.
"""

from __future__ import annotations

import hashlib
import secrets
import time

import pyotp
import segno
from django.db import transaction
from django.utils import timezone

from apps.accounts import crypto
from apps.accounts.models import User
from apps.common import events
from apps.security.models import RecoveryCode, TotpDevice

ISSUER = "Socialpost"
RECOVERY_CODE_COUNT = 10
# Codes of the step before and after the current one are accepted too (clock drift).
VALID_WINDOW = 1
STEP_S = 30
# Recovery codes: 10 characters of 31 that can't be confused (no i, l, o, 0, 1), about 50
# bits each, shown as xxxxx-xxxxx.
RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


def _aad(device: TotpDevice) -> bytes:
    return f"totp:{device.user_id}".encode()


def _seal(device: TotpDevice, secret: str) -> None:
    sealed = crypto.seal({"secret": secret}, aad=_aad(device))
    device.secret_key_id = sealed.key_id
    device.secret_ciphertext = sealed.ciphertext


def device_secret(device: TotpDevice) -> str:
    sealed = crypto.Sealed(key_id=device.secret_key_id, ciphertext=bytes(device.secret_ciphertext))
    return crypto.unseal(sealed, aad=_aad(device))["secret"]


def confirmed_device(user: User) -> TotpDevice | None:
    """The user's working authenticator, or None when two-factor is off."""
    return TotpDevice.objects.filter(user=user, confirmed_at__isnull=False).first()


def provisioning_uri(device: TotpDevice) -> str:
    """The otpauth:// URI an authenticator app reads (from the QR code)."""
    return pyotp.TOTP(device_secret(device)).provisioning_uri(
        name=device.user.email, issuer_name=ISSUER
    )


def provisioning_qr_svg(device: TotpDevice) -> str:
    """The provisioning URI as an SVG data URI (an <img> source: no inline markup)."""
    return segno.make(provisioning_uri(device), error="m").svg_data_uri(scale=5)


@transaction.atomic
def totp_enroll_start(*, user: User) -> TotpDevice:
    """A fresh unconfirmed device with a new secret (replacing an unfinished enrollment).
    A confirmed device is returned as it is: turn it off first to change phones."""
    device = TotpDevice.objects.select_for_update().filter(user=user).first()
    if device is not None and device.is_confirmed:
        return device
    device = device or TotpDevice(user=user)
    _seal(device, pyotp.random_base32())
    device.last_used_step = None
    device.save()
    return device


def enrolling_device(user: User) -> TotpDevice | None:
    return TotpDevice.objects.filter(user=user, confirmed_at__isnull=True).first()


@transaction.atomic
def totp_enroll_confirm(*, user: User, code: str) -> list[str] | None:
    """Confirm the enrollment with a code from the app. Returns the new recovery codes (to
    show once), or None when the code is wrong or no enrollment is under way."""
    device = TotpDevice.objects.select_for_update().filter(user=user).first()
    if device is None or device.is_confirmed or not _accept_totp(device, code):
        return None
    device.confirmed_at = timezone.now()
    device.save(update_fields=["confirmed_at", "last_used_step", "updated_at"])
    events.emit(events.TWO_FACTOR_ENABLED, user=user)
    return _new_recovery_codes(user)


@transaction.atomic
def second_factor_verify(*, user: User, code: str) -> bool:
    """True when `code` is the app's current code (each accepted once) or an unused
    recovery code (used up now)."""
    device = TotpDevice.objects.select_for_update().filter(user=user).first()
    if device is None or not device.is_confirmed:
        return False
    if _accept_totp(device, code):
        device.save(update_fields=["last_used_step", "updated_at"])
        return True
    return _use_recovery_code(user, code)


@transaction.atomic
def totp_disable(*, user: User) -> None:
    """Turn two-factor off: the device and every recovery code go."""
    was_on = TotpDevice.objects.filter(user=user, confirmed_at__isnull=False).exists()
    TotpDevice.objects.filter(user=user).delete()
    RecoveryCode.objects.filter(user=user).delete()
    if was_on:
        events.emit(events.TWO_FACTOR_DISABLED, user=user)


@transaction.atomic
def recovery_codes_regenerate(*, user: User) -> list[str]:
    """New recovery codes (shown once); the old ones stop working."""
    return _new_recovery_codes(user)


def recovery_codes_left(user: User) -> int:
    return RecoveryCode.objects.filter(user=user, used_at__isnull=True).count()


def totp_secrets_rotate_keys() -> int:
    """Re-encrypt every secret not under the newest ENCRYPTION_KEYS entry (this app's part
    of a key rotation). Returns how many rows changed."""
    newest = crypto.current_key_id()
    changed = 0
    for pk in list(TotpDevice.objects.exclude(secret_key_id=newest).values_list("pk", flat=True)):
        with transaction.atomic():
            device = TotpDevice.objects.select_for_update().get(pk=pk)
            if device.secret_key_id != newest:
                _seal(device, device_secret(device))
                device.save(update_fields=["secret_key_id", "secret_ciphertext", "updated_at"])
                changed += 1
    return changed


def _normalize(code: str) -> str:
    return "".join(code.split()).replace("-", "").lower()


def _accept_totp(device: TotpDevice, code: str) -> bool:
    """Check a 6-digit code against the steps around now; an accepted step is remembered so
    the same code (or an older one) is never accepted twice."""
    code = _normalize(code)
    if len(code) != 6 or not code.isdigit():
        return False
    totp = pyotp.TOTP(device_secret(device))
    now_step = int(time.time()) // STEP_S
    for step in range(now_step - VALID_WINDOW, now_step + VALID_WINDOW + 1):
        if device.last_used_step is not None and step <= device.last_used_step:
            continue
        if secrets.compare_digest(totp.at(step * STEP_S), code):
            device.last_used_step = step
            return True
    return False


def _hash(code: str) -> str:
    return hashlib.sha256(_normalize(code).encode()).hexdigest()


def _use_recovery_code(user: User, code: str) -> bool:
    if len(_normalize(code)) != 10:
        return False
    # The guarded update is the single use: of two concurrent logins, one gets the row.
    used = RecoveryCode.objects.filter(
        user=user, code_hash=_hash(code), used_at__isnull=True
    ).update(used_at=timezone.now(), updated_at=timezone.now())
    return used == 1


def _new_recovery_codes(user: User) -> list[str]:
    RecoveryCode.objects.filter(user=user).delete()
    codes = [
        "".join(secrets.choice(RECOVERY_ALPHABET) for _ in range(10))
        for _ in range(RECOVERY_CODE_COUNT)
    ]
    RecoveryCode.objects.bulk_create(
        [RecoveryCode(user=user, code_hash=_hash(code)) for code in codes]
    )
    return [f"{code[:5]}-{code[5:]}" for code in codes]
