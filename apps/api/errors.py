"""One error envelope for the whole API: {"error": {"code", "message", "details"}}."""

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from apps.common.errors import DomainError

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


def envelope(code: str, message: str, details: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _field_paths(detail, prefix: str = "") -> dict:
    """Flatten DRF's nested validation detail into {"segments.0.text": ["..."]}."""
    out: dict = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            path = key if not prefix else f"{prefix}.{key}"
            if key == "non_field_errors":
                path = prefix or "non_field_errors"
            out.update(_field_paths(value, path))
    elif isinstance(detail, list) and detail and all(isinstance(d, str) for d in detail):
        out.setdefault(prefix or "non_field_errors", []).extend(str(d) for d in detail)
    elif isinstance(detail, list):
        for i, value in enumerate(detail):
            out.update(_field_paths(value, f"{prefix}.{i}" if prefix else str(i)))
    else:
        out.setdefault(prefix or "non_field_errors", []).append(str(detail))
    return out


def exception_handler(exc, context) -> Response | None:
    if isinstance(exc, DomainError):
        return Response(envelope(exc.code, exc.message, exc.details), status=exc.http_status)
    if isinstance(exc, DjangoValidationError):
        details = (
            exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        )
        return Response(
            envelope("VALIDATION_ERROR", "The request is not valid.", details),
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound("Not found.")
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = _CODES.get(response.status_code, "ERROR")
    if isinstance(exc, exceptions.ValidationError):
        body = envelope(code, "The request is not valid.", _field_paths(exc.detail))
    else:
        detail = exc.detail if isinstance(exc, exceptions.APIException) else str(exc)
        message = str(detail) if not isinstance(detail, (dict, list)) else "Request refused."
        sub = getattr(detail, "code", None)
        if sub and isinstance(sub, str) and sub.isupper():
            code = sub
        body = envelope(code, message)
        if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
            body["error"]["details"] = {"retry_after_s": int(exc.wait) + 1}
    response.data = body
    return response
