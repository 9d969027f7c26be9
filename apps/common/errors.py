"""Typed domain errors. Services raise them; the API turns them into the error envelope
(`{"error": {"code", "message", "details"}}`) and the web app into form messages."""


class DomainError(Exception):
    """An expected refusal with a machine code."""

    code = "INVALID"
    http_status = 400

    def __init__(
        self, message: str, *, code: str | None = None, details: dict | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.details = details or {}


class ValidationFailed(DomainError):
    code = "VALIDATION_ERROR"
    http_status = 400


class PermissionDenied(DomainError):
    code = "PERMISSION_DENIED"
    http_status = 403


class NotFound(DomainError):
    code = "NOT_FOUND"
    http_status = 404


class Conflict(DomainError):
    code = "CONFLICT"
    http_status = 409


class QuotaExceeded(DomainError):
    code = "QUOTA_EXCEEDED"
    http_status = 409
