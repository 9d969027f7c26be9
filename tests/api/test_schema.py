import re
import zoneinfo

import yaml
from rest_framework.test import APIClient

from apps.api.pagination import CURSOR_PATTERN
from apps.api.schema import OPTIONAL_IN_ANSWERS, URL_PATTERN
from apps.api.serializers.base import URLField

ENDPOINTS = {
    ("get", "/api/v1/me"),
    ("get", "/api/v1/capabilities"),
    ("get", "/api/v1/accounts"),
    ("post", "/api/v1/accounts"),
    ("get", "/api/v1/accounts/{id}"),
    ("delete", "/api/v1/accounts/{id}"),
    ("get", "/api/v1/media"),
    ("post", "/api/v1/media"),
    ("get", "/api/v1/media/{id}"),
    ("get", "/api/v1/publications"),
    ("post", "/api/v1/publications"),
    ("post", "/api/v1/publications/validate"),
    ("get", "/api/v1/publications/{id}"),
    ("patch", "/api/v1/publications/{id}"),
    ("delete", "/api/v1/publications/{id}"),
    ("post", "/api/v1/publications/{id}/retry"),
    ("get", "/api/v1/renditions/{id}"),
    ("post", "/api/v1/renditions/{id}/resolve"),
    ("get", "/api/v1/tokens"),
    ("post", "/api/v1/tokens"),
    ("delete", "/api/v1/tokens/{id}"),
}
ENVELOPE = "#/components/schemas/ErrorEnvelope"


def _schema() -> dict:
    response = APIClient().get("/api/schema/")
    assert response.status_code == 200
    return yaml.safe_load(response.content)


# `socialpost login`'s calls, made before the command has a token.
BEFORE_A_TOKEN = {"/api/v1/cli/login", "/api/v1/cli/login/token"}


def _operations(schema: dict):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in {"get", "post", "patch", "put", "delete"}:
                yield method, path, operation


def test_the_schema_is_openapi_3_and_documents_every_endpoint(db):
    schema = _schema()
    assert schema["openapi"].startswith("3.")
    documented = {(method, path) for method, path, _ in _operations(schema)}
    assert documented >= ENDPOINTS


def test_every_operation_documents_its_errors_in_the_envelope(db):
    for method, path, operation in _operations(_schema()):
        responses = operation["responses"]
        assert {"401", "403", "429"} <= set(responses), (method, path)
        for status, response in responses.items():
            if status.startswith("4"):
                ref = response["content"]["application/json"]["schema"]["$ref"]
                assert ref == ENVELOPE, (method, path, status)
                assert response["description"].startswith("Error codes: "), (method, path)
        if method == "post":
            assert {"400", "409", "413", "415"} <= set(responses), path
            if path in BEFORE_A_TOKEN:
                continue  # an Idempotency-Key is kept per token; these calls have none
            assert any(p["name"] == "Idempotency-Key" for p in operation["parameters"]), path


def test_request_bodies_admit_no_unknown_fields(db):
    schemas = _schema()["components"]["schemas"]
    assert schemas["PublicationCreateRequest"]["additionalProperties"] is False
    assert schemas["SegmentInputRequest"]["additionalProperties"] is False


def test_the_docs_page_loads(db):
    response = APIClient().get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger" in response.content.lower()


def test_a_create_body_needs_text_or_segments(db):
    create = _schema()["components"]["schemas"]["PublicationCreateRequest"]
    assert create["oneOf"] == [{"required": ["text"]}, {"required": ["segments"]}]
    assert create["properties"]["segments"]["minItems"] == 1


def test_an_edit_names_the_revision_it_was_made_against(db):
    patch = _schema()["components"]["schemas"]["PatchedPublicationUpdateRequest"]
    assert patch["required"] == ["revision"]


def test_every_field_an_answer_always_carries_is_required(db):
    schemas = _schema()["components"]["schemas"]
    assert {"status", "revision", "scheduled_at"} <= set(schemas["Publication"]["required"])
    for name, schema in schemas.items():
        if name.endswith("Request") or "properties" not in schema:
            continue
        optional = OPTIONAL_IN_ANSWERS.get(name, set())
        assert set(schema.get("required", [])) == set(schema["properties"]) - optional, name


def test_path_ids_are_integers(db):
    for method, path, operation in _operations(_schema()):
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "path":
                assert parameter["schema"]["type"] == "integer", (method, path, parameter)
                assert parameter["schema"]["minimum"] == 1


def test_opaque_values_are_stated_cursors_zones_and_statuses(db):
    schema = _schema()
    lists = 0
    for method, path, operation in _operations(schema):
        for parameter in operation.get("parameters", []):
            if parameter["name"] == "cursor":
                lists += 1
                assert parameter["schema"]["pattern"] == CURSOR_PATTERN, path
                assert "400" in operation["responses"], (method, path)
    assert lists >= 10
    zones = set(zoneinfo.available_timezones())
    schemas = schema["components"]["schemas"]
    queue = schemas["QueueSlotsReplaceRequest"]["properties"]["timezone"]["enum"]
    assert set(queue) == zones | {""}
    publication = schemas["PublicationCreateRequest"]["properties"]["timezone"]["enum"]
    assert set(publication) == zones | {None}
    [status] = [
        p
        for p in schema["paths"]["/api/v1/publications"]["get"]["parameters"]
        if p["name"] == "status"
    ]
    assert (status["style"], status["explode"], status["schema"]["uniqueItems"]) == (
        "form",
        False,
        True,
    )


def test_a_body_with_a_field_it_cannot_go_without_is_required(db):
    paths = _schema()["paths"]
    for method, path in [
        ("post", "/api/v1/publications"),
        ("post", "/api/v1/publications/validate"),
        ("patch", "/api/v1/publications/{id}"),
    ]:
        assert paths[path][method]["requestBody"]["required"] is True, (method, path)
    assert not paths["/api/v1/media/{id}"]["patch"]["requestBody"].get("required")


def test_a_url_in_a_request_is_one_the_servers_validator_takes(db):
    schemas = _schema()["components"]["schemas"]
    for name, field in [
        ("RenditionResolveRequest", "provider_url"),
        ("FirstCommentMarkPostedRequest", "provider_url"),
    ]:
        options = schemas[name]["properties"][field]["oneOf"]
        assert {"pattern": URL_PATTERN} in [
            {k: v for k, v in o.items() if k == "pattern"} for o in options
        ], name
        assert not [o for o in options if "format" in o], name
    validator = URLField()
    for url in ("https://a.bc", "ftp://files.example.org/x?y#z", "http://localhost/"):
        assert re.search(URL_PATTERN, url) and validator.run_validation(url) == url
    for text in ("remove:", "mailto:a@b.cd", "https://a.bc\n", "https://a.bc x"):
        assert not re.search(URL_PATTERN, text), text
