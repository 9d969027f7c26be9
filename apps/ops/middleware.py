"""Maintenance mode and the Content-Security-Policy header."""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from apps.common.envelope import envelope
from apps.common.responses import keep_out_of_error_log
from apps.ops.services import MaintenanceState, maintenance_state

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# Still writable during maintenance: the admin (operators switch maintenance off there),
# signing in and out (no product data), and the sandbox platform, which stands in for an
# external platform that workers keep publishing to.
EXEMPT_PREFIXES = ("/admin/", "/login/", "/logout/", "/sandbox/")


class MaintenanceModeMiddleware:
    """While maintenance is on, web and API writes answer 503 with Retry-After.

    Reads are never refused and never pay for the check. Workers don't pass through here,
    so accepted work keeps publishing.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in WRITE_METHODS and not request.path_info.startswith(EXEMPT_PREFIXES):
            state = maintenance_state()
            if state.is_on:
                return _refusal(request, state)
        return self.get_response(request)


def _refusal(request: HttpRequest, state: MaintenanceState) -> HttpResponse:
    response: HttpResponse
    if request.path_info.startswith("/api/"):
        response = JsonResponse(envelope("MAINTENANCE", state.message), status=503)
    else:
        html = render_to_string(
            "ops/maintenance.html",
            {"message": state.message, "retry_after_s": state.retry_after_s},
        )
        response = HttpResponse(html, status=503)
    response["Retry-After"] = str(state.retry_after_s)
    response["Cache-Control"] = "no-store"
    # An expected refusal, not a server error.
    keep_out_of_error_log(response)
    return response


class ContentSecurityPolicyMiddleware:
    """Sets CONTENT_SECURITY_POLICY on responses that don't carry their own policy."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response
