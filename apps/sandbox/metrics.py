"""The sandbox's read side: a post's public metrics and an account's follower count.

The counts grow with the post's (or account's) age, the same for the same post at the
same instant, so a series read over time rises as a real post's would and tests can
predict it. Like a platform that offers no click counts, the sandbox offers none.
Reads share the status poll's 429 (`status_rate_limit_times`, Retry-After).
"""

from __future__ import annotations

import math
from datetime import datetime

from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.sandbox.models import SandboxAccount, SandboxPost
from apps.sandbox.server import _authenticated, _delay, _enabled, _error, _use_counter


def post_metrics(post: SandboxPost, now: datetime) -> dict:
    """Counts that only grow with the post's age (in minutes, log-shaped: a burst in the
    first hours, a trickle after), scaled per post so posts differ."""
    minutes = max((now - post.created_at).total_seconds() / 60.0, 0.0)
    scale = 1 + post.pk % 5
    views = int(40 * scale * math.log1p(minutes))
    return {
        "likes": views // 12,
        "replies": views // 60,
        "reposts": views // 40,
        "views": views,
    }


def followers(account: SandboxAccount, now: datetime) -> int:
    days = max((now - account.created_at).total_seconds() / 86400.0, 0.0)
    return 100 + 3 * (account.pk % 50) + int(5 * days)


def _rate_limited(account: SandboxAccount) -> JsonResponse | None:
    with transaction.atomic():
        locked = SandboxAccount.objects.select_for_update().get(pk=account.pk)
        if _use_counter(locked, "status_rate_limit_times"):
            retry_after = str(locked.behaviour.get("retry_after_s", 1))
            return _error(429, "rate_limited", "Too many reads.", Retry_After=retry_after)
    return None


@require_GET
def metrics_endpoint(request: HttpRequest, post_id: int) -> HttpResponse:
    """GET /sandbox/api/v1/posts/<id>/metrics: {id, likes, replies, reposts, views}."""
    _enabled()
    account = _authenticated(request)
    if account is None:
        return _error(401, "invalid_token", "The access token is invalid.")
    if account.behaviour.get("expired_token"):
        return _error(401, "token_expired", "The access token has expired.")
    _delay(account)
    limited = _rate_limited(account)
    if limited is not None:
        return limited
    post = account.posts.filter(pk=post_id, is_comment=False).first()
    if post is None:
        return _error(404, "not_found", "No such post.")
    return JsonResponse({"id": str(post.pk), **post_metrics(post, timezone.now())})


@require_GET
def me_endpoint(request: HttpRequest) -> HttpResponse:
    """GET /sandbox/api/v1/me: {handle, followers_count}."""
    _enabled()
    account = _authenticated(request)
    if account is None:
        return _error(401, "invalid_token", "The access token is invalid.")
    if account.behaviour.get("expired_token"):
        return _error(401, "token_expired", "The access token has expired.")
    limited = _rate_limited(account)
    if limited is not None:
        return limited
    return JsonResponse(
        {"handle": account.handle, "followers_count": followers(account, timezone.now())}
    )
