"""The MCP tools through the MCP client library against the live endpoint."""

import json
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone
from mcp import MCPError

from apps.publications.models import Publication
from apps.renditions.models import normalize_error
from tests.factories import PublicationFactory, RenditionFactory, SocialAccountFactory

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {
    "list_accounts",
    "list_capabilities",
    "validate_draft",
    "create_publication",
    "get_publication",
    "list_publications",
    "reschedule_publication",
    "cancel_publication",
    "retry_publication",
    "queue_publication",
    "list_queue_slots",
    "set_queue_slots",
    "resolve_rendition",
    "get_analytics",
    "send_test_webhook",
    "list_comments",
    "get_comment_thread",
    "reply_to_comment",
    "update_comment",
    "moderate_comment",
}


def error_of(result) -> dict:
    assert result.is_error, result
    body = json.loads(result.content[0].text)
    assert set(body["error"]) == {"code", "message", "details"}
    return body["error"]


def later(hours: int = 2) -> str:
    return (timezone.now() + timedelta(hours=hours)).isoformat()


def test_it_lists_the_tools(mcp, workspace_a, make_token):
    async def names(session):
        return {tool.name for tool in (await session.list_tools()).tools}

    assert mcp.session(make_token(workspace_a, scopes=["mcp"]).clear, names) == TOOLS


def test_list_accounts_shows_only_the_workspace_accounts(mcp, sandy, workspace_b):
    SocialAccountFactory(workspace=workspace_b, handle="outsider")

    result = mcp("list_accounts")

    assert not result.is_error
    assert [a["handle"] for a in result.structured_content["accounts"]] == ["sandy"]


def test_list_capabilities_answers_the_catalog(mcp):
    one = mcp("list_capabilities", platform="sandbox")
    unknown = mcp("list_capabilities", platform="myspace")

    (sandbox,) = one.structured_content["platforms"]
    assert sandbox["platform"] == "sandbox"
    assert sandbox["text"]["limit"] == 500
    assert error_of(unknown)["code"] == "UNKNOWN_PLATFORM"


def test_validate_draft_reports_every_problem_with_path_and_code(mcp, sandy, sandra):
    result = mcp(
        "validate_draft",
        text="x" * 501,
        destinations=[{"account": sandy.pk}, {"account": sandra.pk}],
    )

    assert not result.is_error
    report = result.structured_content
    assert report["valid"] is False
    assert {(p["path"], p["code"]) for p in report["problems"]} == {
        ("destinations.0.segments.0.text", "TEXT_TOO_LONG"),
        ("destinations.1.segments.0.text", "TEXT_TOO_LONG"),
    }
    assert not Publication.objects.exists()


def test_create_publication_schedules_it_to_two_destinations(mcp, workspace_a, sandy, sandra):
    at = later()

    result = mcp(
        "create_publication",
        segments=[{"text": "First"}, {"text": "Second"}],
        destinations=[{"account": sandy.pk}, {"account": sandra.pk}],
        scheduled_at=at,
        status="scheduled",
        reference_key="mcp-1",
        first_comment="More at https://e.x",
    )

    assert not result.is_error, result.content
    body = result.structured_content
    assert body["status"] == "scheduled"
    assert {r["account_handle"] for r in body["renditions"]} == {"sandy", "sandra"}
    publication = Publication.objects.get(pk=body["id"])
    assert publication.workspace == workspace_a
    assert publication.reference_key == "mcp-1"
    assert body["first_comment"] == publication.first_comment == "More at https://e.x"
    assert publication.scheduled_at == timezone.datetime.fromisoformat(at)
    assert [s.text for s in publication.segments.order_by("position")] == ["First", "Second"]


def test_scheduling_needs_the_publish_scope_as_in_the_api(mcp, workspace_a, make_token, sandy):
    writer = make_token(workspace_a, scopes=["mcp", "write"]).clear
    destinations = [{"account": sandy.pk}]

    refused = mcp(
        "create_publication", token=writer, text="Hi", destinations=destinations, status="scheduled"
    )
    draft = mcp("create_publication", token=writer, text="Hi", destinations=destinations)

    error = error_of(refused)
    assert error["code"] == "INSUFFICIENT_SCOPE"
    assert error["details"]["required"] == ["write", "publish"]
    assert draft.structured_content["status"] == "draft"
    assert Publication.objects.count() == 1


def test_a_body_the_api_refuses_is_the_api_envelope(mcp, sandy):
    result = mcp("create_publication", segments=[{"text": "Hi", "colour": "red"}])

    error = error_of(result)
    assert error["code"] == "UNKNOWN_FIELD"
    assert error["details"] == {"segments.0.colour": ["Unknown field."]}


def test_get_publication_shows_each_destination(mcp, workspace_a, sandy, sandra):
    publication = PublicationFactory(workspace=workspace_a, status="failed", reference_key="r-7")
    RenditionFactory(
        publication=publication,
        social_account=sandy,
        status="published",
        published_at=timezone.now(),
        provider_url="https://sandbox.example/p/1",
    )
    RenditionFactory(
        publication=publication,
        social_account=sandra,
        status="failed",
        ambiguous=True,
        last_error=normalize_error({"kind": "timeout_after_send", "message": "No answer."}),
    )

    by_id = mcp("get_publication", publication_id=publication.pk)
    by_key = mcp("get_publication", reference_key="r-7")

    renditions = {r["account_handle"]: r for r in by_id.structured_content["renditions"]}
    assert renditions["sandy"]["status"] == "published"
    assert renditions["sandy"]["provider_url"] == "https://sandbox.example/p/1"
    assert renditions["sandra"]["ambiguous"] is True
    assert renditions["sandra"]["error"]["kind"] == "timeout_after_send"
    assert by_key.structured_content["id"] == publication.pk


def test_another_workspaces_publication_is_not_found(mcp, workspace_b):
    theirs = PublicationFactory(workspace=workspace_b, status="failed", reference_key="theirs")
    RenditionFactory(publication=theirs, status="failed")

    assert error_of(mcp("get_publication", publication_id=theirs.pk))["code"] == "NOT_FOUND"
    assert error_of(mcp("get_publication", reference_key="theirs"))["code"] == "NOT_FOUND"
    assert error_of(mcp("retry_publication", publication_id=theirs.pk))["code"] == "NOT_FOUND"
    assert theirs.renditions.get().status == "failed"


def test_retry_publication_sends_failed_destinations_again(mcp, workspace_a, sandy):
    publication = PublicationFactory(workspace=workspace_a, status="failed")
    failed = RenditionFactory(
        publication=publication,
        social_account=sandy,
        status="failed",
        last_error=normalize_error({"kind": "content_rejected", "message": "No."}),
    )

    result = mcp("retry_publication", publication_id=publication.pk)

    assert not result.is_error, result.content
    assert result.structured_content["renditions"][0]["status"] == "scheduled"
    failed.refresh_from_db()
    assert failed.manual_retry_count == 1


def test_a_token_without_the_mcp_scope_is_refused(mcp, workspace_a, make_token):
    api_only = make_token(workspace_a, scopes=["read", "write", "publish"]).clear

    response = httpx.post(
        mcp.url,
        headers={"Authorization": f"Bearer {api_only}", "Accept": "application/json"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "INSUFFICIENT_SCOPE"
    assert response.json()["error"]["details"]["required"] == ["mcp"]

    async def tools(session):
        return await session.list_tools()

    with pytest.RaisesGroup(pytest.RaisesGroup(MCPError)):  # the client stops at initialize
        mcp.session(api_only, tools)


def test_a_request_without_a_live_token_is_401(mcp, workspace_a, make_token):
    revoked = make_token(workspace_a)
    revoked.token.revoked_at = timezone.now()
    revoked.token.save()
    cases = {
        None: "UNAUTHENTICATED",
        "Token abc": "INVALID_AUTH_HEADER",
        "Bearer sp_unknown": "INVALID_TOKEN",
        f"Bearer {revoked.clear}": "INVALID_TOKEN",
    }
    for authorization, code in cases.items():
        headers = {"Authorization": authorization} if authorization else {}
        response = httpx.post(mcp.url, headers=headers, json={})

        assert response.status_code == 401, authorization
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert response.json()["error"]["code"] == code, authorization


def test_a_token_whose_creator_left_the_workspace_is_401(mcp, workspace_a, bob):
    from apps.accounts import membership, services

    issued = services.api_token_create(
        workspace=workspace_a, name="bob's", scopes=["read", "mcp"], created_by=bob
    )
    headers = {"Authorization": f"Bearer {issued.clear}"}
    membership.workspace_member_remove(workspace=workspace_a, user=bob)

    response = httpx.post(mcp.url, headers=headers, json={})

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "INVALID_TOKEN"


def test_a_foreign_host_is_refused_and_django_answers_beside_the_endpoint(mcp):
    response = httpx.post(mcp.url, headers={"Host": "evil.example"}, json={})

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "DISALLOWED_HOST"
    api = httpx.get(mcp.url.replace("/mcp", "/api/v1/me"))
    assert api.status_code == 401
    assert api.json()["error"]["code"] == "UNAUTHENTICATED"


def test_what_a_tool_does_is_audited_to_its_token_and_its_person(
    mcp, workspace_a, make_token, alice, sandy
):
    """Resolving an ambiguous destination through MCP is in the audit log as the same call
    through the API is: its token, the person who made it, where it came from."""
    from apps.accounts.services import api_token_create
    from apps.audit.models import AuditEvent
    from apps.publishing.services import publication_create
    from tests.web.test_publications import fail

    issued = api_token_create(
        workspace=workspace_a, name="agent", scopes=["read", "publish", "mcp"], created_by=alice
    )
    publication = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Sent, no answer"}],
        destinations=[{"account": sandy.pk}],
        scheduled_at=later(),
        status="scheduled",
    )
    rendition = publication.renditions.get()
    fail(rendition, kind="outcome_unknown", action="verify", ambiguous=True)

    result = mcp(
        "resolve_rendition",
        token=issued.clear,
        rendition_id=rendition.pk,
        outcome="published",
        provider_url="https://sandbox.example/@sandy/1",
    )
    assert not result.is_error, result
    [shown] = result.structured_content["renditions"]
    assert shown["status"] == "published"

    event = AuditEvent.objects.get(action="rendition.resolved")
    assert event.actor_user == alice
    assert event.actor_token_id == issued.token.pk
    assert event.actor_label.startswith("API token agent")
    assert event.ip == "127.0.0.1"
    assert event.user_agent.startswith("MCP ")
    assert event.metadata["outcome"] == "published"


def test_arguments_the_tool_refuses_are_the_api_envelope(mcp, workspace_a):
    missing = error_of(mcp("retry_publication"))
    assert missing["code"] == "VALIDATION_ERROR"
    assert list(missing["details"]) == ["publication_id"]

    wrong_type = error_of(mcp("get_publication", publication_id="seven"))
    assert wrong_type["code"] == "VALIDATION_ERROR"
    assert list(wrong_type["details"]) == ["publication_id"]

    too_many = mcp("list_publications", limit=500)
    assert error_of(too_many)["details"]["limit"]
    assert too_many.structured_content == json.loads(too_many.content[0].text)


def test_an_argument_the_tool_does_not_take_is_unknown_field(mcp, workspace_a):
    # The tools take publication_id / rendition_id, not id (as the API's fields are named).
    publication = PublicationFactory(workspace=workspace_a, status="draft")

    error = error_of(mcp("reschedule_publication", id=publication.pk, revision=1))

    assert error["code"] == "UNKNOWN_FIELD"
    assert error["details"] == {"id": ["Unknown argument."]}


def test_an_unknown_tool_is_the_envelope(mcp):
    error = error_of(mcp("publish_everything"))
    assert error["code"] == "NOT_FOUND"
    assert error["details"] == {"tool": "publish_everything"}
