"""One error envelope for the whole API: {"error": {"code", "message", "details"}}.

``exception_handler`` (DRF's EXCEPTION_HANDLER) turns domain errors, DRF's errors and the
few Django errors a request can raise into it. ``handler400/403/404/500`` (set in the root
URLconf) do the same for errors Django answers before or after DRF, on /api/ paths only;
other paths get Django's own pages.

Validation errors carry ``details`` keyed by field path (``segments.0.text``,
``destinations.1.account``), each with a list of messages. A body with fields the endpoint
does not know is UNKNOWN_FIELD, with their paths.
"""

from __future__ import annotations

import math
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response

from apps.common.envelope import envelope
from apps.common.errors import DomainError

API_PREFIX = "/api/"

_CODES = {
    400: "VALIDATION_ERROR",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "RATE_LIMITED",
}

# Domain codes whose HTTP status is more specific than their error class's.
STATUS_FOR_CODE = {
    "MEDIA_TOO_LARGE": status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    "MEDIA_TYPE_UNSUPPORTED": status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
}

UNKNOWN_FIELD = "unknown_field"  # the ErrorDetail code strict serializers use


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "PAYLOAD_TOO_LARGE"


def error_leaves(detail: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """DRF's nested validation detail as (field path, ErrorDetail) pairs."""
    out: list[tuple[str, Any]] = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            path = prefix if key == "non_field_errors" else (f"{prefix}.{key}" if prefix else key)
            out += error_leaves(value, path)
    elif isinstance(detail, list):
        for i, value in enumerate(detail):
            if isinstance(value, dict | list):
                out += error_leaves(value, f"{prefix}.{i}" if prefix else str(i))
            else:
                out.append((prefix or "non_field_errors", value))
    else:
        out.append((prefix or "non_field_errors", detail))
    return out


def validation_details(detail: Any) -> tuple[str, dict[str, list[str]]]:
    """(envelope code, {field path: [messages]}) for a DRF ValidationError's detail."""
    details: dict[str, list[str]] = {}
    unknown = False
    for path, message in error_leaves(detail):
        details.setdefault(path, []).append(str(message))
        unknown = unknown or getattr(message, "code", None) == UNKNOWN_FIELD
    return ("UNKNOWN_FIELD" if unknown else "VALIDATION_ERROR"), details


def exception_handler(exc: Exception, context: dict) -> Response | None:
    # Imported here: rest_framework.views loads the parser classes, which import this module.
    from rest_framework.views import exception_handler as drf_exception_handler

    if isinstance(exc, DomainError):
        code_status = STATUS_FOR_CODE.get(exc.code, exc.http_status)
        return Response(envelope(exc.code, exc.message, exc.details), status=code_status)
    if isinstance(exc, DjangoValidationError):
        details = (
            exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        )
        return Response(
            envelope("VALIDATION_ERROR", "The request is not valid.", details),
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge()
    elif isinstance(exc, SuspiciousOperation):
        exc = exceptions.ParseError(str(exc) or "The request is malformed.", code="BAD_REQUEST")
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound("Not found.")
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = _CODES.get(response.status_code, "ERROR")
    if isinstance(exc, exceptions.ValidationError):
        code, details = validation_details(exc.detail)
        body = envelope(code, "The request is not valid.", details)
    else:
        detail = exc.detail if isinstance(exc, exceptions.APIException) else str(exc)
        message = str(detail) if not isinstance(detail, dict | list) else "Request refused."
        sub = getattr(detail, "code", None)
        if sub and isinstance(sub, str) and sub.isupper():
            code = sub
        body = envelope(code, message)
        if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
            # DRF truncates the wait; round up so a client that waits Retry-After succeeds.
            wait = max(1, math.ceil(exc.wait))
            body["error"]["details"] = {"retry_after_s": wait}
            response["Retry-After"] = str(wait)
    response.data = body
    return response


# --- Django's own error views, for /api/ paths -------------------------------------------


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def _json(code: str, message: str, status_code: int) -> JsonResponse:
    return JsonResponse(envelope(code, message), status=status_code)


def handler400(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return _json("BAD_REQUEST", "The request is malformed.", 400)
    return defaults.bad_request(request, exception)


def handler403(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return _json("PERMISSION_DENIED", "Permission denied.", 403)
    return defaults.permission_denied(request, exception)


def handler404(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return _json("NOT_FOUND", "No such endpoint or object.", 404)
    return defaults.page_not_found(request, exception)


def handler500(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return _json("INTERNAL_ERROR", "Something went wrong on our side; it was logged.", 500)
    return defaults.server_error(request)
