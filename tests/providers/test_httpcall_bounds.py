"""Calls to hosts a tenant chooses are bounded: a total deadline and a cap on the decoded
answer, against a real local server that drips or inflates its answers."""

import gzip
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from apps.providers import httpcall
from apps.providers.errors import ErrorKind, ProviderError

BOMB = gzip.compress(b"\0" * 20_000_000)  # about 20 kB on the wire, 20 MB decoded


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/bomb":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(BOMB)))
            self.end_headers()
            self.wfile.write(BOMB)
        elif self.path == "/drip":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            for _ in range(1000):  # one byte every 10 ms: each read is quick, the whole is not
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.01)
        else:
            body = b'{"ok": true}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "identity")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def _reach_the_local_server(server, settings):
    """A tenant-host client refuses loopback addresses; with the calls redirected to the
    platform fakes (as the tests and the soak run them) the local server is reachable."""
    settings.PROVIDER_API_REDIRECT = server


def test_a_normal_answer_reads_as_usual(server):
    with httpcall.client(tenant_host=True, timeout=2) as http:
        response = httpcall.send(http, "GET", f"{server}/ok", is_create=False)
    assert response.status_code == 200
    assert response.json() == {"ok": True}


def test_a_gzip_bomb_is_refused_before_it_is_inflated(server):
    with httpcall.client(tenant_host=True, timeout=2) as http, pytest.raises(ProviderError) as err:
        httpcall.send(http, "GET", f"{server}/bomb", is_create=False)
    assert err.value.code == "response_too_large"
    assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE


def test_a_too_large_answer_to_a_create_is_an_unknown_outcome(server):
    with httpcall.client(tenant_host=True, timeout=2) as http, pytest.raises(ProviderError) as err:
        httpcall.send(http, "GET", f"{server}/bomb", is_create=True)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN  # the post may exist: never resent


def test_a_slow_drip_ends_at_the_total_deadline(server):
    started = time.monotonic()
    with httpcall.client(tenant_host=True, timeout=1) as http, pytest.raises(ProviderError) as err:
        httpcall.send(http, "GET", f"{server}/drip", is_create=False)
    assert time.monotonic() - started < 5  # the per-read timeout alone would allow 10 s
    assert err.value.retryable is True


def test_an_ordinary_client_is_not_bounded(server):
    with httpcall.client(timeout=2) as http:
        response = httpcall.send(http, "GET", f"{server}/bomb", is_create=False)
    assert len(response.content) == 20_000_000
