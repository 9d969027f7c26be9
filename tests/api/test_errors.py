"""One envelope for every failure, including the ones Django and DRF answer themselves."""

import pytest
from django.test import RequestFactory
from rest_framework.test import APIClient

from apps.api import errors
from tests.api.helpers import error

URL = "/api/v1/publications"


def test_malformed_json_is_400_malformed_json(api_a):
    response = api_a.post(URL, b'{"text": "unclosed', content_type="application/json")
    assert response.status_code == 400
    assert error(response)["code"] == "MALFORMED_JSON"


def test_json_nested_deeper_than_python_reads_is_malformed(api_a):
    body = b"[" * 100_000 + b"]" * 100_000
    response = api_a.post(URL, body, content_type="application/json")
    assert response.status_code == 400
    assert error(response)["code"] == "MALFORMED_JSON"


def test_a_body_that_is_not_an_object_is_a_validation_error(api_a):
    response = api_a.post(URL, b"[1, 2]", content_type="application/json")
    assert response.status_code == 400
    assert error(response)["code"] == "VALIDATION_ERROR"


def test_a_wrong_content_type_is_415(api_a):
    response = api_a.post(URL, b"text=hi", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert error(response)["code"] == "UNSUPPORTED_MEDIA_TYPE"


def test_an_oversized_json_body_is_413(api_a, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = api_a.post(URL, {"text": "x" * 2000})
    assert response.status_code == 413
    assert error(response)["code"] == "PAYLOAD_TOO_LARGE"


def test_unknown_fields_are_400_unknown_field_with_their_path(api_a):
    response = api_a.post(URL, {"text": "Hi", "sheduled_at": "tomorrow"})
    assert response.status_code == 400
    err = error(response)
    assert err["code"] == "UNKNOWN_FIELD"
    assert err["details"] == {"sheduled_at": ["Unknown field."]}


def test_characters_postgres_cannot_store_are_refused(api_a, sandbox_a):
    response = api_a.post(
        URL, {"text": "Hi", "destinations": [{"account": sandbox_a.pk, "settings": {"a": "\x00"}}]}
    )
    assert response.status_code == 400
    assert "destinations.0.settings" in error(response)["details"]


def test_a_method_the_endpoint_lacks_is_405(api_a):
    response = api_a.put(f"{URL}/1", {})
    assert response.status_code == 405
    assert error(response)["code"] == "METHOD_NOT_ALLOWED"


def test_an_unknown_api_path_is_a_json_404(api_a):
    response = api_a.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert error(response)["code"] == "NOT_FOUND"


def test_a_non_numeric_id_is_a_json_404(api_a):
    response = api_a.get(f"{URL}/abc")
    assert response.status_code == 404
    assert error(response)["code"] == "NOT_FOUND"


def test_pages_outside_the_api_keep_djangos_404(db):
    response = APIClient().get("/no-such-page-anywhere/")
    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/json")


@pytest.mark.parametrize(
    ("handler", "status"),
    [
        (lambda r: errors.handler400(r, Exception()), 400),
        (lambda r: errors.handler403(r, Exception()), 403),
        (lambda r: errors.handler404(r, Exception()), 404),
        (errors.handler500, 500),
    ],
)
def test_djangos_error_views_answer_the_envelope_on_api_paths(handler, status):
    response = handler(RequestFactory().get("/api/v1/publications"))
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert set(error(response)) == {"code", "message", "details"}


def test_the_500_handler_keeps_html_elsewhere(db):
    response = errors.handler500(RequestFactory().get("/"))
    assert response.status_code == 500
    assert not response["Content-Type"].startswith("application/json")


def test_an_unexpected_error_on_an_api_path_is_a_json_500(api_a, monkeypatch):
    def boom(**kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr("apps.api.views.capabilities.effective_capabilities", boom)
    api_a.raise_request_exception = False
    response = api_a.get("/api/v1/capabilities")
    assert response.status_code == 500
    assert error(response)["code"] == "INTERNAL_ERROR"
    assert "a bug" not in response.content.decode()


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/api/v1/publications", {"state": "scheduled"}),
        ("/api/v1/accounts", {"page": "2"}),
        ("/api/v1/capabilities", {"platform": "x"}),
    ],
)
def test_unknown_query_parameters_are_refused(api_a, path, params):
    response = api_a.get(path, params)
    assert response.status_code == 400
    assert error(response)["code"] == "UNKNOWN_FIELD"
    assert list(error(response)["details"]) == list(params)


@pytest.mark.parametrize("limit", ["0", "201", "ten", ""])
def test_a_page_size_out_of_range_is_refused(api_a, limit):
    response = api_a.get(URL, {"limit": limit})
    assert response.status_code == 400
    assert "limit" in error(response)["details"]


@pytest.mark.parametrize(
    "body",
    [
        {"text": 5},
        {"text": "Hi", "destinations": [{"account": "5"}]},
        {"text": "Hi", "status": True},
    ],
)
def test_values_of_the_wrong_json_type_are_refused(api_a, body):
    response = api_a.post(URL, body)
    assert response.status_code == 400
    assert error(response)["code"] == "VALIDATION_ERROR"


def test_a_suspended_organization_may_only_read(api_a, workspace_a):
    workspace_a.organization.state = "suspended"
    workspace_a.organization.save()

    assert api_a.get(URL).status_code == 200
    response = api_a.post(URL, {"text": "Hi"})
    assert response.status_code == 403
    assert error(response)["code"] == "ORGANIZATION_SUSPENDED"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/queue-slots",
        "/api/v1/accounts",
        "/api/v1/publications",
        "/api/v1/me",
        "/api/v1/approval-rule",
    ],
)
def test_options_answers_the_allowed_methods(api_a, path):
    response = api_a.options(path)
    assert response.status_code == 200, response.content
    assert "GET" in response["Allow"]
    assert response.json()["schema"] == "/api/schema/"


def test_options_on_an_object_route_answers_without_loading_it(api_a, sandbox_a):
    for path in (
        f"/api/v1/accounts/{sandbox_a.pk}/queue-slots",
        f"/api/v1/accounts/{sandbox_a.pk}",
    ):
        response = api_a.options(path)
        assert response.status_code == 200, response.content
        assert "DELETE" in response["Allow"]


def test_options_needs_a_token(db):
    response = APIClient().options("/api/v1/queue-slots")
    assert response.status_code == 401
    assert error(response)["code"] == "UNAUTHENTICATED"
