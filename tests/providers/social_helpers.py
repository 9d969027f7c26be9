"""Shared arrangements for the real-platform adapter tests: accounts with encrypted
credentials, publish contexts, media, and an offline world (public DNS answers, no sleeps)."""

from __future__ import annotations

import io
import json
from urllib.parse import parse_qs

import httpx

from apps.accounts import services as account_services
from apps.accounts.models import SocialAccount, Workspace
from apps.common import outbound
from apps.providers import httpcall
from apps.providers.base import MediaPayload, PublishContext
from apps.publishing.delivery.context import store_refreshed_credentials


def go_offline(monkeypatch) -> list[float]:
    """Every host resolves to a public address and waits return at once; returns the list
    of waits asked for."""
    waits: list[float] = []
    monkeypatch.setattr(outbound, "resolve", lambda host, port: ["93.184.216.34"])
    monkeypatch.setattr(httpcall, "sleep", waits.append)
    return waits


def make_account(
    workspace: Workspace,
    platform: str,
    *,
    remote_id: str,
    handle: str,
    credentials: dict,
    settings: dict | None = None,
    token_expires_at=None,
) -> SocialAccount:
    return account_services.social_account_connect(
        workspace=workspace,
        platform=platform,
        remote_id=remote_id,
        handle=handle,
        credentials=credentials,
        settings=settings or {},
        token_expires_at=token_expires_at,
    )


def make_ctx(account: SocialAccount, *, rendition_id: int = 7, settings: dict | None = None):
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings=settings or {},
        rendition_id=rendition_id,
        idempotency_base=f"r{rendition_id}",
        # As the pipeline does: refreshed credentials are stored by the pipeline alone.
        credentials_saver=lambda fresh: store_refreshed_credentials(account, fresh),
    )


def image(
    media_id: int = 1,
    alt: str = "A red square",
    data: bytes = b"\x89PNG fake",
    *,
    kind: str = "image",
    mime: str = "image/png",
    width: int | None = 800,
    height: int | None = 600,
) -> MediaPayload:
    return MediaPayload(
        media_id=media_id,
        kind=kind,
        mime_type=mime,
        size_bytes=len(data),
        alt_text=alt,
        open=lambda: io.BytesIO(data),
        width=width,
        height=height,
    )


def form(request: httpx.Request) -> dict[str, str]:
    """A form-encoded request body as {field: value}."""
    return {k: v[0] for k, v in parse_qs(request.content.decode(), keep_blank_values=True).items()}


def body(request: httpx.Request) -> dict:
    return json.loads(request.content)


def multipart_field(request: httpx.Request, name: str) -> bytes | None:
    """The value of one multipart field (or file) in a request body."""
    marker = f'name="{name}"'.encode()
    for part in request.content.split(b"--" + _boundary(request)):
        head, _, rest = part.partition(b"\r\n\r\n")
        if marker in head:
            return rest.removesuffix(b"\r\n")
    return None


def _boundary(request: httpx.Request) -> bytes:
    content_type = request.headers["Content-Type"]
    return content_type.split("boundary=", 1)[1].encode()
