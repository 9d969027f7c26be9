"""SECRET_KEY and ENCRYPTION_KEYS: read from the environment and checked at startup.

In production (DEBUG false) both must be set: a missing, placeholder or weak value stops
the process with ImproperlyConfigured. Every web and worker process must share them (one
encrypts what another decrypts), so nothing is ever generated per host there. With DEBUG
(local work, `make run`) unset keys are generated once into var/secrets.json.
"""

import base64
import binascii
import json
import re
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

# Django's own bar (check --deploy W009): at least 50 characters, 5 of them distinct.
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_DISTINCT = 5
ENCRYPTION_KEY_BYTES = 32
# A random 32-byte key has about 30 distinct bytes; fewer than this is typed, not drawn.
ENCRYPTION_KEY_MIN_DISTINCT_BYTES = 16
# Words of the example values (deploy/.env.example, the k8s Secret example, Django's
# startproject key): a value containing one was copied, not generated.
PLACEHOLDER = re.compile(
    r"change[-_ ]?me|replace|example|placeholder|not[-_]a[-_]secret|django-insecure|"
    r"secret[-_]key|your[-_]",
    re.IGNORECASE,
)

MAKE_SECRET_KEY = 'python -c "import secrets; print(secrets.token_urlsafe(50))"'
MAKE_ENCRYPTION_KEY = (
    "python -c \"import base64, os; print('k1:' + "
    "base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip('='))\""
)


def secret_key(raw: str, *, debug: bool, var_dir: Path) -> str:
    """The SECRET_KEY to use: `raw` once checked, or (DEBUG only) the local one."""
    if not raw:
        if debug:
            return _local_secret(var_dir, "SECRET_KEY", lambda: secrets.token_urlsafe(50))
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Production (DEBUG=false) needs one long random value "
            f"shared by every process; make one with: {MAKE_SECRET_KEY} "
            "(for local work set DEBUG=true, as `make run` does)."
        )
    if PLACEHOLDER.search(raw):
        raise ImproperlyConfigured(
            f"SECRET_KEY is still an example value; replace it with a random one: {MAKE_SECRET_KEY}"
        )
    if not debug and (len(raw) < SECRET_KEY_MIN_LENGTH or len(set(raw)) < SECRET_KEY_MIN_DISTINCT):
        raise ImproperlyConfigured(
            f"SECRET_KEY is too weak: use at least {SECRET_KEY_MIN_LENGTH} random characters "
            f"({MAKE_SECRET_KEY})."
        )
    return raw


def encryption_keys(raw: list[str], *, debug: bool, var_dir: Path) -> list[str]:
    """The ENCRYPTION_KEYS ring to use, newest first, every entry checked."""
    entries = [entry.strip() for entry in raw if entry.strip()]
    if not entries:
        if debug:
            return [_local_secret(var_dir, "ENCRYPTION_KEYS", _new_encryption_key)]
        raise ImproperlyConfigured(
            "ENCRYPTION_KEYS is not set. Production (DEBUG=false) needs at least one "
            f"'key_id:base64url(32 bytes)' entry shared by every process; make one with: "
            f"{MAKE_ENCRYPTION_KEY} (for local work set DEBUG=true, as `make run` does)."
        )
    seen: set[str] = set()
    for entry in entries:
        key_id = check_encryption_key(entry)
        if key_id in seen:
            raise ImproperlyConfigured(f"ENCRYPTION_KEYS names key '{key_id}' twice.")
        seen.add(key_id)
    return entries


def check_encryption_key(entry: str) -> str:
    """The key id of one 'key_id:base64url(32 bytes)' entry; ImproperlyConfigured if the
    entry is malformed, an example value or not random-looking."""
    key_id, sep, encoded = entry.partition(":")
    if PLACEHOLDER.search(entry):
        raise ImproperlyConfigured(
            f"ENCRYPTION_KEYS entry '{key_id}' is still an example value; replace it with a "
            f"random key: {MAKE_ENCRYPTION_KEY}"
        )
    if not sep or not key_id or not re.fullmatch(r"[A-Za-z0-9_.-]+", key_id):
        raise ImproperlyConfigured(
            "ENCRYPTION_KEYS entries look like 'key_id:base64url(32 bytes)', e.g. "
            "'k2:<43 characters>', separated by commas."
        )
    try:
        key = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except (binascii.Error, ValueError):
        raise ImproperlyConfigured(f"ENCRYPTION_KEYS key '{key_id}' is not base64url.") from None
    if len(key) != ENCRYPTION_KEY_BYTES:
        raise ImproperlyConfigured(
            f"ENCRYPTION_KEYS key '{key_id}' must decode to {ENCRYPTION_KEY_BYTES} bytes, "
            f"not {len(key)}."
        )
    if len(set(key)) < ENCRYPTION_KEY_MIN_DISTINCT_BYTES:
        raise ImproperlyConfigured(
            f"ENCRYPTION_KEYS key '{key_id}' is not random (too few distinct bytes); "
            f"make one with: {MAKE_ENCRYPTION_KEY}"
        )
    return key_id


def _new_encryption_key() -> str:
    return "k1:" + base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()


def _local_secret(var_dir: Path, name: str, make) -> str:
    """A secret kept in var/secrets.json, so local work needs no environment."""
    path = var_dir / "secrets.json"
    var_dir.mkdir(parents=True, exist_ok=True)
    stored = json.loads(path.read_text()) if path.exists() else {}
    if name not in stored:
        stored[name] = make()
        path.write_text(json.dumps(stored))
        path.chmod(0o600)
    return stored[name]
