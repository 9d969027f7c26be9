"""The metrics sync against the platform fakes over HTTP: a post published through the
real adapter is read by the real reader, and its counts grow as the fake's clock runs."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import transaction

from apps.accounts import services as account_services
from apps.analytics.models import FollowersSample, MetricsSchedule, PostMetricsSample
from apps.analytics.sync import sync_workspace_platform
from apps.common import events
from apps.common.db_clock import db_now
from apps.providers.base import PublishContext, SegmentPayload, get_adapter
from apps.renditions.models import Rendition
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.bluesky import BlueskyFake
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.x import XFake
from tests.factories import RenditionFactory
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def _publish(account, text: str) -> Rendition:
    ctx = PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings={},
        rendition_id=1,
        idempotency_base="rendition-1",
    )
    made = get_adapter(account.platform).publish_segment(
        ctx, SegmentPayload(0, text), reply_to=None
    )
    rendition = RenditionFactory(
        publication__workspace=account.workspace,
        social_account=account,
        status=Rendition.Status.PUBLISHED,
        provider_post_id=made.provider_post_id,
        published_at=db_now() - timedelta(hours=2),
    )
    with transaction.atomic():
        events.emit(events.RENDITION_PUBLISHED, rendition=rendition)
    return rendition


def _read_twice(account, rendition, clock: Clock) -> list[PostMetricsSample]:
    for _ in range(2):
        MetricsSchedule.objects.filter(pk=rendition.pk).update(next_sync_at=db_now())
        sync_workspace_platform(workspace_id=account.workspace_id, platform=account.platform)
        clock.now += 1200  # the platform's time runs on between reads (within the token's life)
    return list(PostMetricsSample.objects.filter(rendition=rendition).order_by("id"))


@pytest.mark.parametrize("fake_class", [BlueskyFake, XFake])
def test_metrics_read_from_the_fake_grow_between_samples(fake_class, workspace_a, settings):
    settings.ANALYTICS_PLATFORMS = ["bluesky", "x"]
    clock = Clock()
    fake = fake_class(FaultPlan(hang_s=1.0))
    fake.clock = clock
    with FakeServer([fake]) as server:
        settings.PROVIDER_API_REDIRECT = server.base_url
        settings.PROVIDER_TIMEOUT_S = 2
        opened = fake.new_account("alice")
        opened.pop("display_name", None)
        account = make_account(workspace_a, fake.platform, **opened)
        rendition = _publish(account, "metrics, please")
        clock.now += 600
        first, second = _read_twice(account, rendition, clock)
    assert 0 < first.likes < second.likes
    assert first.replies <= second.replies and first.reposts <= second.reposts
    assert first.clicks is None and second.clicks is None  # neither platform offers clicks
    assert (first.views is None) == (fake.platform == "bluesky")
    assert FollowersSample.objects.get(social_account=account).followers >= 100
