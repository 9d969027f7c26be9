"""SECRET_KEY and ENCRYPTION_KEYS at startup: production takes only real, random keys."""

import base64
import secrets

import pytest
from django.core.exceptions import ImproperlyConfigured

from config import keys

# Fixed, varied bytes for the parametrized cases (ids must match across test workers).
SPREAD = bytes(range(101, 133))


def _key(raw: bytes, key_id: str = "k1") -> str:
    return f"{key_id}:" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    "value",
    [
        "change-me",
        "REPLACE_WITH_A_LONG_RANDOM_VALUE",
        "django-insecure-" + "q7Zx" * 13,
        "collectstatic-only-not-a-secret",
        "your-secret-key-here-" + "x" * 40,
    ],
)
def test_an_example_secret_key_is_refused(value, tmp_path):
    with pytest.raises(ImproperlyConfigured, match="example value"):
        keys.secret_key(value, debug=False, var_dir=tmp_path)


@pytest.mark.parametrize("value", ["short-but-random-" + "Zq9", "a" * 60, "ab" * 40])
def test_a_weak_secret_key_is_refused_in_production(value, tmp_path):
    with pytest.raises(ImproperlyConfigured, match="too weak"):
        keys.secret_key(value, debug=False, var_dir=tmp_path)


def test_a_random_secret_key_is_taken_as_given(tmp_path):
    value = secrets.token_urlsafe(50)
    assert keys.secret_key(value, debug=False, var_dir=tmp_path) == value


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("k2:REPLACE_WITH_32_BYTES_BASE64URL", "example value"),
        ("k1:OLDER_KEY_STILL_READABLE", "must decode to 32 bytes"),
        ("k1:" + "A" * 43, "not random"),  # 32 zero bytes
        (_key(bytes(range(8)) * 4), "not random"),
        (_key(SPREAD[:16]), "must decode to 32 bytes"),
        (base64.urlsafe_b64encode(SPREAD).decode(), "look like"),
        (":" + base64.urlsafe_b64encode(SPREAD).decode(), "look like"),
        ("k1:not base64 at all!!", "not base64url"),
    ],
)
def test_a_malformed_or_weak_encryption_key_is_refused(entry, message, tmp_path):
    with pytest.raises(ImproperlyConfigured, match=message):
        keys.encryption_keys([entry], debug=False, var_dir=tmp_path)


def test_a_key_id_named_twice_is_refused(tmp_path):
    ring = [_key(secrets.token_bytes(32)), _key(secrets.token_bytes(32))]
    with pytest.raises(ImproperlyConfigured, match="names key 'k1' twice"):
        keys.encryption_keys(ring, debug=False, var_dir=tmp_path)


def test_a_random_ring_is_taken_newest_first(tmp_path):
    ring = [_key(secrets.token_bytes(32), "k2"), _key(secrets.token_bytes(32), "k1")]
    assert keys.encryption_keys([f" {ring[0]} ", ring[1]], debug=False, var_dir=tmp_path) == ring


def test_production_generates_nothing(tmp_path):
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY is not set"):
        keys.secret_key("", debug=False, var_dir=tmp_path)
    with pytest.raises(ImproperlyConfigured, match="ENCRYPTION_KEYS is not set"):
        keys.encryption_keys([], debug=False, var_dir=tmp_path)
    assert not (tmp_path / "secrets.json").exists()


def test_debug_generates_valid_keys_once(tmp_path):
    secret = keys.secret_key("", debug=True, var_dir=tmp_path)
    ring = keys.encryption_keys([], debug=True, var_dir=tmp_path)
    assert len(secret) >= keys.SECRET_KEY_MIN_LENGTH
    keys.check_encryption_key(ring[0])
    assert keys.secret_key("", debug=True, var_dir=tmp_path) == secret
    assert keys.encryption_keys([], debug=True, var_dir=tmp_path) == ring
