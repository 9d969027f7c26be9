"""The API over HTTP: one httpx client, the error envelope as an exception, and the exit
code each kind of failure maps to."""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

import httpx

from socialpost_cli import __version__

# Exit codes: stable, documented in the README, relied on by scripts.
EXIT_OK = 0
EXIT_FAILURE = 1  # anything not listed below (e.g. 405)
EXIT_USAGE = 2  # bad arguments (argparse uses 2 as well)
EXIT_AUTH = 3  # 401/403, or no credentials
EXIT_NOT_FOUND = 4  # 404, or a destination handle that matches no account
EXIT_CONFLICT = 5  # 409: stale revision, reference key or idempotency key reused...
EXIT_VALIDATION = 6  # 400/413/415/422, or `validate` found problems
EXIT_RATE_LIMITED = 7  # 429
EXIT_SERVER = 8  # 5xx, or the server could not be reached

DEFAULT_TIMEOUT_S = 30.0
# Transport failures (connection refused, timeout) are retried this many times. Safe:
# GET and DELETE are idempotent, and every POST carries an Idempotency-Key, so a request
# that did reach the server is answered from its stored response, never run twice.
TRANSPORT_RETRIES = 2


def exit_code_for_status(status: int) -> int:
    if status in (401, 403):
        return EXIT_AUTH
    if status == 404:
        return EXIT_NOT_FOUND
    if status == 409:
        return EXIT_CONFLICT
    if status in (400, 413, 415, 422):
        return EXIT_VALIDATION
    if status == 429:
        return EXIT_RATE_LIMITED
    if status >= 500:
        return EXIT_SERVER
    return EXIT_FAILURE


class CliError(Exception):
    """A failure to report: the envelope's code and message, and the exit code."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        exit_code: int,
        details: dict | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.exit_code = exit_code
        self.details = details or {}
        self.body = body  # the API's JSON answer, when there was one


class ApiError(CliError):
    """The API answered with an error status."""

    def __init__(self, response: httpx.Response) -> None:
        body: Any = None
        with contextlib.suppress(ValueError):
            body = response.json()
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict):
            code = str(error.get("code") or f"HTTP_{response.status_code}")
            message = str(error.get("message") or response.reason_phrase)
            details = error.get("details") if isinstance(error.get("details"), dict) else {}
        else:  # not our envelope (a proxy's page, a crash before the API)
            code = f"HTTP_{response.status_code}"
            message = response.reason_phrase or "The server answered with an error."
            details = {}
            body = None
        retry_after = response.headers.get("Retry-After")
        if retry_after and "retry_after_s" not in details:
            details = {**details, "retry_after_s": retry_after}
        super().__init__(
            code,
            message,
            exit_code=exit_code_for_status(response.status_code),
            details=details,
            body=body,
        )
        self.status = response.status_code


class Client:
    """A logged-in connection to one site's API."""

    def __init__(
        self,
        *,
        url: str,
        token: str,
        timeout: float | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if timeout is None:
            raw = os.environ.get("SOCIALPOST_TIMEOUT") or DEFAULT_TIMEOUT_S
            try:
                timeout = float(raw)
            except ValueError:
                raise CliError(
                    "USAGE", "SOCIALPOST_TIMEOUT is a number of seconds.", exit_code=EXIT_USAGE
                ) from None
        self.url = url
        self.http = httpx.Client(
            base_url=f"{url}/api/v1/",
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json",
                "User-Agent": f"socialpost-cli/{__version__}",
            },
            timeout=timeout,
            transport=transport,
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        idempotency_key: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """The decoded JSON answer of a 2xx response; CliError otherwise. ``path`` is
        relative to /api/v1/ (``publications/3``) or a full URL (a page's ``next``)."""
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        for attempt in range(TRANSPORT_RETRIES + 1):
            try:
                response = self.http.request(method, path, headers=headers, **kwargs)
                break
            except httpx.TransportError as exc:
                if attempt == TRANSPORT_RETRIES:
                    raise CliError(
                        "NETWORK_ERROR",
                        f"Cannot reach {self.url}: {exc or type(exc).__name__}",
                        exit_code=EXIT_SERVER,
                    ) from exc
                time.sleep(0.5 * (attempt + 1))
                for value in kwargs.get("files", {}).values():
                    value[1].seek(0)  # the upload is read again on the next attempt
        if response.is_error:
            raise ApiError(response)
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise CliError(
                "BAD_RESPONSE",
                f"The server answered {response.status_code} with something that is not JSON.",
                exit_code=EXIT_SERVER,
            ) from exc

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params={k: v for k, v in params.items() if v is not None})

    def post(self, path: str, *, key: str, **kwargs: Any) -> Any:
        return self.request("POST", path, idempotency_key=key, **kwargs)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)

    def collect(self, path: str, *, limit: int | None = None, **params: Any) -> dict:
        """Up to ``limit`` rows of a paginated list (all when None), following ``next``:
        ``{"results": [...], "next": the next page's URL or None}``. Pages hold up to 200
        rows, so with a limit of at most 200 ``next`` starts right after the last row."""
        page = self.get(path, limit=min(limit or 200, 200), **params)
        rows: list = []
        while True:
            rows += page.get("results", [])
            if limit is not None and len(rows) >= limit:
                return {"results": rows[:limit], "next": page.get("next")}
            if not page.get("next"):
                return {"results": rows, "next": None}
            page = self.get(page["next"])
