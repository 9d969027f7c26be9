"""A general rate limit on the web app's writes, per signed-in person or per IP address.

Fixed windows counted in PostgreSQL with one upsert per request, so the limit holds across
every web process and host. The token API has its own throttle (API_THROTTLE_RATE), and the
sandbox's platform endpoints answer the worker, so neither is counted here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from apps.security.client_ip import client_ip
from apps.security.models import RateCounter

SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")
EXEMPT_PREFIXES = ("/api/", "/sandbox/", "/healthz", "/readyz", "/metrics")
PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600}

# The table is RateCounter's (security_ratecounter); one statement, so two requests at once
# both count.
_UPSERT = """
    INSERT INTO security_ratecounter (key, window_start, hits, created_at, updated_at)
    VALUES (%s, %s, 1, %s, %s)
    ON CONFLICT (key, window_start)
    DO UPDATE SET hits = security_ratecounter.hits + 1, updated_at = EXCLUDED.updated_at
    RETURNING hits
"""


def parse_rate(rate: str) -> tuple[int, int] | None:
    """'600/min' as (600, 60); None for no limit."""
    if not rate:
        return None
    count, _, period = rate.partition("/")
    return int(count), PERIODS[period]


def rate_hit(*, key: str, period_s: int, now: datetime) -> tuple[int, int]:
    """Count one request of `key` in the current window. Returns (hits in the window
    including this one, seconds until the window ends)."""
    epoch = now.timestamp()
    start = datetime.fromtimestamp(epoch - epoch % period_s, tz=UTC)
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT, [key[:100], start, now, now])
        hits = cursor.fetchone()[0]
    if hits == 1:
        # A new window opened: windows that ended are of no further use.
        RateCounter.objects.filter(window_start__lt=start - timedelta(seconds=period_s)).delete()
    return hits, max(1, math.ceil(start.timestamp() + period_s - epoch))


class WebRateLimitMiddleware:
    """Over WEB_RATE_LIMIT writes in a window, 429 with Retry-After and a page saying when."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        rate = parse_rate(settings.WEB_RATE_LIMIT)
        if rate is None or request.method in SAFE_METHODS or _exempt(request.path):
            return self.get_response(request)
        limit, period_s = rate
        user = getattr(request, "user", None)
        key = f"user:{user.pk}" if user is not None and user.is_authenticated else None
        hits, retry_after = rate_hit(
            key=key or f"ip:{client_ip(request)}", period_s=period_s, now=timezone.now()
        )
        if hits > limit:
            return too_many(request, retry_after_s=retry_after, message=_message(retry_after))
        return self.get_response(request)


def too_many(request: HttpRequest, *, retry_after_s: int, message: str) -> HttpResponse:
    """The 429 page the sign-in throttles and the rate limit share."""
    response = render(request, "security/too_many.html", {"message": message}, status=429)
    response["Retry-After"] = str(retry_after_s)
    return response


def _exempt(path: str) -> bool:
    return path.startswith(EXEMPT_PREFIXES) or path == "/mcp" or path.startswith("/mcp/")


def _message(retry_after_s: int) -> str:
    if retry_after_s < 60:
        return f"Too many requests. Try again in {retry_after_s} seconds."
    minutes = math.ceil(retry_after_s / 60)
    return f"Too many requests. Try again in {minutes} minute{'s' if minutes != 1 else ''}."
