"""Calling a URL a tenant chose without being turned against our own network (SSRF).

Webhook receivers, Mastodon instances, Bluesky data servers and pages fetched for link
cards are all addresses someone outside the platform picked. Before such a call the URL's
shape is checked (scheme, a host, no credentials) and every address its host resolves to.
At connection time `GuardedTransport` resolves the host again, checks each address and
connects to a checked one, while the request still names the original host (Host header,
TLS SNI and certificate check): a DNS answer that changes between the check and the
connection (rebinding) cannot redirect it, and neither can a redirect the client follows.

Refused: loopback, private, link-local, shared (CGNAT), multicast, reserved, unspecified
and other non-global addresses; IPv4 addresses reached through IPv6 (IPv4-mapped, 6to4,
Teredo, NAT64 64:ff9b::/96) are judged by the IPv4 address they carry; the cloud metadata
addresses are refused under every policy.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Instance metadata services (AWS/GCP/Azure/OpenStack, AWS over IPv6, ECS tasks, Alibaba).
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "fd00:ec2::254", "169.254.170.2", "100.100.100.200")
)

# RFC 6052's well-known NAT64 prefix: the last 32 bits are the IPv4 address a translator
# connects to.
NAT64_PREFIX = ipaddress.ip_network("64:ff9b::/96")


@dataclass(frozen=True)
class Policy:
    """What a caller allows beyond public HTTPS. `allow_private` lets a self-hosted install
    reach its own network (loopback, private, link-local); the metadata addresses, multicast,
    reserved and unspecified addresses stay refused."""

    allow_http: bool = False
    allow_private: bool = False
    # Only this machine or its own network (loopback, private, link-local): a local
    # install's plain-http receiver, never a public address over http.
    private_only: bool = False


PUBLIC_HTTPS = Policy()


class ForbiddenTarget(ValueError):
    """The URL may not be called: its shape, or an address its host resolves to.
    `unresolvable` tells a host that has no address from one whose address is refused."""

    def __init__(self, message: str, *, unresolvable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.unresolvable = unresolvable


def embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (IPv4-mapped, 6to4, Teredo, NAT64), if any."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in NAT64_PREFIX:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_problem(address: str, policy: Policy = PUBLIC_HTTPS) -> str | None:
    """Why the address may not be called under the policy, or None when it may."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "is not an IP address"
    ip = embedded_ipv4(ip) or ip
    if ip in METADATA_ADDRESSES:
        return "is a cloud metadata address"
    if ip.is_multicast or ip.is_unspecified or ip.is_reserved:
        return "is a multicast, unspecified or reserved address"
    if policy.private_only and ip.is_global:
        return "is a public address (plain http goes only to this machine or its network)"
    if policy.allow_private:
        return None
    if ip.is_loopback:
        return "is a loopback address"
    if ip.is_link_local:
        return "is a link-local address"
    if ip.is_private or not ip.is_global:
        return "is a private or non-public address"
    return None


def resolve(host: str, port: int) -> list[str]:
    """Every address the host resolves to (an IP literal resolves to itself)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    # An INET/INET6 stream address is (host, port, ...): its first item is the address text.
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def checked_addresses(host: str, port: int, policy: Policy = PUBLIC_HTTPS) -> list[str]:
    """The host's addresses, if every one of them is allowed; ForbiddenTarget otherwise.
    A name with one bad address among good ones is refused: the attacker picks which."""
    try:
        addresses = resolve(host, port)
    except (OSError, UnicodeError) as exc:
        raise ForbiddenTarget(f"{host} could not be resolved.", unresolvable=True) from exc
    if not addresses:
        raise ForbiddenTarget(f"{host} has no address.")
    for address in addresses:
        problem = address_problem(address, policy)
        if problem:
            raise ForbiddenTarget(f"{host} resolves to {address}, which {problem}.")
    return addresses


def split_target(url: str, policy: Policy = PUBLIC_HTTPS) -> tuple[str, int]:
    """(host, port) of an allowed URL shape; ForbiddenTarget for anything else."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ForbiddenTarget(f"{url!r} is not a valid URL ({exc}).") from exc
    allowed = ("https", "http") if policy.allow_http else ("https",)
    if parts.scheme not in allowed:
        raise ForbiddenTarget(
            "The URL must start with https://."
            + ("" if policy.allow_http else " (Plain http is refused.)")
        )
    if not parts.hostname or parts.username or parts.password:
        raise ForbiddenTarget("The URL needs a host and no user name or password.")
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def check_url(url: str, policy: Policy = PUBLIC_HTTPS) -> str:
    """Return the URL if it may be called now; ForbiddenTarget otherwise."""
    host, port = split_target(url, policy)
    checked_addresses(host, port, policy)
    return url


class _PinnedBackend(httpcore.SyncBackend):
    """Resolves and checks the host at connection time, then connects to a checked
    address; TLS above it still uses the URL's host name for SNI and the certificate."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options=None,
    ) -> httpcore.NetworkStream:
        last_error: Exception | None = None
        for address in checked_addresses(host, port, self.policy):
            try:
                return super().connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as exc:
                last_error = exc
        raise last_error or httpcore.ConnectError(f"Could not connect to {host}.")


class GuardedTransport(httpx.HTTPTransport):
    """httpx's transport that checks every request's URL (a followed redirect included)
    and connects only to checked addresses; ForbiddenTarget escapes from the client's call.
    Never uses a proxy from the environment: a proxy would resolve the host itself, after
    the check."""

    def __init__(self, policy: Policy = PUBLIC_HTTPS) -> None:
        super().__init__(trust_env=False, retries=0)
        self.policy = policy
        # httpx builds its connection pool in __init__ without a hook for the network
        # backend; replace the pool with one that uses ours (httpx is pinned below 1.0).
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            network_backend=_PinnedBackend(policy),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        split_target(str(request.url), self.policy)
        return super().handle_request(request)
