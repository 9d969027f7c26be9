"""Reading a multipart/form-data body, for fakes that take uploads as forms."""

from __future__ import annotations

from email.parser import BytesParser
from email.policy import HTTP

from loadtest.platform_fakes.base import FakeRequest


def form_fields(request: FakeRequest) -> dict[str, bytes]:
    """Every part of a multipart body by name (file parts as their bytes); a urlencoded
    body's fields as bytes too, so a handler reads either kind of form the same way."""
    content_type = request.headers.get("content-type", "")
    if not content_type.startswith("multipart/"):
        return {k: v.encode() for k, v in request.form().items()}
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + request.body)
    fields: dict[str, bytes] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        # An RFC 2231 name comes as a tuple; no caller sends one, so it is not a field here.
        if isinstance(name, str) and name:
            payload = part.get_payload(decode=True)
            fields[name] = payload if isinstance(payload, bytes) else b""
    return fields


def params(request: FakeRequest) -> dict[str, str]:
    """A Graph-style call's parameters: the query string, then the form body (text parts)."""
    merged = {k: v[-1] for k, v in request.query.items()}
    for name, value in form_fields(request).items():
        try:
            merged[name] = value.decode("utf-8")
        except UnicodeDecodeError:
            continue  # a file part; read it with form_fields
    return merged
