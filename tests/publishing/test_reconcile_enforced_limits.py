"""Reconciliation meeting a platform's documented limit: its fake enforces the allowance of
the reads our lookup makes (`enforce_limits`), already spent. The check learns nothing,
sends nothing again, is scheduled no earlier than the reset the platform signals (or, where
it signals none, the reset it documents), and once the fake's clock reaches that reset the
lookup is answered."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from apps.jobs.models import Job
from apps.providers.youtube.errors import next_pacific_midnight
from apps.publishing.delivery.enqueue import publish_dedupe_key, reconcile_dedupe_key
from apps.renditions.models import DeliveryAttempt, Rendition
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.bluesky import BlueskyFake
from loadtest.platform_fakes.instagram import InstagramFake
from loadtest.platform_fakes.pinterest import PinterestFake
from loadtest.platform_fakes.reddit import RedditFake
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.threads import ThreadsFake
from loadtest.platform_fakes.tiktok import TikTokFake
from loadtest.platform_fakes.youtube import YouTubeFake
from tests.publishing.test_reconcile_throttled_lookup import Case, _ambiguous_rendition, _run_check

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass(frozen=True)
class Limited:
    case: Case
    endpoint: str  # the fake's allowance the lookup spends

    def __str__(self) -> str:
        return self.case.platform


CASES = [
    Limited(Case("bluesky", BlueskyFake), "read"),
    Limited(Case("reddit", RedditFake, {"subreddit": "r/Breadit", "title": "Loaves"}), "client"),
    Limited(Case("pinterest", PinterestFake, {"title": "Loaves", "link": ""}), "read"),
    Limited(Case("youtube", YouTubeFake, {"title": "Fresh loaves"}), "units"),
    Limited(Case("tiktok", TikTokFake), "video_list"),
    Limited(Case("threads", ThreadsFake), "calls"),
    Limited(Case("instagram", InstagramFake), "calls"),
]


@pytest.fixture
def serve(settings):
    servers = []

    def start(limited: Limited):
        fake = limited.case.fake(FaultPlan.calm())
        servers.append(FakeServer([fake]).start())
        settings.PROVIDER_API_REDIRECT = servers[-1].base_url
        return fake

    settings.PROVIDER_TIMEOUT_S = 2
    settings.RECONCILE_SETTLE_S = 0
    yield start
    for server in servers:
        server.stop()


def _expected_reset(limited: Limited, reset_at: float) -> datetime:
    """When the adapter should look again: the reset the fake signals, or, for YouTube (no
    header), the documented midnight Pacific."""
    if limited.case.platform == "youtube":
        return next_pacific_midnight()
    if limited.case.platform == "tiktok":  # no header: TikTok documents one-minute windows
        return datetime.now(UTC) + timedelta(seconds=55)
    return datetime.fromtimestamp(reset_at, UTC)


def _last_lookup(rendition: Rendition) -> DeliveryAttempt:
    return rendition.delivery_attempts.filter(kind=DeliveryAttempt.Kind.RECONCILE).latest("pk")


@pytest.mark.parametrize("limited", CASES, ids=str)
def test_a_lookup_past_the_limit_resends_nothing_and_looks_again_after_the_reset(
    serve, workspace_a, limited
):
    fake = serve(limited)
    rendition = _ambiguous_rendition(fake, limited.case, workspace_a)
    account = rendition.social_account.remote_id
    fake.switch(account, "enforce_limits")
    reset_at = fake.exhaust(account, limited.endpoint)

    _run_check(rendition)

    assert (rendition.status, rendition.ambiguous) == ("failed", True), rendition.last_error
    assert rendition.last_error["action"] == "wait", rendition.last_error
    assert _last_lookup(rendition).error["kind"] == "rate_limited"
    check = Job.objects.unfinished().get(dedupe_key=reconcile_dedupe_key(rendition.pk))
    expected = _expected_reset(limited, reset_at)
    assert check.run_at >= expected - timedelta(seconds=5), (check.run_at, expected)
    assert not Job.objects.unfinished().filter(dedupe_key=publish_dedupe_key(rendition.pk)).exists()
    assert fake.published() == []

    shift = reset_at - time.time()
    fake.clock = lambda: time.time() + shift  # the platform's reset has come
    _run_check(rendition)

    looked = _last_lookup(rendition)
    assert (looked.error or {}).get("kind") != "rate_limited", looked.error
    assert rendition.delivery_attempts.filter(kind=DeliveryAttempt.Kind.RECONCILE).count() == 2
    assert fake.published() == []
