"""Who acted, as the audit log records it: `apps.common.acting`'s answer and its label.

The address is the client's, resolved through the trusted proxies (TRUSTED_PROXY_COUNT,
the rule the per-IP limits follow), and the connection's peer is kept beside it: behind a
proxy the peer is the proxy, and the pair shows which hop said what."""

from __future__ import annotations

from dataclasses import dataclass

from apps.accounts.models import ApiToken, User
from apps.common import acting


@dataclass(frozen=True)
class Actor:
    user: User | None = None
    token: ApiToken | None = None
    ip: str | None = None  # the client, resolved through the trusted proxies
    user_agent: str = ""
    peer_ip: str | None = None  # the connection's peer (the proxy, behind one)
    name: str = ""  # someone without an account: a client through a link

    @property
    def label(self) -> str:
        if self.token is not None:
            return f"API token {self.token.name} ({self.token.prefix}…)"
        return self.user.email if self.user is not None else self.name


def current_actor() -> Actor:
    now = acting.current()
    token = now.token if isinstance(now.token, ApiToken) else None
    user = now.user if isinstance(now.user, User) else None
    return Actor(user=user, token=token, ip=now.ip, user_agent=now.user_agent, peer_ip=now.peer_ip)
