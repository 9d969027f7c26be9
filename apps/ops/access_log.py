"""Secrets kept out of access logs: URLs are logged with their secret parts replaced.

A request line can carry credentials: an OAuth callback's `code` and `state`, a signed
media link (`/media/signed/<token>`), a password-reset link, a presigned upload or download
URL's signature. Access logs are read by more people than the database, and kept longer, so
those parts are written as `[redacted]`. gunicorn logs through `RedactingLogger`
(deploy/gunicorn.conf.py and every gunicorn the project starts); Django's request warnings
("Not Found: /media/signed/...") pass through `RedactSecretsFilter`.
"""

import logging
import re
from urllib.parse import unquote_plus

from gunicorn.glogging import Logger

REDACTED = "[redacted]"

# Query parameters whose value is a credential (compared in lower case).
SECRET_PARAMS = frozenset(
    {
        "code",
        "state",
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "oauth_token",
        "oauth_verifier",
        "client_secret",
        "password",
        "signature",
        "sig",
        "key",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
        "awsaccesskeyid",
        "x-goog-signature",
        "x-goog-credential",
    }
)
# Any parameter named like a credential, whatever the provider calls it.
SECRET_PARAM_WORDS = re.compile(r"token|secret|signature|password|credential", re.IGNORECASE)
# Paths whose last part is a credential: the signed media view, password reset, and the
# single-use links sent by email (invitations, email verification).
SECRET_PATHS = (
    re.compile(r"^(/media/signed/)[^/?#]+"),
    re.compile(r"^(/reset/[^/?#]+/)[^/?#]+"),
    re.compile(
        r"^(/(?:[^?#]*/)?(?:invite|invites|invitations|verify|verify-email|confirm)/)[^/?#]+"
    ),
)


def is_secret_param(name: str) -> bool:
    return name.lower() in SECRET_PARAMS or bool(SECRET_PARAM_WORDS.search(name))


def redact_query(query: str) -> str:
    """`query` (no leading `?`) with the values of secret parameters replaced; the rest
    is left exactly as sent."""
    if not query:
        return query
    parts = []
    for part in query.split("&"):
        name, eq, _value = part.partition("=")
        parts.append(f"{name}={REDACTED}" if eq and is_secret_param(unquote_plus(name)) else part)
    return "&".join(parts)


def redact_path(path: str) -> str:
    for pattern in SECRET_PATHS:
        path = pattern.sub(lambda match: match.group(1) + REDACTED, path)
    return path


def redact_url(url: str) -> str:
    """A path or absolute URL (with its query) with every secret part replaced."""
    if not url or url == "-":
        return url
    scheme_host = ""
    match = re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]*", url)
    if match:
        scheme_host, url = match.group(0), url[match.end() :]
    path, sep, query = url.partition("?")
    query, hash_sep, fragment = query.partition("#")
    redacted = scheme_host + redact_path(path)
    if sep:
        redacted += "?" + redact_query(query)
    if hash_sep:
        redacted += "#" + fragment
    return redacted


def redact_request_line(line: str) -> str:
    """`GET /path?query HTTP/1.1` with the target redacted."""
    method, sep, rest = line.partition(" ")
    target, sep2, protocol = rest.rpartition(" ")
    if not sep or not sep2:
        return redact_url(line)
    return f"{method} {redact_url(target)} {protocol}"


class RedactingLogger(Logger):
    """gunicorn's logger, with the URL-bearing atoms (request line, path, query, referer)
    redacted before the access line is formatted."""

    def atoms(self, resp, req, environ, request_time):
        atoms = super().atoms(resp, req, environ, request_time)
        atoms["r"] = redact_request_line(atoms["r"])
        atoms["U"] = redact_path(atoms["U"] or "")
        atoms["q"] = redact_query(atoms["q"] or "")
        atoms["f"] = redact_url(atoms["f"])
        if "{referer}i" in atoms:
            atoms["{referer}i"] = redact_url(atoms["{referer}i"])
        return atoms


class RedactSecretsFilter(logging.Filter):
    """Redacts URLs in Django's request and server log lines (their arguments are paths)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith(("django.request", "django.server")) and record.args:
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            record.args = tuple(
                redact_request_line(arg) if isinstance(arg, str) else arg for arg in args
            )
        return True
