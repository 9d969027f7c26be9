"""Small helpers shared by the API tests."""

import io
import json
from datetime import timedelta

from django.utils import timezone
from PIL import Image
from rest_framework.test import APIClient


def bearer(clear: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {clear}")
    return client


def png_bytes(width: int = 8, height: int = 6) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "red").save(buffer, format="PNG")
    return buffer.getvalue()


def later(**delta: float) -> str:
    """An ISO instant this far from now (default: an hour ahead)."""
    return (timezone.now() + timedelta(**(delta or {"hours": 1}))).isoformat()


def error(response) -> dict:
    """The envelope's error, after checking the response is one."""
    body = json.loads(response.content)
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    return body["error"]
