"""AES-256-GCM encryption of provider credentials with a rotating key ring.

The ring comes from ENCRYPTION_KEYS ("key_id:base64url(32 bytes)", newest first). The
newest key encrypts; any listed key decrypts. A ciphertext is nonce (12 bytes) followed by
the GCM output, and is bound to associated data naming its row and tenant.
"""

import base64
import json
import os
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

NONCE_BYTES = 12


class CredentialsError(Exception):
    """Credentials could not be decrypted (unknown key id, wrong key, or tampered data)."""


@dataclass(frozen=True)
class Sealed:
    key_id: str
    ciphertext: bytes


def key_ring() -> dict[str, bytes]:
    """Parse ENCRYPTION_KEYS into an ordered {key_id: key} mapping, newest first."""
    ring: dict[str, bytes] = {}
    for entry in settings.ENCRYPTION_KEYS:
        key_id, sep, encoded = entry.strip().partition(":")
        if not sep or not key_id:
            raise ImproperlyConfigured("ENCRYPTION_KEYS entries look like 'key_id:base64key'.")
        try:
            key = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        except ValueError as exc:
            raise ImproperlyConfigured(f"ENCRYPTION_KEYS key '{key_id}' is not base64.") from exc
        if len(key) != 32:
            raise ImproperlyConfigured(f"ENCRYPTION_KEYS key '{key_id}' must be 32 bytes.")
        ring[key_id] = key
    if not ring:
        raise ImproperlyConfigured("ENCRYPTION_KEYS is empty.")
    return ring


def current_key_id() -> str:
    return next(iter(key_ring()))


def seal(data: dict, *, aad: bytes) -> Sealed:
    key_id, key = next(iter(key_ring().items()))
    nonce = os.urandom(NONCE_BYTES)
    ciphertext = AESGCM(key).encrypt(nonce, json.dumps(data).encode(), aad)
    return Sealed(key_id=key_id, ciphertext=nonce + ciphertext)


def unseal(sealed: Sealed, *, aad: bytes) -> dict:
    key = key_ring().get(sealed.key_id)
    if key is None:
        raise CredentialsError(
            f"Credentials were encrypted with key '{sealed.key_id}', which is not in "
            "ENCRYPTION_KEYS. Add that key back (as an older entry) to read them."
        )
    blob = bytes(sealed.ciphertext)
    try:
        plain = AESGCM(key).decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], aad)
    except InvalidTag as exc:
        raise CredentialsError(
            f"Credentials could not be decrypted with key '{sealed.key_id}': the key is wrong "
            "or the ciphertext does not belong to this account."
        ) from exc
    return json.loads(plain)
