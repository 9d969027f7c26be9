"""OpenAPI pieces every endpoint shares: the Bearer scheme, the error envelope, the
Idempotency-Key header, and strict request bodies.

Endpoints document their failures with ``errors(...)``::

    @extend_schema(
        request=WidgetCreateSerializer,
        responses={201: WidgetSerializer, **replayed(WidgetSerializer),
                   **errors(400, 404, 409, codes={409: ["WIDGET_TAKEN"]})},
        parameters=[IDEMPOTENCY_KEY],
    )
"""

from __future__ import annotations

import zoneinfo
from typing import Any

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerExtension,
)
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "apps.api.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A workspace API token: `Authorization: Bearer sp_…`.",
        }


class StrictSerializerScheme(OpenApiSerializerExtension):
    """Request bodies of StrictSerializer subclasses admit no undeclared property."""

    target_class = "apps.api.serializers.base.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: str) -> dict:
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if direction == "request":
            schema["additionalProperties"] = False
        return schema


class ErrorSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="UPPER_SNAKE machine code.")
    message = serializers.CharField(help_text="A sentence for people.")
    details = serializers.DictField(
        help_text="Context; for validation errors, messages by field path (e.g. segments.0.text)."
    )


class ErrorEnvelopeSerializer(serializers.Serializer):
    error = ErrorSerializer()


# Codes any endpoint may answer with, by status.
COMMON_CODES: dict[int, list[str]] = {
    400: ["VALIDATION_ERROR", "UNKNOWN_FIELD", "MALFORMED_JSON"],
    401: ["UNAUTHENTICATED", "INVALID_TOKEN", "INVALID_AUTH_HEADER"],
    403: ["INSUFFICIENT_SCOPE", "ORGANIZATION_SUSPENDED"],
    404: ["NOT_FOUND"],
    409: ["CONFLICT"],
    413: ["PAYLOAD_TOO_LARGE"],
    415: ["UNSUPPORTED_MEDIA_TYPE"],
    429: ["RATE_LIMITED"],
}
_ALWAYS = (401, 403, 429)
_POST = (400, 409, 413, 415)


def errors(*statuses: int, codes: dict[int, list[str]] | None = None) -> dict:
    """Error responses for the given statuses (401, 403 and 429 always), each described
    by the codes it may carry."""
    codes = codes or {}
    result = {}
    for status_code in sorted(set(statuses) | set(_ALWAYS) | set(codes)):
        listed = [*COMMON_CODES.get(status_code, []), *codes.get(status_code, [])]
        result[status_code] = OpenApiResponse(
            response=ErrorEnvelopeSerializer,
            description="Error codes: " + ", ".join(dict.fromkeys(listed)),
        )
    return result


def post_errors(*statuses: int, codes: dict[int, list[str]] | None = None) -> dict:
    """``errors`` for a POST: also bad bodies, Idempotency-Key conflicts, too large and
    wrong content types."""
    merged = {400: ["INVALID_IDEMPOTENCY_KEY"], 409: ["IDEMPOTENCY_CONFLICT"]}
    for status_code, listed in (codes or {}).items():
        merged[status_code] = [*merged.get(status_code, []), *listed]
    return errors(*statuses, *_POST, codes=merged)


def replayed(serializer: Any) -> dict:
    """The 200 a POST answers when its Idempotency-Key was seen with the same request."""
    return {
        200: OpenApiResponse(
            response=serializer,
            description="The stored response of an earlier request with the same "
            'Idempotency-Key and body, with "replayed": true. Nothing ran again.',
        )
    }


IDEMPOTENCY_KEY = OpenApiParameter(
    name="Idempotency-Key",
    location=OpenApiParameter.HEADER,
    required=False,
    type=str,
    pattern=r"^[ -~]{1,255}$",
    description="Any unique string (a UUID) up to 255 printable ASCII characters. Sending "
    "the same request again with the same key replays the first response (200, "
    '"replayed": true) instead of running it twice; the same key with a different request '
    "is 409 IDEMPOTENCY_CONFLICT. Keys are kept for IDEMPOTENCY_RETENTION_HOURS (24 h).",
)


def strip_trailing_slashes(result: dict, generator: Any, request: Any, public: bool) -> dict:
    """Document paths without their optional trailing slash (/api/v1/publications), the
    form the design and the README use; both forms are routed."""
    result["paths"] = {
        (path.rstrip("/") if path != "/" else path): item
        for path, item in result.get("paths", {}).items()
    }
    return result


# Path ids are routed by ID_PATTERN ([0-9]{1,18}): positive integers as far as a client is
# concerned (0 or an id of no row is a 404 like any other).
_PATH_ID = {"type": "integer", "minimum": 1, "maximum": 10**18 - 1}
# The only keys an answer may leave out: a bulk item carries its publication or its error,
# a validation problem its limit and actual size where it has them.
OPTIONAL_IN_ANSWERS = {"BulkOutcome": {"publication", "error"}, "Problem": {"limit", "actual"}}


def tighten(result: dict, generator: Any, request: Any, public: bool) -> dict:
    """Say in the schema what the server holds to, where the serializers cannot:

    - path ids are integers (the URL patterns match digits, which drf-spectacular types
      as a string with a pattern);
    - an answer carries every field of its serializer, null or not, so each response
      component requires all of its properties (a client may rely on ``status`` and
      ``revision`` being there), but for OPTIONAL_IN_ANSWERS;
    - a new publication needs its text: ``text`` or ``segments`` (one of them, at least
      one segment), and an edit needs the ``revision`` it was made against (so their
      bodies are required);
    - ``timezone`` in a request is one of the names of the server's tz database, and a
      URL one the server's validator takes (URL_PATTERN);
    - the publications' ``status`` filter is a comma-separated list of statuses, each once;
    - a list that takes a ``cursor`` answers 400 INVALID_CURSOR for a malformed one.
    """
    for item in result.get("paths", {}).values():
        for operation in item.values():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                if parameter.get("in") == "path":
                    parameter["schema"] = dict(_PATH_ID)
    schemas = result.get("components", {}).get("schemas", {})
    for name, schema in schemas.items():
        if not name.endswith("Request") and "properties" in schema:
            optional = OPTIONAL_IN_ANSWERS.get(name, set())
            schema["required"] = sorted(set(schema["properties"]) - optional)
    create = schemas.get("PublicationCreateRequest")
    if create is not None:
        create["oneOf"] = [{"required": ["text"]}, {"required": ["segments"]}]
        create["properties"]["segments"]["minItems"] = 1
    edit = schemas.get("PatchedPublicationUpdateRequest")
    if edit is not None:
        edit["required"] = ["revision"]
    _zones_named(schemas)
    _urls_stated(schemas)
    for path, item in result.get("paths", {}).items():
        for method, operation in item.items():
            if isinstance(operation, dict):
                _query_parameters(f"{method.upper()} {path}", operation, schemas)
                _body_required(operation, schemas)
    return result


def _body_required(operation: dict, schemas: dict) -> None:
    """A body with a field it cannot go without (a create's text, an edit's revision) is
    itself required: no body at all is refused like an empty one."""
    for media in operation.get("requestBody", {}).get("content", {}).values():
        name = media.get("schema", {}).get("$ref", "").rpartition("/")[2]
        component = schemas.get(name, {})
        if component.get("required") or component.get("oneOf"):
            operation["requestBody"]["required"] = True


def _zones_named(schemas: dict) -> None:
    """Request ``timezone`` fields take the names get_zone accepts (and blank or null where
    the serializer does: the workspace's zone)."""
    zones = sorted(zoneinfo.available_timezones())
    for name, schema in schemas.items():
        field = schema.get("properties", {}).get("timezone")
        if not name.endswith("Request") or not field or field.get("type") != "string":
            continue
        field["enum"] = [*zones, *([""] if field.get("minLength") != 1 else [])]
        field.pop("minLength", None)
        field.pop("maxLength", None)
        if field.get("nullable"):
            field["enum"].append(None)


# URLs a request may carry (URLField: Django's URLValidator, http(s) or ftp(s) to a host
# name): a pattern every match of which the validator accepts, where "format: uri" would
# also allow "mailto:" or "x:" (it leaves out what else the validator takes: IP addresses,
# ports, credentials, names beyond ASCII). Labels and TLD kept short so a host stays under
# 253 bytes; "(?!\n)$" as in CURSOR_PATTERN.
URL_PATTERN = (
    r"^(https?|ftps?)://(([a-z0-9]([a-z0-9-]{0,18}[a-z0-9])?\.){1,4}[a-z]{2,20}|localhost)"
    r"(/[!-~]*)?(?!\n)$"
)


def _urls_stated(schemas: dict) -> None:
    for name, schema in schemas.items():
        if not name.endswith("Request"):
            continue
        for field in schema.get("properties", {}).values():
            for option in [field, *field.get("oneOf", [])]:
                if option.get("format") == "uri":
                    del option["format"]
                    option["pattern"] = URL_PATTERN


def _query_parameters(label: str, operation: dict, schemas: dict) -> None:
    parameters = operation.get("parameters", [])
    names = {parameter.get("name") for parameter in parameters}
    if "cursor" in names and "400" not in operation.get("responses", {}):
        operation["responses"]["400"] = {
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}
            },
            "description": "Error codes: " + ", ".join([*COMMON_CODES[400], "INVALID_CURSOR"]),
        }
    if label == "GET /api/v1/publications":
        status = next(p for p in parameters if p["name"] == "status")
        statuses = schemas["PublicationStatusEnum"]["enum"]
        status["schema"] = {
            "type": "array",
            "items": {"type": "string", "enum": statuses},
            "minItems": 1,
            "uniqueItems": True,
        }
        status.update(style="form", explode=False)
