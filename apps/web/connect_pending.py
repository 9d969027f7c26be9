"""The identity a connect flow authorised, kept between the platform's callback and the
person's choice of the account to publish as (a Facebook Page).

It stays on the server, in the session, for ten minutes at most. The identity carries the
platform's tokens, so it is sealed with the credentials key ring (AES-256-GCM) and bound
to the user, the workspace, the platform and its own random key: a copy read from the
session store is ciphertext, and a pending choice cannot be completed by another user or
in another workspace. Only the key appears in the page's URL; tokens never reach HTML.
"""

from __future__ import annotations

import base64
import secrets
import time
from dataclasses import asdict
from datetime import datetime

from django.http import HttpRequest

from apps.accounts import crypto
from apps.accounts.http import AuthenticatedRequest
from apps.accounts.models import Workspace
from apps.providers.base import ConnectedIdentity

SESSION_KEY = "connect_choices"
TTL_S = 600
MAX_PENDING = 3


def _aad(*, key: str, user_id: int, workspace_id: int, platform: str) -> bytes:
    return f"connect-choice:{key}:{user_id}:{workspace_id}:{platform}".encode()


def _live(request: HttpRequest) -> dict:
    now = time.time()
    return {
        key: value
        for key, value in request.session.get(SESSION_KEY, {}).items()
        if now - value["started"] < TTL_S
    }


def pending_remember(
    request: AuthenticatedRequest,
    *,
    workspace: Workspace,
    platform: str,
    identity: ConnectedIdentity,
) -> str:
    """Keep `identity` for the choice page; returns the key that names it."""
    key = secrets.token_urlsafe(16)
    data = asdict(identity)
    if identity.token_expires_at is not None:
        data["token_expires_at"] = identity.token_expires_at.isoformat()
    aad = _aad(key=key, user_id=request.user.pk, workspace_id=workspace.pk, platform=platform)
    sealed = crypto.seal(data, aad=aad)
    pending = _live(request)
    pending[key] = {
        "workspace_id": workspace.pk,
        "platform": platform,
        "started": time.time(),
        "key_id": sealed.key_id,
        "sealed": base64.b64encode(sealed.ciphertext).decode(),
    }
    # Keep the newest few: abandoned choices must not grow the session.
    newest = sorted(pending.items(), key=lambda item: item[1]["started"])[-MAX_PENDING:]
    request.session[SESSION_KEY] = dict(newest)
    return key


def pending_identity(
    request: AuthenticatedRequest, key: str, *, workspace: Workspace, platform: str
) -> ConnectedIdentity | None:
    """The identity kept under `key` for this user, workspace and platform, or None when
    there is none (never started here, expired, already used, or started elsewhere)."""
    entry = _live(request).get(key)
    if entry is None or entry["workspace_id"] != workspace.pk or entry["platform"] != platform:
        return None
    aad = _aad(key=key, user_id=request.user.pk, workspace_id=workspace.pk, platform=platform)
    sealed = crypto.Sealed(entry["key_id"], base64.b64decode(entry["sealed"]))
    try:
        data = crypto.unseal(sealed, aad=aad)
    except crypto.CredentialsError:
        return None
    if data["token_expires_at"]:
        data["token_expires_at"] = datetime.fromisoformat(data["token_expires_at"])
    return ConnectedIdentity(**data)


def pending_forget(request: HttpRequest, key: str) -> None:
    pending = _live(request)
    pending.pop(key, None)
    request.session[SESSION_KEY] = pending
