"""Rate limits per API token.

Counts live in Django's cache. The default local-memory cache counts per process, so a
deployment with several web processes should point CACHE_URL at a shared cache (Redis,
Memcached, or the database cache) for the limit to hold across them.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from apps.accounts.models import ApiToken


class TokenRateThrottle(SimpleRateThrottle):
    """API_THROTTLE_RATE requests (e.g. "600/min") per token; over it, 429 RATE_LIMITED
    with Retry-After. Requests without a token are not counted (they are refused 401)."""

    scope = "token"

    def get_rate(self) -> str | None:
        # Read per request, so operators and tests can change it without a restart hook.
        return settings.API_THROTTLE_RATE or None

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        token = request.auth
        if not isinstance(token, ApiToken):
            return None
        return self.cache_format % {"scope": self.scope, "ident": token.pk}
