"""Reaching a receiver without being turned against our own network (SSRF).

An endpoint URL is checked twice: when it is saved (scheme, and every address its host
resolves to) and again on every delivery, where the host is resolved once, each address is
checked, and the connection goes to a checked address. The request still names the
original host (Host header, TLS SNI and certificate check), so a DNS answer that changes
between the check and the connection (rebinding) cannot redirect it.

Refused: loopback, private, link-local, shared (CGNAT), multicast, reserved and
unspecified addresses, IPv4 hidden in IPv6 forms, and the cloud metadata addresses.
WEBHOOK_ALLOW_PRIVATE_TARGETS lets a self-hosted install deliver on its own network (the
metadata addresses stay refused); WEBHOOK_ALLOW_HTTP allows plain http:// URLs.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpcore
import httpx
from django.conf import settings

from apps.common.errors import ValidationFailed
from apps.webhooks.constants import MAX_RESPONSE_READ_BYTES, USER_AGENT

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Instance metadata services (AWS/GCP/Azure/OpenStack, AWS over IPv6, ECS tasks, Alibaba).
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "fd00:ec2::254", "169.254.170.2", "100.100.100.200")
)


class ForbiddenTarget(ValidationFailed):
    """The URL may not receive webhooks (scheme, or an address it resolves to)."""

    code = "WEBHOOK_URL_FORBIDDEN"


def _unwrap(ip: IPAddress) -> IPAddress:
    """The IPv4 address behind IPv4-mapped, 6to4 and Teredo IPv6 forms."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip.sixtofour is not None:
            return ip.sixtofour
        if ip.teredo is not None:
            return ip.teredo[1]
    return ip


def address_problem(address: str) -> str | None:
    """Why the address may not be a webhook target, or None when it may."""
    try:
        ip = _unwrap(ipaddress.ip_address(address.split("%", 1)[0]))
    except ValueError:
        return "is not an IP address"
    if ip in METADATA_ADDRESSES:
        return "is a cloud metadata address"
    if ip.is_multicast or ip.is_unspecified or ip.is_reserved:
        return "is a multicast, unspecified or reserved address"
    if settings.WEBHOOK_ALLOW_PRIVATE_TARGETS:
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
    return list(dict.fromkeys(info[4][0] for info in infos))


def checked_addresses(host: str, port: int) -> list[str]:
    """The host's addresses, if every one of them is allowed; ForbiddenTarget otherwise.
    A name with one bad address among good ones is refused: the attacker picks which."""
    try:
        addresses = resolve(host, port)
    except (OSError, UnicodeError) as exc:
        raise ForbiddenTarget(
            f"{host} could not be resolved.",
            code="WEBHOOK_URL_UNRESOLVABLE",
            details={"url": [f"{host} could not be resolved."]},
        ) from exc
    if not addresses:
        raise ForbiddenTarget(f"{host} has no address.", details={"url": ["No address."]})
    for address in addresses:
        problem = address_problem(address)
        if problem:
            message = f"{host} resolves to {address}, which {problem}."
            raise ForbiddenTarget(message, details={"url": [message]})
    return addresses


def split_target(url: str) -> tuple[str, int]:
    """(host, port) of an allowed URL shape; ForbiddenTarget for anything else."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ForbiddenTarget(f"{url!r} is not a valid URL.", details={"url": [str(exc)]}) from exc
    allowed = ("https", "http") if settings.WEBHOOK_ALLOW_HTTP else ("https",)
    if parts.scheme not in allowed:
        message = "The URL must start with https://." + (
            "" if settings.WEBHOOK_ALLOW_HTTP else " (Plain http is refused.)"
        )
        raise ForbiddenTarget(message, details={"url": [message]})
    if not parts.hostname or parts.username or parts.password:
        message = "The URL needs a host and no user name or password."
        raise ForbiddenTarget(message, details={"url": [message]})
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def check_url(url: str) -> str:
    """Return the URL if webhooks may be sent to it now; ForbiddenTarget otherwise."""
    host, port = split_target(url)
    checked_addresses(host, port)
    return url


class _PinnedBackend(httpcore.SyncBackend):
    """Resolves and checks the host at connection time, then connects to a checked
    address; TLS above it still uses the URL's host name for SNI and the certificate."""

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options=None,
    ) -> httpcore.NetworkStream:
        last_error: Exception | None = None
        for address in checked_addresses(host, port):
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


class _PinnedTransport(httpx.HTTPTransport):
    """httpx's transport over the pinned backend. Never uses a proxy from the
    environment: a proxy would resolve the host itself, after our check."""

    def __init__(self) -> None:
        super().__init__(trust_env=False, retries=0)
        # httpx builds its connection pool in __init__ without a hook for the network
        # backend; replace the pool with one that uses ours (httpx is pinned below 1.0).
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=1,
            max_keepalive_connections=0,
            network_backend=_PinnedBackend(),
        )


@dataclass(frozen=True)
class Response:
    status_code: int
    headers: httpx.Headers
    body: bytes
    latency_ms: int


def post(url: str, *, body: bytes, headers: dict[str, str]) -> Response:
    """POST body to url through the SSRF guard, with short timeouts, no redirects, and at
    most MAX_RESPONSE_READ_BYTES of the answer read. Raises ForbiddenTarget, or
    httpx.HTTPError on a network failure or timeout."""
    split_target(url)
    timeout_s = settings.WEBHOOK_TIMEOUT_S
    started = time.monotonic()
    with (
        httpx.Client(
            transport=_PinnedTransport(),
            timeout=httpx.Timeout(timeout_s),
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"},
        ) as client,
        client.stream("POST", url, content=body, headers=headers) as response,
    ):
        latency_ms = int((time.monotonic() - started) * 1000)
        chunks: list[bytes] = []
        read = 0
        # A receiver that trickles its body is cut off at the read cap or the deadline.
        deadline = started + 2 * timeout_s
        for chunk in response.iter_raw():
            chunks.append(chunk)
            read += len(chunk)
            if read >= MAX_RESPONSE_READ_BYTES or time.monotonic() > deadline:
                break
        return Response(
            status_code=response.status_code,
            headers=response.headers,
            body=b"".join(chunks)[:MAX_RESPONSE_READ_BYTES],
            latency_ms=latency_ms,
        )
