"""Who the current code acts for: the request being handled (its signed-in person, or the
API token DRF authenticated), or an explicit `acting_as(...)` around other code.

`CurrentActorMiddleware` remembers the request while it is handled. DRF sets the token it
authenticated on the underlying request (`request.auth`), so API calls are attributed to
their token without the API knowing who asks. The audit log and per-person caps read it.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import ipaddress
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

USER_AGENT_MAX = 255


@dataclass(frozen=True)
class Acting:
    """user: the person (for a token, the person who created it); token: the API token,
    when one authenticated the request; ip and user_agent: where it came from (ip: the
    client, resolved through the trusted proxies; peer_ip: the connection's peer)."""

    user: Any = None
    token: Any = None
    ip: str | None = None
    user_agent: str = ""
    peer_ip: str | None = None


_request: contextvars.ContextVar[HttpRequest | None] = contextvars.ContextVar(
    "acting_request", default=None
)
_override: contextvars.ContextVar[Acting | None] = contextvars.ContextVar(
    "acting_override", default=None
)


class CurrentActorMiddleware:
    """Makes the request being handled known to `current()` for its duration."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        reset = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(reset)


@contextlib.contextmanager
def acting_as(
    *, user: Any = None, token: Any = None, ip: str | None = None, user_agent: str = ""
) -> Iterator[None]:
    """Attribute what happens inside the block to this person or token (commands, code
    served outside Django's middleware such as the MCP endpoint, tests)."""
    if token is not None and user is None:
        user = getattr(token, "created_by", None)
    acting = Acting(user=user, token=token, ip=ip, user_agent=user_agent[:USER_AGENT_MAX])
    reset = _override.set(acting)
    try:
        yield
    finally:
        _override.reset(reset)


def client_of(request: HttpRequest | None) -> tuple[str | None, str]:
    """The (ip, user agent) a request came from. The address is the client's as the
    outermost of TRUSTED_PROXY_COUNT proxies saw it (entries further left in
    X-Forwarded-For are the client's to forge), or with no proxy the connection's peer."""
    if request is None:
        return None, ""
    return forwarded_client(request), request.META.get("HTTP_USER_AGENT", "")[:USER_AGENT_MAX]


def peer_of(request: HttpRequest | None) -> str | None:
    """The connection's peer (REMOTE_ADDR): the proxy in front, when there is one."""
    return (request.META.get("REMOTE_ADDR") or None) if request is not None else None


def forwarded_client(request: HttpRequest) -> str | None:
    """The client address through the trusted proxies (the rule of the per-IP limits,
    apps.security.client_ip, without their /64 grouping); the peer when X-Forwarded-For
    has no address there."""
    peer = peer_of(request)
    hops = settings.TRUSTED_PROXY_COUNT
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [a for a in forwarded if a]
    if not hops or not forwarded:
        return peer
    try:
        return str(ipaddress.ip_address(forwarded[-min(hops, len(forwarded))]))
    except ValueError:
        return peer


def current() -> Acting:
    """Who is acting now: an explicit `acting_as`, else the request's token or person,
    else nobody (a worker, a command)."""
    override = _override.get()
    if override is not None:
        return override
    request = _request.get()
    if request is None:
        return Acting()
    ip, agent = client_of(request)
    anonymous = Acting(ip=ip, user_agent=agent, peer_ip=peer_of(request))
    token = request.__dict__.get("auth")
    if token is not None and hasattr(token, "prefix"):
        return dataclasses.replace(anonymous, user=token.created_by, token=token)
    user = request.__dict__.get("user")
    if user is not None and getattr(user, "is_authenticated", False):
        return dataclasses.replace(anonymous, user=user)
    return anonymous
