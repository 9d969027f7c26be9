"""Mastodon's Idempotency-Key as the server keeps it: a lock per key while a request runs
(another request under the key is refused with 503, nothing created), and the key recorded
only after the status is saved (a failure in between leaves a status a resend under the key
would duplicate). The real adapter against the Mastodon fake, alone and through the
pipeline."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts import services as account_services
from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.providers import httpcall
from apps.providers.base import PublishContext, SegmentPayload, get_adapter
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.publishing.delivery.enqueue import reconcile_dedupe_key
from apps.publishing.services import publication_create
from apps.renditions.models import DeliveryAttempt
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.mastodon import TEMPORARY_PROBLEM, MastodonFake
from loadtest.platform_fakes.server import FakeServer
from tests.providers.social_helpers import image, make_account


class Clock:
    """The instance's clock, moved by the adapter's waits and by the test."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class Once(FaultPlan):
    """Each of `faults` strikes its first eligible call only."""

    def __init__(self, *faults: str) -> None:
        super().__init__(rates={}, hang_s=1.0)
        self.once = set(faults)

    def strikes(self, fault: str) -> bool:
        if fault in self.once and not self.struck.get(fault):
            self.struck[fault] = 1
            return True
        return False


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(httpcall, "sleep", clock.sleep)
    return clock


@pytest.fixture
def mastodon(settings, clock):
    servers = []

    def serve(*faults: str) -> MastodonFake:
        fake = MastodonFake(Once(*faults))
        fake.clock = clock
        servers.append(FakeServer([fake]).start())
        settings.PROVIDER_API_REDIRECT = servers[-1].base_url
        return fake

    settings.PROVIDER_TIMEOUT_S = 0.5
    yield serve
    for server in servers:
        server.stop()


def _ctx(account, rendition_id: int = 41) -> PublishContext:
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings={"visibility": "unlisted"},
        rendition_id=rendition_id,
        idempotency_base=f"rendition-{rendition_id}",
        checkpoint={},
    )


def _publish(ctx, text: str, media=()):
    return get_adapter("mastodon").publish_segment(
        ctx, SegmentPayload(0, text, list(media)), reply_to=None
    )


# -- the adapter against the fake ---------------------------------------------------------


@pytest.mark.django_db
def test_a_request_under_a_key_another_request_holds_is_refused_as_in_progress(
    mastodon, workspace_a, clock
):
    fake = mastodon("slow_create")
    account = make_account(workspace_a, "mastodon", **fake.new_account("alice"))
    ctx = _ctx(account)
    with pytest.raises(ProviderError) as lost:
        _publish(ctx, "Still being saved")  # the client gives up; the server goes on
    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN

    with pytest.raises(ProviderError) as refused:
        _publish(_ctx(account), "Still being saved")  # same key, no lookup first

    err = refused.value
    assert (err.kind, err.code, err.http_status) == (
        ErrorKind.PROVIDER_UNAVAILABLE,
        "request_in_progress",
        503,
    )
    assert err.retryable is True and err.action == Action.WAIT
    assert err.message == TEMPORARY_PROBLEM
    assert len(fake.published()) == 1

    clock.now += fake.faults.hang_s  # the first request ends, records its key, unlocks
    again = _publish(_ctx(account), "Still being saved")
    [post] = fake.published()
    assert again.provider_post_id == post.id


@pytest.mark.django_db
def test_the_lock_answer_of_a_server_that_ignores_keys_stays_unknown(mastodon, workspace_a):
    fake = mastodon("slow_create")
    opened = fake.new_account("alice")
    opened["settings"]["honours_idempotency_key"] = False
    account = make_account(workspace_a, "mastodon", **opened)
    with pytest.raises(ProviderError):
        _publish(_ctx(account), "Elsewhere")

    with pytest.raises(ProviderError) as refused:
        _publish(_ctx(account), "Elsewhere")

    # Without a key it honours, a 503 says nothing about what was made.
    assert refused.value.kind == ErrorKind.OUTCOME_UNKNOWN


@pytest.mark.django_db
def test_a_status_saved_before_its_key_was_recorded_is_found_not_sent_again(mastodon, workspace_a):
    fake = mastodon("key_not_recorded")
    account = make_account(workspace_a, "mastodon", **fake.new_account("alice"))
    ctx = _ctx(account)
    with pytest.raises(ProviderError) as lost:
        _publish(ctx, "Saved, key lost")
    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    [stored] = fake.published()
    assert fake.keys == {}  # a resend under the key alone would make a second status

    again = _publish(ctx, "Saved, key lost")

    assert again.provider_post_id == stored.id
    assert len(fake.published()) == 1
    assert ("POST", "/api/v1/statuses") in fake.calls
    assert fake.calls.count(("POST", "/api/v1/statuses")) == 1


@pytest.mark.django_db
def test_a_media_status_saved_before_its_key_is_found_by_its_uploads(mastodon, workspace_a):
    fake = mastodon("key_not_recorded")
    account = make_account(workspace_a, "mastodon", **fake.new_account("alice"))
    ctx = _ctx(account)
    with pytest.raises(ProviderError):
        _publish(ctx, "A loaf", media=[image(alt="A loaf")])

    again = _publish(ctx, "A loaf", media=[image(alt="A loaf")])

    [post] = fake.published()
    assert again.provider_post_id == post.id
    assert len(fake.media) == 1  # nothing uploaded again


@pytest.mark.django_db
def test_an_unlisted_status_is_not_resent_before_the_listing_settles(
    mastodon, workspace_a, clock, settings
):
    settings.RECONCILE_SETTLE_S = 300
    fake = mastodon("key_not_recorded", "listing_lag")
    account = make_account(workspace_a, "mastodon", **fake.new_account("alice"))
    ctx = _ctx(account)
    with pytest.raises(ProviderError):
        _publish(ctx, "Lagging")

    with pytest.raises(ProviderError) as waiting:
        _publish(ctx, "Lagging")

    assert waiting.value.code == "not_listed_yet"
    assert waiting.value.retryable is True and waiting.value.retry_at > timezone.now()
    assert fake.calls.count(("POST", "/api/v1/statuses")) == 1
    clock.now += fake.faults.listing_lag_s
    [post] = fake.published()
    assert _publish(ctx, "Lagging").provider_post_id == post.id


@pytest.mark.django_db
def test_a_create_refused_outright_leaves_nothing_to_look_for(mastodon, workspace_a):
    fake = mastodon("rate_limit")
    account = make_account(workspace_a, "mastodon", **fake.new_account("alice"))
    ctx = _ctx(account)
    with pytest.raises(ProviderError) as refused:
        _publish(ctx, "Too soon")
    assert refused.value.kind == ErrorKind.RATE_LIMITED

    _publish(ctx, "Too soon")

    listings = [c for c in fake.calls if c[1].endswith("/statuses") and c[0] == "GET"]
    assert listings == []
    assert len(fake.published()) == 1


# -- through the pipeline -----------------------------------------------------------------


def _worker() -> Worker:
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")


def _schedule(workspace, account, text: str):
    publication = publication_create(
        workspace=workspace,
        author=None,
        segments=[{"text": text}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    return publication.renditions.get()


def _drain(worker: Worker, rendition, *, rounds: int = 40) -> None:
    for _ in range(rounds):
        jobs = worker.claim_batch()
        for job in jobs:
            worker.run_one(job)
        rendition.refresh_from_db()
        if not jobs and not Job.objects.unfinished().filter(run_at__lte=timezone.now()).exists():
            return


def _check_now(worker: Worker, rendition) -> None:
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    _drain(worker, rendition)


@pytest.mark.django_db(transaction=True)
def test_a_lost_answer_whose_key_was_never_recorded_settles_as_one_post(
    mastodon, settings, workspace_a
):
    settings.RECONCILE_DELAY_S = 0
    settings.RECONCILE_SETTLE_S = 0
    fake = mastodon("key_not_recorded")
    account = make_account(workspace_a, "mastodon", **fake.new_account("alice"))
    rendition = _schedule(workspace_a, account, "Fresh loaves at dawn")

    _drain(_worker(), rendition)

    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert rendition.segments.get().provider_post_id == post.id
    outcomes = list(rendition.delivery_attempts.order_by("pk").values_list("kind", "outcome"))
    assert outcomes == [("publish", "unknown"), ("publish", "published")]


@pytest.mark.django_db(transaction=True)
def test_a_resend_meeting_the_key_lock_stays_ambiguous_then_settles_as_one_post(
    mastodon, settings, workspace_a, clock
):
    settings.RECONCILE_DELAY_S = 0
    settings.RECONCILE_SETTLE_S = 0
    fake = mastodon("slow_create", "listing_lag")
    fake.faults.listing_lag_s = 10 * 3600  # not listed: only the key can answer
    account = make_account(workspace_a, "mastodon", **fake.new_account("alice"))
    rendition = _schedule(workspace_a, account, "Rye today")
    worker = _worker()

    _drain(worker, rendition)

    # The resend met the first request's lock: in progress, checked again, never failed.
    assert rendition.status == "failed" and rendition.ambiguous
    assert rendition.last_error["action"] == "wait"
    assert rendition.last_error["refused"]["code"] == "request_in_progress"
    assert len(fake.published()) == 1

    clock.now += fake.faults.hang_s  # the first request ends and records its key
    _check_now(worker, rendition)

    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert rendition.segments.get().provider_post_id == post.id
    assert rendition.delivery_attempts.filter(outcome=DeliveryAttempt.Outcome.FAILED).count() == 1


# -- with the fake's per-account switches on (as the soak turns them on) -------------------


def _switched_account(fake: MastodonFake, workspace, behaviour: str, *, dropped: bool = False):
    """An account whose every keyed create meets `behaviour`: a `key_lock` create runs 1 s
    (past the client's 0.5 s), a `key_not_recorded` one answers 500 or, `dropped`, closes
    the connection."""
    opened = fake.new_account("alice")
    fake.switch(opened["settings"]["account_id"], behaviour)
    fake.switched_share, fake.key_lock_hold_s = 1.0, 1.0
    fake.dropped_share = 1.0 if dropped else 0.0
    return make_account(workspace, "mastodon", **opened)


def _creates(fake: MastodonFake) -> int:
    return fake.calls.count(("POST", "/api/v1/statuses"))


@pytest.mark.django_db
def test_with_key_lock_on_the_resend_is_in_progress_until_the_create_ends_then_takes_its_status(
    mastodon, workspace_a, clock, settings
):
    settings.RECONCILE_SETTLE_S = 0  # the resend goes out as soon as the listing is read
    fake = mastodon()
    account = _switched_account(fake, workspace_a, "key_lock")
    ctx = _ctx(account)
    with pytest.raises(ProviderError) as lost:
        _publish(ctx, "Held under the lock")
    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN

    with pytest.raises(ProviderError) as refused:
        _publish(ctx, "Held under the lock")  # not listed yet: the resend meets the lock

    err = refused.value
    assert (err.code, err.retryable, err.action) == ("request_in_progress", True, Action.WAIT)
    assert err.kind != ErrorKind.OUTCOME_UNKNOWN  # in progress, not a failure of its own
    assert _creates(fake) == 2 and len(fake.published()) == 1  # refused, nothing made

    clock.now += fake.key_lock_hold_s  # the first create ends: saved, listed, key recorded
    again = _publish(ctx, "Held under the lock")

    [post] = fake.published()
    assert again.provider_post_id == post.id
    assert _creates(fake) == 2  # found by the listing, not sent a third time


@pytest.mark.django_db
@pytest.mark.parametrize("dropped", [False, True], ids=["500", "connection-closed"])
def test_with_key_not_recorded_on_the_resend_finds_the_saved_status_and_settles_on_it(
    mastodon, workspace_a, dropped
):
    fake = mastodon()
    account = _switched_account(fake, workspace_a, "key_not_recorded", dropped=dropped)
    ctx = _ctx(account)
    with pytest.raises(ProviderError) as lost:
        _publish(ctx, "Saved, never keyed")
    assert lost.value.kind == ErrorKind.OUTCOME_UNKNOWN
    [stored] = fake.published()
    assert fake.keys == {}  # a resend under the key alone would make a second status

    again = _publish(ctx, "Saved, never keyed")

    assert again.provider_post_id == stored.id
    assert len(fake.published()) == 1
    assert _creates(fake) == 1


@pytest.mark.django_db(transaction=True)
def test_with_key_lock_on_a_rendition_waits_out_the_lock_and_publishes_one_status(
    mastodon, settings, workspace_a, clock
):
    settings.RECONCILE_DELAY_S = 0
    settings.RECONCILE_SETTLE_S = 0
    fake = mastodon()
    account = _switched_account(fake, workspace_a, "key_lock")
    rendition = _schedule(workspace_a, account, "Spelt on Fridays")
    worker = _worker()

    _drain(worker, rendition)

    assert rendition.status == "failed" and rendition.ambiguous
    assert rendition.last_error["action"] == "wait"
    assert rendition.last_error["refused"]["code"] == "request_in_progress"
    assert len(fake.published()) == 1

    clock.now += fake.key_lock_hold_s
    _check_now(worker, rendition)

    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert rendition.segments.get().provider_post_id == post.id


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("dropped", [False, True], ids=["500", "connection-closed"])
def test_with_key_not_recorded_on_a_rendition_publishes_the_saved_status_once(
    mastodon, settings, workspace_a, dropped
):
    settings.RECONCILE_DELAY_S = 0
    settings.RECONCILE_SETTLE_S = 0
    fake = mastodon()
    account = _switched_account(fake, workspace_a, "key_not_recorded", dropped=dropped)
    rendition = _schedule(workspace_a, account, "Sourdough, twice baked")

    _drain(_worker(), rendition)

    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert rendition.segments.get().provider_post_id == post.id
    outcomes = list(rendition.delivery_attempts.order_by("pk").values_list("kind", "outcome"))
    assert outcomes == [("publish", "unknown"), ("publish", "published")]


def _switched(fake: MastodonFake, account, *behaviours: str) -> None:
    for behaviour in behaviours:
        fake.switch(account.settings["account_id"], behaviour)


def _sent_long_ago(ctx, minutes: int = 10) -> None:
    """The unanswered create left `minutes` ago: its listing has had time to settle."""
    ctx.checkpoint["mastodon_sent"] = {
        "0": (timezone.now() - timedelta(minutes=minutes)).isoformat()
    }


@pytest.mark.django_db
def test_after_meeting_the_lock_nothing_is_sent_until_what_the_running_create_saves_can_be_listed(
    mastodon, workspace_a, clock, settings
):
    settings.RECONCILE_SETTLE_S = 300
    fake = mastodon("listing_lag")
    fake.faults.listing_lag_s = 3600  # the first status is saved but not listed for long
    account = _switched_account(fake, workspace_a, "key_lock")
    _switched(fake, account, "key_not_recorded")  # ... and its key is never recorded
    ctx = _ctx(account)
    with pytest.raises(ProviderError):
        _publish(ctx, "Held, then never keyed")
    _sent_long_ago(ctx)
    with pytest.raises(ProviderError) as refused:
        _publish(ctx, "Held, then never keyed")  # meets the lock of the running create
    assert refused.value.code == "request_in_progress"
    assert refused.value.retry_at >= timezone.now() + timedelta(seconds=290)

    clock.now += fake.key_lock_hold_s  # the create ends: saved, key not recorded, unlocked
    with pytest.raises(ProviderError) as waiting:
        _publish(ctx, "Held, then never keyed")

    assert waiting.value.code == "not_listed_yet"  # not sent into the freed key
    assert len(fake.published()) == 1 and _creates(fake) == 2
    clock.now += fake.faults.listing_lag_s
    [post] = fake.published()
    assert _publish(ctx, "Held, then never keyed").provider_post_id == post.id


@pytest.mark.django_db
def test_a_media_status_saved_but_not_listed_is_never_sent_again_with_new_uploads(
    mastodon, workspace_a, clock, settings
):
    settings.RECONCILE_SETTLE_S = 0
    fake = mastodon("listing_lag")
    fake.faults.listing_lag_s = 3600
    account = _switched_account(fake, workspace_a, "key_not_recorded")
    ctx = _ctx(account)
    with pytest.raises(ProviderError):
        _publish(ctx, "A loaf", media=[image(alt="A loaf")])

    with pytest.raises(ProviderError) as waiting:
        _publish(ctx, "A loaf", media=[image(alt="A loaf")])

    # Our upload is attached to a status: the unanswered create made it.
    assert (waiting.value.code, waiting.value.retryable) == ("media_attached", True)
    assert len(fake.media) == 1 and _creates(fake) == 1
    clock.now += fake.faults.listing_lag_s
    [post] = fake.published()
    assert _publish(ctx, "A loaf", media=[image(alt="A loaf")]).provider_post_id == post.id
    assert len(fake.published()) == 1 and len(fake.media) == 1
