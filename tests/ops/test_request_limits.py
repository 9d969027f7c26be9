"""The ASGI web process's limits (apps.ops.request_limits, config.asgi): a ceiling on each
path's body enforced before and while it streams, a body-read timeout, header hygiene."""

import asyncio
import socket
import threading
import time

import pytest
import uvicorn

from config.asgi import django_wsgi, site_application

MIB = 1024 * 1024


def _scope(path="/login/", headers=(), method="POST"):
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": list(headers),
        "client": ("203.0.113.9", 50000),
        "server": ("testserver", 80),
    }


class Spy:
    """A WSGI application that records what it saw and reads the whole body."""

    def __init__(self, read=True):
        self.read = read
        self.calls = 0
        self.environ = {}
        self.body_read = 0

    def __call__(self, environ, start_response):
        self.calls += 1
        self.environ = dict(environ)
        if self.read:
            stream = environ["wsgi.input"]
            while chunk := stream.read(64 * 1024):
                self.body_read += len(chunk)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]


def _run(app, scope, receive):
    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body, sent


def _chunks(size, count):
    """A receive giving `count` chunks of `size` bytes (the last one ends the body); counts
    how many were taken."""
    taken = {"n": 0}

    async def receive():
        taken["n"] += 1
        return {"type": "http.request", "body": b"x" * size, "more_body": taken["n"] < count}

    return receive, taken


def test_an_anonymous_300_mib_declared_login_post_is_refused_before_anything_is_read():
    """Django is never called and not a byte is received: nothing can reach memory or disk."""
    calls = {"app": 0, "receive": 0}

    def counting_django(environ, start_response):
        calls["app"] += 1
        return django_wsgi(environ, start_response)

    async def receive():
        calls["receive"] += 1
        return {"type": "http.request", "body": b"x" * MIB, "more_body": True}

    headers = [
        (b"content-type", b"multipart/form-data; boundary=zzz"),
        (b"content-length", str(300 * MIB).encode()),
    ]
    status, body, sent = _run(
        site_application(counting_django), _scope("/login/", headers), receive
    )
    assert status == 413
    assert calls == {"app": 0, "receive": 0}
    assert b"limited to 2621440 bytes" in body
    start = sent[0]
    assert (b"connection", b"close") in start["headers"]


def test_the_same_request_over_a_socket_gets_413_while_the_client_still_holds_its_body():
    """Served by uvicorn: the client sends the headers of a 300 MiB body and not a byte of
    it, and is answered at once (it was never asked to go on)."""
    spy = Spy()
    app = site_application(spy)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
            client.sendall(
                b"POST /login/ HTTP/1.1\r\nHost: testserver\r\n"
                b"Content-Type: application/x-www-form-urlencoded\r\n"
                + f"Content-Length: {300 * MIB}\r\n".encode()
                + b"Expect: 100-continue\r\n\r\n"
            )
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 413 ")
        assert b"100 Continue" not in answer
        assert spy.calls == 0
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_a_streamed_body_over_the_ceiling_is_cut_off_as_it_passes_it(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1 * MIB
    spy = Spy()
    receive, taken = _chunks(64 * 1024, count=10_000)  # 625 MiB if it were all read
    headers = [(b"transfer-encoding", b"chunked"), (b"content-type", b"application/json")]
    status, body, _ = _run(site_application(spy), _scope("/api/v1/publications", headers), receive)
    assert status == 413
    assert b'"code": "PAYLOAD_TOO_LARGE"' in body
    # Cut off with the chunk that passed 1 MiB: 17 of 64 KiB, and Django got 16 of them.
    assert taken["n"] == 17
    assert spy.body_read <= 1 * MIB


def test_the_ceiling_is_the_paths_an_upload_path_takes_what_login_refuses(settings):
    settings.MEDIA_MAX_UPLOAD_BYTES = 8 * MIB
    size = 4 * MIB
    headers = [
        (b"content-type", b"multipart/form-data; boundary=zzz"),
        (b"content-length", str(size).encode()),
    ]
    spy = Spy()
    receive, _ = _chunks(MIB, count=4)
    status, _, _ = _run(site_application(spy), _scope("/api/v1/media", headers), receive)
    assert (status, spy.body_read) == (200, size)

    refused = Spy()
    receive, taken = _chunks(MIB, count=4)
    status, _, _ = _run(site_application(refused), _scope("/login/", headers), receive)
    assert (status, refused.calls, taken["n"]) == (413, 0, 0)

    # A streamed upload over the media ceiling is cut off too.
    settings.MEDIA_MAX_UPLOAD_BYTES = 2 * MIB
    cut = Spy()
    receive, taken = _chunks(MIB, count=100)
    chunked = [(b"transfer-encoding", b"chunked"), headers[0]]
    path = "/w/acme/media/upload/"
    status, body, _ = _run(site_application(cut), _scope(path, chunked), receive)
    assert status == 413 and taken["n"] == 3
    assert body.startswith(b"Request bodies here are limited to")  # plain text on the site


def test_a_body_that_stops_arriving_is_answered_408(settings):
    settings.WEB_BODY_IDLE_TIMEOUT_S = 0.2
    spy = Spy()
    first = {"sent": False}

    async def receive():
        if not first["sent"]:
            first["sent"] = True
            return {"type": "http.request", "body": b"a=1", "more_body": True}
        await asyncio.sleep(30)  # the client went quiet

    headers = [(b"content-length", b"100"), (b"content-type", b"application/json")]
    started = time.monotonic()
    status, body, _ = _run(site_application(spy), _scope("/api/v1/publications", headers), receive)
    assert status == 408
    assert b"REQUEST_TIMEOUT" in body
    assert time.monotonic() - started < 5


def test_a_slow_drip_outside_the_upload_paths_meets_the_whole_body_timeout(settings):
    settings.WEB_BODY_IDLE_TIMEOUT_S = 5
    settings.WEB_BODY_TIMEOUT_S = 0.3

    async def receive():
        await asyncio.sleep(0.05)  # each piece well inside the idle timeout
        return {"type": "http.request", "body": b"a", "more_body": True}

    headers = [(b"transfer-encoding", b"chunked")]
    started = time.monotonic()
    status, _, _ = _run(site_application(Spy()), _scope("/login/", headers), receive)
    assert status == 408
    assert time.monotonic() - started < 5


def test_header_names_with_underscores_are_dropped_and_cookies_joined_with_semicolons():
    spy = Spy(read=False)

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    headers = [
        (b"x-forwarded-for", b"198.51.100.7"),
        (b"x_forwarded_for", b"10.9.9.9"),
        (b"X_Real_IP", b"10.9.9.8"),
        (b"cookie", b"sessionid=abc"),
        (b"cookie", b"csrftoken=def"),
        (b"user-agent", b"test"),
    ]
    status, _, _ = _run(site_application(spy), _scope("/", headers, method="GET"), receive)
    assert status == 200
    assert spy.environ["HTTP_X_FORWARDED_FOR"] == "198.51.100.7"
    assert "HTTP_X_REAL_IP" not in spy.environ
    assert spy.environ["HTTP_COOKIE"] == "sessionid=abc; csrftoken=def"
    assert spy.environ["HTTP_USER_AGENT"] == "test"


def test_a_body_within_its_ceiling_streams_to_the_application_whole():
    spy = Spy()
    receive, taken = _chunks(1000, count=5)
    headers = [(b"content-length", b"5000"), (b"content-type", b"application/json")]
    status, body, _ = _run(site_application(spy), _scope("/api/v1/publications", headers), receive)
    assert (status, body, spy.body_read, taken["n"]) == (200, b"ok", 5000, 5)


@pytest.mark.parametrize("length", [b"-1", b"12a"])
def test_a_malformed_content_length_is_refused(length):
    spy = Spy()
    receive, _ = _chunks(10, 1)
    status, _, _ = _run(
        site_application(spy), _scope("/login/", [(b"content-length", length)]), receive
    )
    assert (status, spy.calls) == (413, 0)
