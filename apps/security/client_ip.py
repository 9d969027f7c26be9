"""The client's address, as the per-IP limits count it."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    """REMOTE_ADDR, or with TRUSTED_PROXY_COUNT proxies in front, the address the outermost
    trusted proxy saw (X-Forwarded-For entries further left are the client's to forge)."""
    address = request.META.get("REMOTE_ADDR", "")
    hops = settings.TRUSTED_PROXY_COUNT
    if hops:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [a for a in forwarded if a]
        if forwarded:
            address = forwarded[-min(hops, len(forwarded))]
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:45] or "unknown"
    if ip.version == 6:
        # One IPv6 client usually holds a whole /64: count the network, not each address.
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)
