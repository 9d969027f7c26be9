"""A token made only for MCP clients (the ``mcp`` scope and nothing else) is not a REST
API token: every /api/v1 endpoint answers it 403 MCP_ONLY_TOKEN. A token that also holds a
power scope serves both doors."""

import pytest

from tests.api.helpers import error

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "method, path",
    [
        ("get", "/api/v1/me"),
        ("get", "/api/v1/publications"),
        ("get", "/api/v1/approval-rule"),
        ("post", "/api/v1/publications"),
    ],
)
def test_an_mcp_only_token_is_refused_by_the_rest_api(client_with, method, path):
    response = getattr(client_with("mcp"), method)(path, {"text": "Hi"}, format="json")

    assert response.status_code == 403, response.content
    assert error(response)["code"] == "MCP_ONLY_TOKEN"


def test_an_mcp_token_with_read_also_reads_the_rest_api(client_with):
    response = client_with("mcp", "read").get("/api/v1/me")

    assert response.status_code == 200
    assert response.json()["token"]["scopes"] == ["read", "mcp"]
