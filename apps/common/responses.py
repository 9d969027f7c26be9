"""Helpers for responses the project builds by hand."""

from __future__ import annotations

from django.http import HttpResponseBase


def keep_out_of_error_log(response: HttpResponseBase) -> None:
    """Mark an expected error response as logged, so django.request does not log it again
    as a server error (django.utils.log.log_response skips a response so marked)."""
    # A private attribute of Django's, which django-stubs does not declare.
    response._has_been_logged = True  # type: ignore[attr-defined]
