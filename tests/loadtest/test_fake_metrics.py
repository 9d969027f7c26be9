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
from loadtest.platform_fakes.base import StoredPost
from loadtest.platform_fakes.bluesky import BlueskyFake
from loadtest.platform_fakes.facebook import FacebookFake
from loadtest.platform_fakes.instagram import InstagramFake
from loadtest.platform_fakes.linkedin import MEMBER_SCOPES, LinkedInFake
from loadtest.platform_fakes.mastodon import MastodonFake
from loadtest.platform_fakes.pinterest import PinterestFake
from loadtest.platform_fakes.reddit import RedditFake
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.threads import ThreadsFake
from loadtest.platform_fakes.tiktok import TikTokFake
from loadtest.platform_fakes.x import XFake
from loadtest.platform_fakes.youtube import YouTubeFake
from tests.factories import RenditionFactory
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db

PARTNER_SCOPES = MEMBER_SCOPES | {"r_member_social", "r_member_followers"}


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


# Posts these fakes hold as their publishing makes them (a video, a subreddit's post), put in
# their store directly: the test is about reading them back.
STORED = {
    "youtube": lambda fake, account: StoredPost(
        id="vid00000001", account=account, text="", extra={"processed_at": 0, "fails": False}
    ),
    "threads": lambda fake, account: StoredPost(id="17900000001", account=account, text="hi"),
    "instagram": lambda fake, account: StoredPost(id="17800000001", account=account, text="hi"),
    "facebook": lambda fake, account: StoredPost(id=f"{account}_1001", account=account, text="hi"),
    "pinterest": lambda fake, account: StoredPost(id="1000000001", account=account, text="pin"),
    "reddit": lambda fake, account: StoredPost(
        id="t3_abc123",
        account=account,
        text="metrics, please",
        extra={"subreddit": "test", "title": "Metrics", "kind": "self", "url": "", "author": "a"},
    ),
}


def _tiktok_video(fake, account: str) -> str:
    """A published TikTok video as its fake holds it: the post under its publish id, the
    upload naming its public video id (what a moderated post's rendition keeps)."""
    fake.store(StoredPost(id="v_pub_1", account=account, text="hi"))
    fake.uploads["v_pub_1"] = {"open_id": account, "publish_id": "v_pub_1", "post_id": "7301"}
    return "7301"


def _publish(account, text: str, fake) -> Rendition:
    if account.platform == "tiktok":
        post_id = _tiktok_video(fake, account.remote_id)
    elif account.platform in STORED:
        post_id = fake.store(STORED[account.platform](fake, account.remote_id)).id
    else:
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
        post_id = made.provider_post_id
    rendition = RenditionFactory(
        publication__workspace=account.workspace,
        social_account=account,
        status=Rendition.Status.PUBLISHED,
        provider_post_id=post_id,
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


@pytest.mark.parametrize(
    "fake_class",
    [
        BlueskyFake, XFake, MastodonFake, YouTubeFake, RedditFake, ThreadsFake, InstagramFake,
        FacebookFake, TikTokFake, PinterestFake, LinkedInFake,
    ],
)  # fmt: skip
def test_metrics_read_from_the_fake_grow_between_samples(fake_class, workspace_a, settings):
    settings.ANALYTICS_PLATFORMS = [fake_class.platform]
    clock = Clock()
    fake = fake_class(FaultPlan(hang_s=1.0))
    fake.clock = clock
    with FakeServer([fake]) as server:
        settings.PROVIDER_API_REDIRECT = server.base_url
        settings.PROVIDER_TIMEOUT_S = 2
        if fake.platform == "linkedin":  # a partner app's member scopes
            opened = fake.new_account("alice", scopes=PARTNER_SCOPES)
        else:
            opened = fake.new_account("alice")
        opened.pop("display_name", None)
        account = make_account(workspace_a, fake.platform, **opened)
        rendition = _publish(account, "metrics, please", fake)
        clock.now += 600
        first, second = _read_twice(account, rendition, clock)
    if fake.platform == "pinterest":  # no likes: its clicks grow instead
        first.likes, second.likes = first.clicks, second.clicks
    assert 0 < first.likes < second.likes
    for name in ("replies", "reposts", "views"):
        before, after = getattr(first, name), getattr(second, name)
        assert (before is None) == (after is None)
        assert before is None or before <= after
    assert (first.reposts is None) == (fake.platform in ("youtube", "linkedin"))  # no shares
    # Only Facebook (with read_insights) and Pinterest count clicks among these.
    assert (first.clicks is None) == (fake.platform not in ("facebook", "pinterest"))
    no_views = ("bluesky", "mastodon", "reddit", "linkedin")
    assert (first.views is None) == (fake.platform in no_views)
    assert FollowersSample.objects.get(social_account=account).followers >= 100
