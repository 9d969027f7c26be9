"""The tools' permission rules, called in-process (the endpoint tests cover the transport):
the rules of the API endpoint each tool mirrors."""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.conf import settings

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


def _scheduled_post(workspace, text="Later", hours=2):
    from datetime import timedelta

    from django.utils import timezone

    from apps.publishing.services import publication_create
    from apps.sandbox.services import sandbox_account_create

    account = sandbox_account_create(
        workspace=workspace, handle=f"mcp{Publication.objects.count()}"
    )
    return publication_create(
        workspace=workspace,
        author=None,
        segments=[{"text": text}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now() + timedelta(hours=hours),
        status="scheduled",
    )


def test_list_publications_filters_and_never_shows_another_workspace(ctx, workspace_a, workspace_b):
    mine = _scheduled_post(workspace_a)
    _scheduled_post(workspace_b, text="Not yours")
    listed = tools.list_publications(ctx, status="scheduled")
    assert not listed.is_error
    assert [p["id"] for p in listed.structured_content["publications"]] == [mine.pk]
    assert tools.list_publications(ctx, status="draft").structured_content["publications"] == []
    assert code(tools.list_publications(ctx, status="nonsense")) == "VALIDATION_ERROR"


def test_reschedule_moves_the_time_and_refuses_a_stale_revision(ctx, workspace_a):
    publication = _scheduled_post(workspace_a)
    moved = tools.reschedule_publication(
        ctx,
        publication_id=publication.pk,
        revision=publication.revision,
        local_time="2031-05-04T09:30",
        timezone="Europe/Warsaw",
    )
    assert not moved.is_error, moved
    assert moved.structured_content["scheduled_at"].startswith("2031-05-04T07:30")
    stale = tools.reschedule_publication(
        ctx,
        publication_id=publication.pk,
        revision=publication.revision,
        local_time="2031-05-05T09:30",
    )
    assert code(stale) == "REVISION_CONFLICT"


def test_changing_a_scheduled_post_needs_publish_as_in_the_api(workspace_a, make_token):
    publication = _scheduled_post(workspace_a)
    writer = context(make_token(workspace_a, scopes=["mcp", "write"]).token)
    refused = tools.cancel_publication(writer, publication_id=publication.pk)
    assert code(refused) == "INSUFFICIENT_SCOPE"
    publication.refresh_from_db()
    assert publication.status == Publication.Status.SCHEDULED


def test_cancel_cancels_and_another_workspaces_id_is_not_found(ctx, workspace_a, workspace_b):
    publication = _scheduled_post(workspace_a)
    theirs = _scheduled_post(workspace_b)
    assert code(tools.cancel_publication(ctx, publication_id=theirs.pk)) == "NOT_FOUND"
    assert code(tools.reschedule_publication(ctx, publication_id=theirs.pk, revision=1)) == (
        "NOT_FOUND"
    )
    cancelled = tools.cancel_publication(ctx, publication_id=publication.pk)
    assert cancelled.structured_content["status"] == "cancelled"
    theirs.refresh_from_db()
    assert theirs.status == Publication.Status.SCHEDULED


def test_the_docs_name_each_tools_arguments_as_the_tool_does():
    """docs/mcp.md's table: every argument it names is one the tool takes, and every
    argument a tool needs is named."""
    table = Path(settings.BASE_DIR, "docs", "mcp.md").read_text()
    rows = re.findall(r"^\| `(\w+)`(?: \((.*?)\))? \|", table, flags=re.MULTILINE)
    assert {name for name, _ in rows} == {
        tool.name for tool in tools.server._tool_manager.list_tools()
    }
    for name, arguments in rows:
        schema = tools.server._tool_manager.get_tool(name).parameters
        named = set(re.findall(r"`(\w+)`", arguments))
        assert named <= set(schema["properties"]), (name, named)
        assert set(schema.get("required", [])) <= named, (name, schema.get("required"))
        assert not re.search(r"(^|[ (,])id([ ,)]|$)", arguments), (name, arguments)
