"""The MCP tools and the API endpoints they mirror answer a token the same way: one
policy (scopes, suspended organizations) decides for both."""

from dataclasses import dataclass
from typing import Any

import pytest

from apps.accounts.models import ApiToken, Organization
from apps.api.mcp import tools
from tests.api.helpers import bearer
from tests.mcp.test_tools import context

MISSING = 999_999_999


@dataclass(frozen=True)
class Call:
    name: str
    tool: Any  # (ctx) -> CallToolResult
    method: str
    path: str
    body: dict | None = None


CALLS = [
    Call("list accounts", lambda c: tools.list_accounts(c), "get", "/api/v1/accounts"),
    Call(
        "validate a draft",
        lambda c: tools.validate_draft(c, text="Hi"),
        "post",
        "/api/v1/publications/validate",
        {"text": "Hi"},
    ),
    Call(
        "create a draft",
        lambda c: tools.create_publication(c, text="Hi"),
        "post",
        "/api/v1/publications",
        {"text": "Hi"},
    ),
    Call(
        "create it scheduled",
        lambda c: tools.create_publication(
            c, text="Hi", status="scheduled", scheduled_at="2099-01-01T09:00:00+00:00"
        ),
        "post",
        "/api/v1/publications",
        {"text": "Hi", "status": "scheduled", "scheduled_at": "2099-01-01T09:00:00+00:00"},
    ),
    Call(
        "get a publication",
        lambda c: tools.get_publication(c, publication_id=MISSING),
        "get",
        f"/api/v1/publications/{MISSING}",
    ),
    Call(
        "retry a publication",
        lambda c: tools.retry_publication(c, publication_id=MISSING),
        "post",
        f"/api/v1/publications/{MISSING}/retry",
        {},
    ),
]

SCOPE_SETS = [[], ["read"], ["write"], ["publish"], ["read", "write"], ["write", "publish"]]


@pytest.fixture(autouse=True)
def _keep_the_test_transaction(monkeypatch):
    monkeypatch.setattr(tools, "close_old_connections", lambda: None)


def _tool_outcome(result) -> str:
    return result.structured_content["error"]["code"] if result.is_error else "OK"


def _api_outcome(response) -> str:
    return response.json()["error"]["code"] if response.status_code >= 400 else "OK"


def _both(issued, call: Call) -> tuple[str, str]:
    # As the endpoint's middleware does per request: the token and its organization as
    # they are now.
    token = ApiToken.objects.select_related("workspace__organization").get(pk=issued.token.pk)
    through_mcp = _tool_outcome(call.tool(context(token)))
    request = getattr(bearer(issued.clear), call.method)
    through_api = _api_outcome(request(call.path, call.body, format="json"))
    return through_mcp, through_api


@pytest.mark.parametrize("scopes", SCOPE_SETS, ids=lambda s: "+".join(s) or "mcp-only")
@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.name)
def test_a_tool_refuses_what_its_endpoint_refuses(workspace_a, make_token, scopes, call):
    issued = make_token(workspace_a, scopes=["mcp", *scopes])

    through_mcp, through_api = _both(issued, call)

    if scopes:
        assert through_mcp == through_api
    else:
        # A token with nothing but mcp is no REST token at all; its tools refuse it too.
        assert through_api == "MCP_ONLY_TOKEN" and through_mcp != "OK"


@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.name)
def test_a_suspended_organization_is_refused_the_same_writes(workspace_a, make_token, call):
    issued = make_token(workspace_a)  # every scope
    Organization.objects.filter(pk=workspace_a.organization_id).update(
        state=Organization.State.SUSPENDED
    )

    through_mcp, through_api = _both(issued, call)

    assert through_mcp == through_api


def test_a_read_token_cannot_write_through_either(workspace_a, make_token):
    issued = make_token(workspace_a, scopes=["mcp", "read"])

    assert _both(issued, CALLS[2]) == ("INSUFFICIENT_SCOPE", "INSUFFICIENT_SCOPE")
    assert _both(issued, CALLS[0]) == ("OK", "OK")


def test_validating_is_a_read_a_suspended_organization_may_make(workspace_a, make_token):
    issued = make_token(workspace_a)
    Organization.objects.filter(pk=workspace_a.organization_id).update(
        state=Organization.State.SUSPENDED
    )

    assert _both(issued, CALLS[1]) == ("OK", "OK")
    assert _both(issued, CALLS[2]) == ("ORGANIZATION_SUSPENDED", "ORGANIZATION_SUSPENDED")
