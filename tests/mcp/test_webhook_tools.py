"""send_test_webhook: the MCP face of POST /api/v1/webhooks/{id}/test, with its rules."""

import pytest

from apps.api.mcp import tools
from apps.webhooks.models import WebhookDelivery, WebhookEndpoint
from apps.webhooks.services import webhook_endpoint_create
from tests.mcp.test_tools import code, context

pytestmark = pytest.mark.django_db

# An IP literal needs no name resolution; it is a public address.
URL = "https://93.184.215.14/hooks"


@pytest.fixture(autouse=True)
def _keep_the_test_transaction(monkeypatch):
    monkeypatch.setattr(tools, "close_old_connections", lambda: None)


def test_it_sends_a_test_event_to_that_endpoint(workspace_a, make_token):
    endpoint, _ = webhook_endpoint_create(workspace=workspace_a, url=URL)

    result = tools.send_test_webhook(context(make_token(workspace_a).token), webhook_id=endpoint.pk)

    assert not result.is_error, result
    delivery = WebhookDelivery.objects.get()
    assert result.structured_content["id"] == delivery.pk
    assert result.structured_content["event_type"] == "webhook.test"
    assert result.structured_content["status"] == "pending"
    assert delivery.endpoint_id == endpoint.pk


def test_it_needs_admin_an_active_endpoint_and_the_workspaces_own(
    workspace_a, workspace_b, make_token
):
    mine, _ = webhook_endpoint_create(workspace=workspace_a, url=URL)
    theirs, _ = webhook_endpoint_create(workspace=workspace_b, url=URL)
    admin = context(make_token(workspace_a).token)
    no_admin = context(make_token(workspace_a, scopes=["read", "write", "publish", "mcp"]).token)

    assert code(tools.send_test_webhook(no_admin, webhook_id=mine.pk)) == "INSUFFICIENT_SCOPE"
    assert code(tools.send_test_webhook(admin, webhook_id=theirs.pk)) == "NOT_FOUND"
    WebhookEndpoint.objects.filter(pk=mine.pk).update(is_active=False)
    assert code(tools.send_test_webhook(admin, webhook_id=mine.pk)) == "WEBHOOK_ENDPOINT_DISABLED"
    assert not WebhookDelivery.objects.exists()
