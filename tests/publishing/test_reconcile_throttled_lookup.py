"""Reconciliation never resends while its lookup is throttled.

A rendition whose request may have reached the platform (outcome unknown) is settled by
looking for the post. When that lookup is answered 429 (or the platform's own rate-limit
answer), nothing is learnt: the rendition stays ambiguous, its check is rescheduled no
earlier than the reset the platform gave, and nothing is sent again. Every adapter with a
lookup, against its platform fake answering with the platform's documented rate-limit
headers."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from apps.common.db_clock import db_now
from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.providers.base import SupportsLookup, get_adapter
from apps.publishing.delivery.enqueue import publish_dedupe_key, reconcile_dedupe_key
from apps.publishing.delivery.failures import fail_ambiguous
from apps.renditions.models import DeliveryAttempt, Rendition
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.bluesky import BlueskyFake
from loadtest.platform_fakes.facebook import FacebookFake
from loadtest.platform_fakes.instagram import InstagramFake
from loadtest.platform_fakes.mastodon import MastodonFake
from loadtest.platform_fakes.pinterest import PinterestFake
from loadtest.platform_fakes.reddit import RedditFake
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.threads import ThreadsFake
from loadtest.platform_fakes.tiktok import TikTokFake
from loadtest.platform_fakes.x import XFake
from loadtest.platform_fakes.youtube import YouTubeFake
from tests.factories import PublicationFactory, RenditionFactory, RenditionSegmentFactory
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db(transaction=True)

RESET_S = 600  # the reset every fake announces in its rate-limit headers


@dataclass(frozen=True)
class Case:
    platform: str
    fake: type
    settings: dict = field(default_factory=dict)
    # The least wait the platform's answer asks for (its reset); None: no reset given.
    waits_s: float | None = RESET_S

    def __str__(self) -> str:
        return self.platform


CASES = [
    Case("x", XFake),
    Case("mastodon", MastodonFake),
    Case("bluesky", BlueskyFake),
    Case("facebook", FacebookFake),
    Case("instagram", InstagramFake),
    Case("threads", ThreadsFake),
    Case("pinterest", PinterestFake, {"title": "Loaves", "link": ""}),
    Case("reddit", RedditFake, {"subreddit": "r/Breadit", "title": "Fresh loaves"}),
    # TikTok documents one-minute windows and no reset header.
    Case("tiktok", TikTokFake, waits_s=60),
    # YouTube's 403 rateLimitExceeded carries no reset: the check backs off.
    Case("youtube", YouTubeFake, {"title": "Fresh loaves"}, waits_s=None),
]


def test_every_adapter_with_a_lookup_is_covered():
    from apps.providers.base import _ADAPTERS

    get_adapter("x")  # registers every adapter
    with_lookup = {
        name for name, adapter in _ADAPTERS.items() if isinstance(adapter, SupportsLookup)
    }
    # The sandbox is the project's own test platform, covered by its own tests.
    assert with_lookup - {"sandbox"} == {case.platform for case in CASES}


@pytest.fixture
def serve(settings):
    servers = []

    def start(case: Case):
        fake = case.fake(FaultPlan(rates={"poll_rate_limit": 1.0}, retry_after_s=RESET_S))
        servers.append(FakeServer([fake]).start())
        settings.PROVIDER_API_REDIRECT = servers[-1].base_url
        return fake

    settings.PROVIDER_TIMEOUT_S = 1
    settings.RECONCILE_SETTLE_S = 0
    yield start
    for server in servers:
        server.stop()


def _ambiguous_rendition(fake, case: Case, workspace) -> Rendition:
    """A rendition whose publish went unanswered a week ago (past every idempotency key's
    window, so only a lookup can settle it), handed to reconciliation."""
    opened = fake.new_account("baker")
    account = make_account(
        workspace,
        case.platform,
        remote_id=opened["remote_id"],
        handle=opened["handle"],
        credentials=opened["credentials"],
        settings=opened.get("settings") or {},
    )
    rendition = RenditionFactory(
        publication=PublicationFactory(workspace=workspace),
        social_account=account,
        status=Rendition.Status.PUBLISHING,
        settings={**(opened.get("settings") or {}), **case.settings},
    )
    RenditionSegmentFactory(rendition=rendition, position=0, text="Fresh loaves at dawn")
    # Where the publish step makes no post (a Meta container), the poll that publishes the
    # container is the request that may have made it.
    made_by = (
        DeliveryAttempt.Kind.PUBLISH
        if get_adapter(case.platform).publish_makes_post
        else DeliveryAttempt.Kind.POLL
    )
    DeliveryAttempt.objects.create(
        rendition=rendition,
        workspace_id=rendition.workspace_id,
        kind=made_by,
        segment_position=0,
        started_at=db_now() - timedelta(days=8),
        finished_at=db_now() - timedelta(days=8),
        outcome=DeliveryAttempt.Outcome.UNKNOWN,
        idempotency_key=f"r{rendition.pk}-s0",
    )
    fail_ambiguous(rendition, {"kind": "outcome_unknown", "message": "No answer."})
    return rendition


def _run_check(rendition: Rendition) -> None:
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")
    for job in worker.claim_batch():
        worker.run_one(job)
    rendition.refresh_from_db()


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_throttled_lookup_reschedules_the_check_and_sends_nothing(serve, workspace_a, case):
    fake = serve(case)
    rendition = _ambiguous_rendition(fake, case, workspace_a)
    before = db_now()

    _run_check(rendition)

    assert (rendition.status, rendition.ambiguous) == ("failed", True), rendition.last_error
    assert rendition.next_retry_at is None
    assert rendition.last_error["action"] == "wait", rendition.last_error
    check = Job.objects.unfinished().get(dedupe_key=reconcile_dedupe_key(rendition.pk))
    assert check.status == "pending"
    shown = datetime.fromisoformat(rendition.last_error["check_at"])
    assert abs(shown - check.run_at) < timedelta(seconds=2)  # the page says when it runs
    if case.waits_s is not None:
        assert check.run_at >= before + timedelta(seconds=case.waits_s - 5), check.last_error
    else:
        assert check.run_at > before
    # The lookup was asked and throttled; nothing went out again.
    [attempt] = rendition.delivery_attempts.filter(kind=DeliveryAttempt.Kind.RECONCILE)
    assert attempt.outcome == DeliveryAttempt.Outcome.FAILED
    assert attempt.error["kind"] == "rate_limited", attempt.error
    assert not Job.objects.unfinished().filter(dedupe_key=publish_dedupe_key(rendition.pk)).exists()
    assert fake.published() == []


@pytest.mark.parametrize("case", [c for c in CASES if c.platform in ("x", "mastodon")], ids=str)
def test_throttled_lookups_spend_no_check_of_the_reconciliation(serve, workspace_a, case):
    """A throttled lookup learnt nothing: however often it is throttled, the check comes
    again after each reset instead of the rendition going to a person."""
    fake = serve(case)
    rendition = _ambiguous_rendition(fake, case, workspace_a)

    for _ in range(8):
        _run_check(rendition)

    assert rendition.last_error["action"] == "wait", rendition.last_error
    check = Job.objects.unfinished().get(dedupe_key=reconcile_dedupe_key(rendition.pk))
    assert check.attempts <= 1
    assert fake.published() == []
