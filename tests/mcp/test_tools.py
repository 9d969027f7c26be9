"""The tools' permission rules, called in-process (the endpoint tests cover the transport):
the rules of the API endpoint each tool mirrors."""

from types import SimpleNamespace

import pytest

from apps.accounts.models import Organization
from apps.api.mcp import tools
from apps.publications.models import Publication


@pytest.fixture(autouse=True)
def _keep_the_test_transaction(monkeypatch):
    # Tools close stale connections like Django's request signals do; in a test
    # transaction that would close the test's own connection (Django's test client
    # disconnects the same signal).
    monkeypatch.setattr(tools, "close_old_connections", lambda: None)


def context(token):
    """What the SDK hands a tool: the request, whose state carries the accepted token."""
    state = SimpleNamespace(api_token=token)
    return SimpleNamespace(request_context=SimpleNamespace(request=SimpleNamespace(state=state)))


@pytest.fixture
def ctx(workspace_a, make_token):
    return context(make_token(workspace_a).token)


def code(result) -> str:
    assert result.is_error, result
    return result.structured_content["error"]["code"]


def test_writes_wait_in_maintenance_mode_but_reads_go_on(ctx, settings):
    settings.MAINTENANCE_MODE = True

    assert code(tools.create_publication(ctx, text="Hi")) == "MAINTENANCE"
    assert code(tools.retry_publication(ctx, publication_id=1)) == "MAINTENANCE"
    assert not tools.list_accounts(ctx).is_error
    assert not Publication.objects.exists()


def test_a_suspended_organization_may_only_read(ctx, org_a):
    org_a.state = Organization.State.SUSPENDED
    org_a.save()

    assert code(tools.create_publication(ctx, text="Hi")) == "ORGANIZATION_SUSPENDED"
    assert not tools.list_capabilities(ctx).is_error


def test_each_tool_needs_the_scope_of_its_api_endpoint(workspace_a, make_token):
    mcp_only = context(make_token(workspace_a, scopes=["mcp"]).token)

    assert code(tools.list_accounts(mcp_only)) == "INSUFFICIENT_SCOPE"
    assert code(tools.validate_draft(mcp_only, text="Hi")) == "INSUFFICIENT_SCOPE"
    assert code(tools.create_publication(mcp_only, text="Hi")) == "INSUFFICIENT_SCOPE"
    assert code(tools.get_publication(mcp_only, publication_id=1)) == "INSUFFICIENT_SCOPE"
    assert code(tools.retry_publication(mcp_only, publication_id=1)) == "INSUFFICIENT_SCOPE"


def test_calls_count_against_the_tokens_rate_limit(ctx, settings):
    settings.API_THROTTLE_RATE = "2/min"

    tools.list_accounts(ctx)
    tools.list_accounts(ctx)
    refused = tools.list_accounts(ctx)

    assert code(refused) == "RATE_LIMITED"
    assert refused.structured_content["error"]["details"]["retry_after_s"] >= 1


def test_get_publication_takes_an_id_or_a_reference_key(ctx):
    assert code(tools.get_publication(ctx)) == "VALIDATION_ERROR"
    assert code(tools.get_publication(ctx, publication_id=1, reference_key="k")) == (
        "VALIDATION_ERROR"
    )
