"""A thread segment whose create went unanswered, then refused again and again, on a
platform whose idempotency key can still settle it (Mastodon, the key kept an hour).

Refusals of the later sends say nothing about the unanswered one. Spending the publish
attempts on them must not hand the rendition to a person while the key can settle it: the
rendition stays ambiguous with its check scheduled, and the check's resend under the key
returns the status the unanswered create made. A 429 with a reset time spends no attempt at
all. Against the Mastodon fake: one status per segment, never two, never a person."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.publishing.services import publication_create
from apps.renditions.models import DeliveryAttempt, Rendition
from loadtest.platform_fakes.base import json_response
from loadtest.platform_fakes.faults import FaultPlan
from loadtest.platform_fakes.mastodon import MastodonFake
from loadtest.platform_fakes.server import FakeServer
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db(transaction=True)

MAX_ATTEMPTS = 8  # the publish job type's


class ScriptedFaults(FaultPlan):
    """Faults by call order: `script[fault]` lists, call by call, whether it strikes;
    past the list it does not. `always` strike on every call."""

    def __init__(self, script: dict[str, list[bool]], always: frozenset[str]) -> None:
        super().__init__(rates={}, hang_s=1.0, retry_after_s=1, listing_lag_s=3600.0)
        self.script = {fault: list(calls) for fault, calls in script.items()}
        self.always = always

    def strikes(self, fault: str) -> bool:
        if fault in self.always:
            return True
        calls = self.script.get(fault)
        return bool(calls.pop(0)) if calls else False


@pytest.fixture
def serve(settings):
    servers = []

    def start(fake_class: type[MastodonFake], faults: FaultPlan) -> MastodonFake:
        fake = fake_class(faults)
        servers.append(FakeServer([fake]).start())
        settings.PROVIDER_API_REDIRECT = servers[-1].base_url
        return fake

    settings.PROVIDER_TIMEOUT_S = 0.75
    settings.RECONCILE_DELAY_S = 0
    # The unanswered status is never listed (a lagging listing): only the key settles it.
    settings.RECONCILE_SETTLE_S = 0
    yield start
    for server in servers:
        server.stop()


def _thread(fake: MastodonFake, workspace) -> Rendition:
    opened = fake.new_account("baker")
    account = make_account(
        workspace,
        "mastodon",
        remote_id=opened["remote_id"],
        handle=opened["handle"],
        credentials=opened["credentials"],
        settings=opened["settings"],
    )
    publication = publication_create(
        workspace=workspace,
        author=None,
        segments=[{"text": "Rye at dawn"}, {"text": "Spelt at noon"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    return publication.renditions.get()


def _run_until_unsettled(rendition: Rendition) -> None:
    """Run the first publish: segment 0 posted, segment 1's create unanswered."""
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")
    for job in worker.claim_batch():
        worker.run_one(job)
    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous) == ("failed", True), rendition.last_error


def _run_until_settled(rendition: Rendition, *, rounds: int = 60) -> list[dict]:
    """Run every unfinished job now, round after round; the rendition's errors on the way."""
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")
    seen = []
    for _ in range(rounds):
        Job.objects.unfinished().update(run_at=timezone.now())
        jobs = worker.claim_batch()
        for job in jobs:
            worker.run_one(job)
        rendition.refresh_from_db()
        if rendition.last_error:
            seen.append(rendition.last_error)
        if rendition.status == Rendition.Status.PUBLISHED or not jobs:
            break
    return seen


class RefusingMastodon(MastodonFake):
    """Refuses the next `refusals` creates with a 429 that names no reset (a proxy in front
    of the instance throttling), before the key is read: each spends an attempt."""

    refusals = 0

    def create_status(self, request):
        if self.refusals > 0:
            self.refusals -= 1
            return json_response({"error": "Too many requests"}, 429)
        return super().create_status(request)

    create_status._fake_route = MastodonFake.create_status._fake_route  # type: ignore[attr-defined]


def _published_once_without_a_person(fake: MastodonFake, rendition: Rendition) -> None:
    seen = _run_until_settled(rendition)

    assert rendition.status == Rendition.Status.PUBLISHED, rendition.last_error
    assert not [error for error in seen if error.get("action") == "verify"], seen
    posts = sorted(fake.published(), key=lambda post: int(post.id))
    assert [post.text for post in posts] == ["Rye at dawn", "Spelt at noon"]  # never twice
    first, second = rendition.segments.order_by("position")
    assert (first.provider_post_id, second.provider_post_id) == (posts[0].id, posts[1].id)


def _refused(rendition: Rendition) -> int:
    return rendition.delivery_attempts.filter(
        kind=DeliveryAttempt.Kind.PUBLISH, segment_position=1, outcome="failed"
    ).count()


def test_429s_after_an_unanswered_segment_spend_no_attempt_and_the_key_settles_it(
    serve, workspace_a
):
    refusals = MAX_ATTEMPTS + 4
    script = {
        "timeout_after_accept": [False, True],  # segment 1's first create: stored, no answer
        "rate_limit": [False, False] + [True] * refusals,
    }
    fake = serve(MastodonFake, ScriptedFaults(script, always=frozenset({"listing_lag"})))
    rendition = _thread(fake, workspace_a)

    _published_once_without_a_person(fake, rendition)
    assert _refused(rendition) == refusals


def test_attempts_spent_after_an_unanswered_segment_leave_it_to_the_key_not_a_person(
    serve, workspace_a
):
    script = {"timeout_after_accept": [False, True]}
    fake = serve(RefusingMastodon, ScriptedFaults(script, always=frozenset({"listing_lag"})))
    rendition = _thread(fake, workspace_a)
    _run_until_unsettled(rendition)
    fake.refusals = MAX_ATTEMPTS + 2

    _published_once_without_a_person(fake, rendition)
    assert _refused(rendition) == MAX_ATTEMPTS + 2
    assert rendition.attempts > MAX_ATTEMPTS  # the attempts ran out on the way
