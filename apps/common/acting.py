"""Who the current code acts for: the request being handled (its signed-in person, or the
API token DRF authenticated), or an explicit `acting_as(...)` around other code.

`CurrentActorMiddleware` remembers the request while it is handled. DRF sets the token it
authenticated on the underlying request (`request.auth`), so API calls are attributed to
their token without the API knowing who asks. The audit log and per-person caps read it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse

USER_AGENT_MAX = 255


@dataclass(frozen=True)
class Acting:
    """user: the person (for a token, the person who created it); token: the API token,
    when one authenticated the request; ip and user_agent: where it came from."""

    user: Any = None
    token: Any = None
    ip: str | None = None
    user_agent: str = ""


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
    """The (ip, user agent) a request came from. The address is the connection's peer
    (REMOTE_ADDR): behind a proxy, the server in front must set it to the client's."""
    if request is None:
        return None, ""
    ip = request.META.get("REMOTE_ADDR") or None
    return ip, request.META.get("HTTP_USER_AGENT", "")[:USER_AGENT_MAX]


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
    token = request.__dict__.get("auth")
    if token is not None and hasattr(token, "prefix"):
        return Acting(user=token.created_by, token=token, ip=ip, user_agent=agent)
    user = request.__dict__.get("user")
    if user is not None and getattr(user, "is_authenticated", False):
        return Acting(user=user, ip=ip, user_agent=agent)
    return Acting(ip=ip, user_agent=agent)
