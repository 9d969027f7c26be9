"""The outbound guard refuses every address form that reaches our own network, before the
call and at connection time, where it connects only to the address it checked."""

from __future__ import annotations

import ipaddress
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpcore
import httpx
import pytest

from apps.common import outbound

BLOCKED = [
    "10.1.2.3",  # private
    "172.16.0.9",
    "192.168.1.20",
    "127.0.0.1",  # loopback
    "127.8.9.10",
    "::1",
    "fe80::1",  # link-local
    "169.254.10.1",
    "169.254.169.254",  # cloud metadata
    "fd00:ec2::254",
    "100.64.0.1",  # shared address space (CGNAT)
    "100.127.255.254",
    "2002:a00:1::",  # 6to4 carrying 10.0.0.1
    "2002:7f00:1::1",  # 6to4 carrying 127.0.0.1
    "64:ff9b::a00:1",  # NAT64 carrying 10.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 carrying 169.254.169.254
    "::ffff:10.0.0.1",  # IPv4-mapped
    "::ffff:127.0.0.1",
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo carrying 10.0.0.1
    "fc00::1",  # unique local
    "0.0.0.0",
    "224.0.0.1",
    "240.0.0.1",
    "ff02::1",
]


@pytest.mark.parametrize("address", BLOCKED)
def test_it_refuses_every_non_public_form(address):
    assert outbound.address_problem(address) is not None


@pytest.mark.parametrize("address", BLOCKED)
def test_a_url_naming_a_blocked_address_is_refused(address):
    host = f"[{address}]" if ":" in address else address

    with pytest.raises(outbound.ForbiddenTarget):
        outbound.check_url(f"https://{host}/x")


@pytest.mark.parametrize(
    "address",
    ["93.184.215.14", "2606:2800:220:1::1", "::ffff:93.184.215.14", "2002:5db8:d70e::1"],
)
def test_public_addresses_are_allowed(address):
    assert outbound.address_problem(address) is None


def test_nat64_names_the_private_address_it_carries():
    carried = outbound.embedded_ipv4(ipaddress.ip_address("64:ff9b::a00:1"))

    assert carried == ipaddress.ip_address("10.0.0.1")


def test_allowing_private_targets_still_refuses_metadata_and_reserved_addresses():
    policy = outbound.Policy(allow_private=True)

    assert outbound.address_problem("10.0.0.1", policy) is None
    assert outbound.address_problem("127.0.0.1", policy) is None
    assert outbound.address_problem("169.254.169.254", policy) == "is a cloud metadata address"
    assert outbound.address_problem("64:ff9b::a9fe:a9fe", policy) == "is a cloud metadata address"
    assert outbound.address_problem("240.0.0.1", policy) is not None


def test_a_name_resolving_to_a_private_address_is_refused(monkeypatch):
    monkeypatch.setattr(outbound, "resolve", lambda host, port: ["10.0.0.7"])

    with pytest.raises(outbound.ForbiddenTarget) as refused:
        outbound.check_url("https://innocent.example.com/x")

    assert "10.0.0.7" in refused.value.message
    assert refused.value.unresolvable is False


def test_one_private_address_among_public_ones_is_enough_to_refuse(monkeypatch):
    monkeypatch.setattr(outbound, "resolve", lambda host, port: ["93.184.215.14", "::1"])

    with pytest.raises(outbound.ForbiddenTarget):
        outbound.check_url("https://mixed.example.com/x")


def test_a_name_that_does_not_resolve_is_refused_as_unresolvable():
    with pytest.raises(outbound.ForbiddenTarget) as refused:
        outbound.check_url("https://no-such-host.invalid/x")

    assert refused.value.unresolvable is True


@pytest.mark.parametrize(
    "url",
    ["http://example.com/", "ftp://example.com/", "https://user:pw@example.com/", "https:///x"],
)
def test_other_shapes_are_refused(monkeypatch, url):
    monkeypatch.setattr(outbound, "resolve", lambda host, port: ["93.184.215.14"])

    with pytest.raises(outbound.ForbiddenTarget):
        outbound.check_url(url)


def test_plain_http_is_accepted_when_the_policy_allows_it(monkeypatch):
    monkeypatch.setattr(outbound, "resolve", lambda host, port: ["93.184.215.14"])
    policy = outbound.Policy(allow_http=True)

    assert outbound.check_url("http://example.com/", policy) == "http://example.com/"


# --- at connection time ------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.server.hosts.append(self.headers["Host"])
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", self.path.split("to=", 1)[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


@pytest.fixture
def network(monkeypatch):
    """A fake internet: public.example resolves to a public address, intranet.example to a
    private one, and every TCP connection lands on a local server; returns the addresses
    connected to and the Host headers the server saw."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.hosts = []
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    connected: list[str] = []
    real_connect = httpcore.SyncBackend.connect_tcp

    def connect_tcp(self, host, port, **kwargs):
        connected.append(host)
        return real_connect(self, "127.0.0.1", httpd.server_address[1], **kwargs)

    names = {"public.example": ["93.184.215.14"], "intranet.example": ["10.0.0.1"]}
    monkeypatch.setattr(outbound, "resolve", lambda host, port: names.get(host, [host]))
    monkeypatch.setattr(httpcore.SyncBackend, "connect_tcp", connect_tcp)
    yield connected, httpd.hosts
    httpd.shutdown()
    httpd.server_close()


def _client(policy: outbound.Policy) -> httpx.Client:
    return httpx.Client(transport=outbound.GuardedTransport(policy), follow_redirects=True)


def test_it_connects_to_the_checked_address_and_names_the_original_host(network):
    connected, hosts = network

    with _client(outbound.Policy(allow_http=True)) as http:
        response = http.get("http://public.example/page")

    assert response.status_code == 200
    assert connected == ["93.184.215.14"]
    assert hosts == ["public.example"]


def test_a_redirect_to_a_private_address_is_refused_before_connecting(network):
    connected, hosts = network

    with (
        _client(outbound.Policy(allow_http=True)) as http,
        pytest.raises(outbound.ForbiddenTarget) as refused,
    ):
        http.get("http://public.example/redirect?to=http://intranet.example/admin")

    assert "10.0.0.1" in refused.value.message
    assert connected == ["93.184.215.14"]
    assert hosts == ["public.example"]


def test_a_redirect_to_a_private_ip_literal_is_refused(network):
    connected, _ = network

    with (
        _client(outbound.Policy(allow_http=True)) as http,
        pytest.raises(outbound.ForbiddenTarget),
    ):
        http.get("http://public.example/redirect?to=http://169.254.169.254/latest/meta-data/")

    assert connected == ["93.184.215.14"]


def test_an_https_only_transport_refuses_plain_http_before_connecting(network):
    connected, _ = network

    with _client(outbound.PUBLIC_HTTPS) as http, pytest.raises(outbound.ForbiddenTarget):
        http.get("http://public.example/")

    assert connected == []
