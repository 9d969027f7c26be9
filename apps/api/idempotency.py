"""The Idempotency-Key protocol for POST requests.

A client that may retry a POST (after a timeout, a dropped connection) sends a key of its
choosing in the ``Idempotency-Key`` header:

- the first request with the key runs, and its successful (2xx) response is stored;
- the same key with the same request (method, path and body) within
  IDEMPOTENCY_RETENTION_HOURS gets the stored body back with ``"replayed": true`` at
  HTTP 200, and nothing runs again;
- the same key with a different request is 409 IDEMPOTENCY_CONFLICT;
- a request that fails (4xx, or an error) stores nothing: fixing it and sending it again
  with the same key runs it.

Concurrency: the key's row is inserted (``INSERT ... ON CONFLICT DO NOTHING``) and locked
at the start of the request's transaction and committed with the response. A second
request with the key blocks on that insert until the first commits, then finds the stored
response and replays it; if the first rolled back, the second runs. So two concurrent
requests with one key create one object.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import wraps
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils import json

from apps.accounts.models import Workspace
from apps.api.models import IdempotencyRecord
from apps.common import deferred_checks
from apps.common.errors import Conflict, ValidationFailed

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255

Handler = Callable[..., Response]


def retention() -> timedelta:
    return timedelta(hours=settings.IDEMPOTENCY_RETENTION_HOURS)


def clean_key(raw: str) -> str:
    """The key as sent: 1-255 printable ASCII characters, else INVALID_IDEMPOTENCY_KEY."""
    key = raw.strip()
    if not key or len(key) > MAX_KEY_LENGTH or not all(" " <= c <= "~" for c in key):
        raise ValidationFailed(
            f"{HEADER} must be 1 to {MAX_KEY_LENGTH} printable ASCII characters "
            "(a UUID is a good choice).",
            code="INVALID_IDEMPOTENCY_KEY",
            details={HEADER: ["1-255 printable ASCII characters."]},
        )
    return key


def _file_digest(upload: UploadedFile) -> str:
    digest = hashlib.sha256()
    for chunk in upload.chunks():
        digest.update(chunk)
    upload.seek(0)
    return digest.hexdigest()


def _canonical_body(data: Any) -> str:
    """The parsed body in a canonical form: JSON with sorted keys (whitespace and key order
    do not matter), or, for forms, sorted fields with uploaded files by their SHA-256 (so
    one upload sent twice matches whatever multipart boundary the client chose)."""
    if hasattr(data, "lists"):
        fields = sorted(
            (name, _file_digest(value) if isinstance(value, UploadedFile) else str(value))
            for name, values in data.lists()
            for value in values
        )
        return json.dumps(fields, ensure_ascii=False)
    return json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)


def request_fingerprint(request: Request) -> str:
    body = _canonical_body(request.data)
    return hashlib.sha256(f"{request.method}\n{request.path}\n{body}".encode()).hexdigest()


def _claim(
    *, workspace: Workspace, key: str, fingerprint: str, request: Request
) -> IdempotencyRecord:
    """The key's row, locked. Complete: a response to replay (or a conflict). Incomplete:
    this request's own, fresh row. Call inside a transaction."""
    IdempotencyRecord.objects.bulk_create(
        [
            IdempotencyRecord(
                workspace=workspace,
                key=key,
                fingerprint=fingerprint,
                method=request.method,
                path=request.path[:500],
            )
        ],
        ignore_conflicts=True,
    )
    record = IdempotencyRecord.objects.select_for_update().get(workspace=workspace, key=key)
    if record.is_complete and record.created_at < timezone.now() - retention():
        # Past the retention window (not pruned yet): the key starts over.
        record.fingerprint = fingerprint
        record.method = request.method
        record.path = request.path[:500]
        record.response_status = None
        record.response_body = None
        record.created_at = timezone.now()
        record.save()
    return record


def _replay(record: IdempotencyRecord, fingerprint: str) -> Response:
    if record.fingerprint != fingerprint:
        raise Conflict(
            f"This {HEADER} was already used for a different request "
            f"({record.method} {record.path}); use a new key for a new request.",
            code="IDEMPOTENCY_CONFLICT",
            details={"key": record.key, "method": record.method, "path": record.path},
        )
    body = record.response_body
    body = (
        {**body, "replayed": True} if isinstance(body, dict) else {"data": body, "replayed": True}
    )
    return Response(body, status=200, headers={REPLAYED_HEADER: "true"})


def idempotent(handler: Handler, *, redact: frozenset[str] = frozenset()) -> Handler:
    """Wrap a POST handler (bound, authenticated by the time it runs) in the protocol.

    ``redact`` names top-level response fields that are never stored (a secret shown once:
    a new token, a webhook signing secret); a replay answers them as null."""

    @wraps(handler)
    def run(request: Request, *args: Any, **kwargs: Any) -> Response:
        raw = request.headers.get(HEADER)
        if raw is None:
            return handler(request, *args, **kwargs)
        key = clean_key(raw)
        fingerprint = request_fingerprint(request)
        # The handler's last checks (a create's quota, under its organization's lock) run
        # after the record is written, so that lock is held only until the COMMIT.
        with transaction.atomic(), deferred_checks.deferred():
            record = _claim(
                workspace=request.auth.workspace,
                key=key,
                fingerprint=fingerprint,
                request=request,
            )
            if record.is_complete:
                return _replay(record, fingerprint)
            # An exception here rolls the row back with everything the handler wrote.
            response = handler(request, *args, **kwargs)
            if 200 <= response.status_code < 300:
                record.response_status = response.status_code
                body = json.loads(JSONRenderer().render(response.data) or b"null")
                if isinstance(body, dict):
                    body = {k: (None if k in redact else v) for k, v in body.items()}
                record.response_body = body
                record.save(update_fields=["response_status", "response_body", "updated_at"])
            else:
                record.delete()
        return response

    return run


def idempotency_records_prune(*, now: datetime | None = None) -> int:
    """Delete records past the retention window; returns how many went."""
    cutoff = (now or timezone.now()) - retention()
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted
