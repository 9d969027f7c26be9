"""HTTP plumbing for the platform adapters.

Every call goes through `send`, so a transport failure is always classified (before the
request left, or after it on a create). Every request of a client made by `client()` first
passes the thread's send guard (apps.common.send_guard): a worker running a job checks on
the database clock that it still holds the job's lease, so a worker paused past its lease
sends nothing when it resumes. Hosts a user chooses (a Mastodon instance, a
Bluesky PDS named by a DID document, a page fetched for a link card) must be public HTTPS
addresses: the worker must not be steered at the private network. They are checked by the
shared outbound guard (apps.common.outbound) before the call and again at connection time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx
from django.conf import settings

from apps.common import outbound, send_guard
from apps.providers.errors import Action, ErrorKind, ProviderError, classify_transport

# A host a tenant chooses (a Mastodon instance, a Bluesky PDS, a page for a link card) may
# drip its answer slowly or inflate it (a gzip bomb): calls to it have a total deadline and
# a cap on the decoded body, whatever the per-read timeout lets through.
TENANT_HOST_DEADLINE_S = 30.0
TENANT_HOST_MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class Bounds:
    deadline_s: float
    max_bytes: int


def client(
    *,
    headers: dict | None = None,
    timeout: float | None = None,
    tenant_host: bool = False,
    **kwargs,
) -> httpx.Client:
    """The HTTP client every adapter uses (so every platform call is redirectable).
    `tenant_host`: the host was chosen by a tenant, so every connection goes through the
    outbound guard (public HTTPS addresses only) and `send` bounds every answer (see
    TENANT_HOST_*). Redirected to the platform fakes, no call reaches a tenant's host."""
    redirect = getattr(settings, "PROVIDER_API_REDIRECT", "")
    if redirect:
        kwargs["transport"] = RedirectTransport(redirect)
    elif tenant_host:
        kwargs["transport"] = outbound.GuardedTransport(outbound.PUBLIC_HTTPS)
    timeout = settings.PROVIDER_TIMEOUT_S if timeout is None else timeout
    hooks = kwargs.pop("event_hooks", None) or {}
    hooks = {**hooks, "request": [_guard, *hooks.get("request", [])]}
    http = httpx.Client(headers=headers or {}, timeout=timeout, event_hooks=hooks, **kwargs)
    if tenant_host:
        http.bounds = Bounds(  # type: ignore[attr-defined]
            deadline_s=min(TENANT_HOST_DEADLINE_S, max(timeout, 1.0) * 2),
            max_bytes=TENANT_HOST_MAX_BYTES,
        )
    return http


def _guard(request: httpx.Request) -> None:
    """Right before the request leaves: the thread's send guard may stop it (it raises,
    and nothing is sent)."""
    send_guard.check()


class RedirectTransport(httpx.HTTPTransport):
    """Sends `https://<host>/<path>` to `<base>/<host>/<path>`: how the soak and the tests
    put the platform fakes (loadtest.platform_fakes) behind the real adapters. Never set in
    production (PROVIDER_API_REDIRECT is empty there)."""

    def __init__(self, base: str) -> None:
        super().__init__()
        self.base = httpx.URL(base.rstrip("/"))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host not in (self.base.host, "127.0.0.1", "localhost"):
            path = f"{self.base.path.rstrip('/')}/{request.url.host}{request.url.raw_path.decode()}"
            request.url = self.base.copy_with(raw_path=path.encode())
            request.headers["Host"] = self.base.netloc.decode()
        return super().handle_request(request)


def redirected() -> bool:
    """True when platform calls go to the fakes (tenant-chosen hosts need no DNS check)."""
    return bool(getattr(settings, "PROVIDER_API_REDIRECT", ""))


def send(http: httpx.Client, method: str, url: str, *, is_create: bool, **kwargs) -> httpx.Response:
    """One request; transport failures become a ProviderError (see classify_transport).
    On a tenant-host client the answer is read within its total deadline and size cap."""
    bounds: Bounds | None = getattr(http, "bounds", None)
    try:
        if bounds is None:
            return http.request(method, url, **kwargs)
        return _bounded(http, method, url, bounds, is_create=is_create, **kwargs)
    except httpx.HTTPError as exc:
        raise classify_transport(exc, is_create=is_create) from exc
    except outbound.ForbiddenTarget as exc:
        # Refused before connecting (the host now resolves to a private address, or a
        # redirect led there): nothing was sent, and trying again would not help.
        raise ProviderError(
            ErrorKind.PERMISSION_MISSING,
            f"The server is not a public HTTPS address: {exc.message}",
            code="unsafe_host",
            action=Action.CONTACT_SUPPORT,
        ) from exc


def _bounded(
    http: httpx.Client, method: str, url: str, bounds: Bounds, *, is_create: bool, **kwargs
) -> httpx.Response:
    """Stream the answer, counting decoded bytes against the cap and time against the
    deadline; returns a response whose body is already read."""
    deadline = time.monotonic() + bounds.deadline_s
    with http.stream(method, url, **kwargs) as response:
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > bounds.max_bytes:
                raise ProviderError(
                    # After a create the post may exist all the same: never a blind retry.
                    ErrorKind.OUTCOME_UNKNOWN if is_create else ErrorKind.PROVIDER_UNAVAILABLE,
                    f"The server's answer exceeds {bounds.max_bytes} bytes; it was not read.",
                    code="response_too_large",
                    http_status=response.status_code,
                )
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout("No full answer within the total deadline.")
        headers = [
            (name, value)
            for name, value in response.headers.multi_items()
            if name.lower() not in ("content-encoding", "content-length", "transfer-encoding")
        ]
        return httpx.Response(
            response.status_code,
            headers=headers,
            content=bytes(body),
            request=response.request,
            extensions=response.extensions,
        )


def json_body(response: httpx.Response) -> dict:
    """The response's JSON object, or {} when the body is empty, not JSON, or not an object."""
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def sleep(seconds: float) -> None:
    """Waits between polls; tests replace it to keep polling instant."""
    time.sleep(seconds)


def require_public_https(url: str) -> str:
    """Return `url` when it is HTTPS on a host whose every address is public; raise
    outbound.ForbiddenTarget otherwise."""
    if redirected():
        outbound.split_target(url, outbound.PUBLIC_HTTPS)
        return url  # the request goes to the platform fakes, never to this host
    return outbound.check_url(url, outbound.PUBLIC_HTTPS)
