"""Standard Webhooks signatures: ``webhook-id``, ``webhook-timestamp`` and
``webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``, keyed with
the base64-decoded part of a ``whsec_...`` secret. Any Standard Webhooks verifier checks
them with the secret as shown to the user. While a rotated secret overlaps its successor,
the header carries one signature per secret, space-separated (``v1,<new> v1,<old>``): a
verifier accepts the message when any of them matches its secret."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence

from apps.webhooks.constants import SECRET_BYTES, SECRET_PREFIX


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _key(secret: str) -> bytes:
    encoded = secret.removeprefix(SECRET_PREFIX)
    return base64.b64decode(encoded + "=" * (-len(encoded) % 4))


def sign(*, secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value for one attempt."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(
    *, secrets: Sequence[str], message_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The headers of one signed attempt, signed with each of ``secrets`` (the timestamp
    is the attempt's, the id the event's, so every retry carries the same id)."""
    signatures = [
        sign(secret=secret, message_id=message_id, timestamp=timestamp, body=body)
        for secret in secrets
    ]
    return {
        "content-type": "application/json",
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signatures),
    }
