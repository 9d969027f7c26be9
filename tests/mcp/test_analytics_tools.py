"""get_analytics: the MCP face of GET /renditions/{id}/metrics and GET /analytics."""

from datetime import timedelta

import pytest

from apps.analytics.models import PostMetricsSample
from apps.analytics.services import metrics_schedule_start
from apps.api.mcp import tools
from apps.common.db_clock import db_now
from apps.renditions.models import Rendition
from tests.factories import RenditionFactory, SocialAccountFactory
from tests.mcp.test_tools import code, context

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _keep_the_test_transaction(monkeypatch):
    monkeypatch.setattr(tools, "close_old_connections", lambda: None)


def _read_post(workspace):
    account = SocialAccountFactory(workspace=workspace, platform="bluesky")
    rendition = RenditionFactory(
        publication__workspace=workspace,
        social_account=account,
        status=Rendition.Status.PUBLISHED,
        provider_post_id="at://did:plc:x/app.bsky.feed.post/1",
        published_at=db_now() - timedelta(hours=5),
    )
    metrics_schedule_start(rendition=rendition)  # as publishing does
    PostMetricsSample.objects.create(
        workspace=workspace,
        rendition=rendition,
        social_account=account,
        platform="bluesky",
        likes=7,
        replies=1,
        reposts=0,
    )
    return rendition


def test_it_answers_a_destination_and_a_period_as_the_api_does(workspace_a, make_token):
    rendition = _read_post(workspace_a)
    ctx = context(make_token(workspace_a).token)
    one = tools.get_analytics(ctx, rendition_id=rendition.pk)
    assert not one.is_error, one
    assert one.structured_content["latest"]["likes"] == 7
    assert one.structured_content["metrics"]["views"]["reason"] == "not_offered"
    period = tools.get_analytics(ctx, accounts=[rendition.social_account_id])
    assert period.structured_content["totals"]["likes"] == 7
    assert code(tools.get_analytics(ctx, date_from="soon")) == "VALIDATION_ERROR"


def test_another_workspaces_destination_is_not_found(workspace_a, workspace_b, make_token):
    theirs = _read_post(workspace_b)
    ctx = context(make_token(workspace_a).token)
    assert code(tools.get_analytics(ctx, rendition_id=theirs.pk)) == "NOT_FOUND"
    no_read = context(make_token(workspace_a, scopes=["write", "mcp"]).token)
    assert code(tools.get_analytics(no_read, rendition_id=theirs.pk)) == "INSUFFICIENT_SCOPE"
