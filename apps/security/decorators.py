"""Throttling wrapped around a view that is not this app's own (signup)."""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from apps.security.client_ip import client_ip
from apps.security.ratelimit import too_many
from apps.security.throttle import Action, Throttled, attempt_begin


def throttle_signup(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Every signup POST counts, per address typed and per IP address; past the limit the
    view is not run and the answer is 429 saying when to try again."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.method == "POST":
            try:
                attempt_begin(
                    action=Action.SIGNUP,
                    account=request.POST.get("email", ""),
                    ip=client_ip(request),
                )
            except Throttled as exc:
                return too_many(request, retry_after_s=exc.retry_after_s, message=exc.message)
        return view(request, *args, **kwargs)

    return wrapper
