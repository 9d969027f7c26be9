"""apps.ops.threaded_wsgi: a WSGI application served as ASGI from a pool of threads."""

import asyncio
import threading

import pytest

from apps.ops import threaded_wsgi
from apps.ops.threaded_wsgi import ThreadedWsgi


def _scope(**overrides):
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "scheme": "https",
        "path": "/api/v1/caf\u00e9",
        "root_path": "",
        "query_string": b"a=1&b=2",
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", b"11"),
            (b"x-tag", b"one"),
            (b"x-tag", b"two"),
        ],
        "client": ("203.0.113.9", 50000),
        "server": ("api.example.org", 443),
    }
    return {**scope, **overrides}


def _serve(app, scope, chunks=(b'{"a":', b" 1}")):
    """Run one request through the ASGI app; (messages sent, the environ the app saw)."""
    sent = []
    incoming = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]

    async def receive():
        return incoming.pop(0)

    async def send(message):
        sent.append(message)

    asyncio.run(ThreadedWsgi(app)(scope, receive, send))
    return sent


def test_the_environ_and_body_are_the_requests_and_the_answer_comes_back_whole():
    seen = {}

    def app(environ, start_response):
        seen.update(environ, body=environ["wsgi.input"].read(), thread=threading.current_thread())
        start_response(
            "201 Created", [("Content-Type", "application/json"), ("Set-Cookie", " c=1; Path=/")]
        )
        return [b'{"ok":', b" true}"]

    sent = _serve(app, _scope())

    assert seen["REQUEST_METHOD"] == "POST"
    assert seen["PATH_INFO"] == "/api/v1/caf\u00e9".encode().decode("latin-1")
    assert seen["QUERY_STRING"] == "a=1&b=2"
    assert (seen["CONTENT_TYPE"], seen["CONTENT_LENGTH"]) == ("application/json", "11")
    assert seen["HTTP_X_TAG"] == "one,two"
    assert seen["wsgi.url_scheme"] == "https"
    assert (seen["REMOTE_ADDR"], seen["SERVER_NAME"], seen["SERVER_PORT"]) == (
        "203.0.113.9",
        "api.example.org",
        "443",
    )
    assert seen["body"] == b'{"a": 1}'
    assert seen["thread"] is not threading.main_thread()
    assert sent[0] == {
        "type": "http.response.start",
        "status": 201,
        "headers": [(b"content-type", b"application/json"), (b"set-cookie", b"c=1; Path=/")],
    }
    assert b"".join(m.get("body", b"") for m in sent[1:]) == b'{"ok": true}'
    assert sent[-1] == {"type": "http.response.body", "body": b""}


def test_a_long_answer_is_sent_as_it_is_produced_and_closed(monkeypatch):
    monkeypatch.setattr(threaded_wsgi, "FLUSH_BYTES", 10)
    closed = []
    sent_while_producing = []

    class Streamed:
        def __iter__(self):
            for i in range(5):
                sent_while_producing.append(len(sent))
                yield b"x" * 8 + str(i).encode()

        def close(self):
            closed.append(True)

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return Streamed()

    sent = []
    incoming = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive():
        return incoming.pop(0)

    async def send(message):
        sent.append(message)

    asyncio.run(ThreadedWsgi(app)(_scope(method="GET"), receive, send))

    assert closed == [True]
    assert sent_while_producing[-1] > 0  # parts went out before the last was made
    assert b"".join(m.get("body", b"") for m in sent[1:]) == b"".join(
        b"x" * 8 + str(i).encode() for i in range(5)
    )
    assert sent[0]["type"] == "http.response.start"


def test_a_client_gone_before_its_body_gets_no_answer():
    def app(environ, start_response):  # pragma: no cover - never called
        raise AssertionError("the app ran")

    async def receive():
        return {"type": "http.disconnect"}

    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(ThreadedWsgi(app)(_scope(), receive, send))
    assert sent == []


def test_only_http_is_served():
    with pytest.raises(ValueError, match="websocket"):
        asyncio.run(ThreadedWsgi(lambda e, s: [])({"type": "websocket"}, None, None))
