"""post.engagement_reached: a post's likes, replies and reposts together reach one of the
operator's thresholds; announced once per threshold, as a webhook event."""

from datetime import timedelta

import httpx
import pytest

from apps.analytics.models import MetricsSchedule
from apps.analytics.sync import sync_workspace_platform
from apps.webhooks.endpoints import webhook_endpoint_create
from apps.webhooks.models import WebhookEvent
from tests.analytics.conftest import SANDBOX, make_due, publish
from tests.webhooks.conftest import fake_dns  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def hooked(workspace_a, fake_dns, settings):  # noqa: F811 - the fixture
    fake_dns({"hooks.example.com": "93.184.215.14"})
    settings.ANALYTICS_ENGAGEMENT_THRESHOLDS = [10, 50]
    webhook_endpoint_create(workspace=workspace_a, url="https://hooks.example.com/in")


def _read(account, rendition, sandbox_api, likes: int) -> None:
    sandbox_api.get(f"{SANDBOX}/posts/7/metrics").mock(
        return_value=httpx.Response(200, json={"likes": likes, "replies": 0, "reposts": 0})
    )
    make_due(rendition)
    sync_workspace_platform(workspace_id=account.workspace_id, platform="sandbox")


def test_each_threshold_is_announced_once(hooked, account, sandbox_api, workspace_a):
    sandbox_api.get(f"{SANDBOX}/me").respond(200, json={"followers_count": 1})
    rendition = publish(account, age=timedelta(hours=2))
    announced = WebhookEvent.objects.filter(workspace=workspace_a, type="post.engagement_reached")

    _read(account, rendition, sandbox_api, likes=4)
    assert not announced.exists()
    _read(account, rendition, sandbox_api, likes=60)  # past both at once
    assert [e.data["engagement"] for e in announced.order_by("pk")] == [
        {"threshold": 10, "value": 60},
        {"threshold": 50, "value": 60},
    ]
    assert announced.first().data["rendition"]["id"] == rendition.pk
    _read(account, rendition, sandbox_api, likes=30)  # a count that fell...
    _read(account, rendition, sandbox_api, likes=70)  # ...and rose again announces nothing
    assert announced.count() == 2
    assert MetricsSchedule.objects.get(pk=rendition.pk).engagement_notified == 50
