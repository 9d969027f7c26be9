"""LinkedIn has no lookup, but refuses a resend of the same text naming the post it holds.
An unknown outcome there settles itself: reconciliation resends once the unanswered request
can no longer land, and the refusal names the one post (or the resend makes it), once that
post is read back as ours. A refusal naming a post that is not, empty text, and a resend
past the refusal's window settle nothing: a person verifies."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.publishing.delivery.enqueue import reconcile_dedupe_key
from apps.publishing.services import publication_create
from apps.renditions.models import DeliveryAttempt
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.linkedin import MEMBER_SCOPES, LinkedInFake
from loadtest.platform_fakes.server import FakeServer
from tests.factories import MediaAssetFactory
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db(transaction=True)


# The account may read its own posts (r_member_social), so a named post can be confirmed.
READER_SCOPES = MEMBER_SCOPES | {"r_member_social"}


class Once(FaultPlan):
    """Each of `faults` strikes its first eligible call only."""

    def __init__(self, *faults: str) -> None:
        super().__init__(rates={}, hang_s=1.0)
        self.once = frozenset(faults)

    def strikes(self, fault: str) -> bool:
        if fault in self.once and not self.struck.get(fault):
            self.struck[fault] = 1
            return True
        return False


@pytest.fixture
def linkedin(settings):
    fakes = {}

    def serve(*faults: str, **options) -> LinkedInFake:
        fake = LinkedInFake(Once(*faults), **options)
        fakes["server"] = FakeServer([fake]).start()
        settings.PROVIDER_API_REDIRECT = fakes["server"].base_url
        return fake

    settings.PROVIDER_TIMEOUT_S = 0.5
    settings.RECONCILE_DELAY_S = 0
    settings.LINKEDIN_CLIENT_ID, settings.LINKEDIN_CLIENT_SECRET = "li-client", "li-secret"
    settings.LINKEDIN_API_VERSION = "202609"
    yield serve
    if "server" in fakes:
        fakes["server"].stop()


def _account(fake: LinkedInFake, workspace, scopes=READER_SCOPES):
    opened = fake.new_account("Alice Example", scopes=scopes)
    account = make_account(workspace, "linkedin", **opened)
    account.token_expires_at = datetime.fromisoformat(opened["credentials"]["expires_at"])
    account.save(update_fields=["token_expires_at"])
    return account


def _worker() -> Worker:
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")


def _schedule(workspace, account, segment: dict):
    publication = publication_create(
        workspace=workspace,
        author=None,
        segments=[segment],
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


@pytest.mark.parametrize("fault", ["timeout_after_accept", "server_error_before"])
def test_an_unknown_outcome_on_linkedin_settles_with_one_post(
    linkedin, settings, workspace_a, fault
):
    fake = linkedin(fault)
    account = _account(fake, workspace_a)
    worker = _worker()
    rendition = _schedule(workspace_a, account, {"text": "Fresh loaves at dawn"})

    settings.RECONCILE_SETTLE_S = 3600
    _drain(worker, rendition)
    # 503 or no answer: the post may exist. A check is scheduled, nothing is resent yet.
    assert rendition.status == "failed" and rendition.ambiguous
    assert rendition.last_error["action"] == "wait"
    check = Job.objects.get(dedupe_key=reconcile_dedupe_key(rendition.pk))
    Job.objects.filter(pk=check.pk).update(run_at=timezone.now())
    _drain(worker, rendition)
    rendition.refresh_from_db()
    assert rendition.status == "failed" and rendition.ambiguous  # still inside the window

    settings.RECONCILE_SETTLE_S = 0
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    _drain(worker, rendition)

    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert rendition.segments.get().provider_post_id == post.id


@pytest.fixture
def photos(settings, tmp_path, workspace_a):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return lambda: MediaAssetFactory(workspace=workspace_a, alt_text="A loaf")


def _lost_then_checked(worker, rendition) -> None:
    """The create's answer is lost; reconciliation runs at once (no settle wait)."""
    _drain(worker, rendition)
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    _drain(worker, rendition)
    rendition.refresh_from_db()


def test_a_lost_post_of_a_member_token_settles_on_the_post_its_id_dates_to_the_request(
    linkedin, settings, workspace_a
):
    # The site asks members for w_member_social only: the post a refusal names cannot be
    # read back, but its id dates it to the unanswered request, which made it.
    fake = linkedin("timeout_after_accept")
    account = _account(fake, workspace_a, scopes=MEMBER_SCOPES)
    settings.RECONCILE_SETTLE_S = 0
    rendition = _schedule(workspace_a, account, {"text": "Proofing notes"})

    _lost_then_checked(_worker(), rendition)

    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert rendition.segments.get().provider_post_id == post.id


def test_a_refusal_a_member_token_cannot_confirm_stays_an_unknown_outcome_for_a_person(
    linkedin, settings, workspace_a
):
    # The refusal names a deleted post (dated before the request): it settles nothing, but
    # the post may exist, so the rendition is an unknown outcome left to a person, never a
    # plain duplicate.
    fake = linkedin("timeout_after_accept", refusal_names_ghost=True)
    account = _account(fake, workspace_a, scopes=MEMBER_SCOPES)
    settings.RECONCILE_SETTLE_S = 0
    rendition = _schedule(workspace_a, account, {"text": "Proofing notes"})

    _lost_then_checked(_worker(), rendition)
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    _drain(_worker(), rendition)
    rendition.refresh_from_db()

    assert len(fake.published()) == 1
    assert rendition.status == "failed" and rendition.ambiguous
    error = rendition.last_error
    assert (error["kind"], error["code"]) == ("outcome_unknown", "duplicate_after_unknown")
    assert error["action"] == "verify"
    assert error["details"]["refused"]["code"] == "DUPLICATE_POST_UNCONFIRMED"
    assert rendition.segments.get().provider_post_id == ""


def test_a_throttled_read_of_the_named_post_is_checked_again_not_handed_to_a_person(
    linkedin, settings, workspace_a
):
    # The answer to the create is lost; the resend is refused naming the post, and reading
    # that post back is throttled (429): that says nothing about the post.
    fake = linkedin("timeout_after_accept", "poll_rate_limit")
    # Its ids dated an hour off ours, so only the read can tell (see the next test).
    fake.clock = lambda: time.time() + 3600
    account = _account(fake, workspace_a)
    settings.RECONCILE_SETTLE_S = 0
    rendition = _schedule(workspace_a, account, {"text": "Crumb report"})
    worker = _worker()

    _drain(worker, rendition)  # lost, checked at once: resent, refused, the read throttled

    assert rendition.status == "failed" and rendition.ambiguous
    assert rendition.last_error["action"] == "wait", rendition.last_error
    refused = rendition.delivery_attempts.get(outcome=DeliveryAttempt.Outcome.FAILED)
    assert refused.error["code"] == "DUPLICATE_POST_UNREAD"
    # The check comes after LinkedIn's reset (brought forward here): resent, refused again,
    # the named post read back as ours, settled.
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    _drain(worker, rendition)

    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert rendition.segments.get().provider_post_id == post.id


def test_a_read_past_the_members_daily_limit_is_checked_again_after_midnight_utc(
    linkedin, settings, workspace_a
):
    # As above, but the read meets LinkedIn's daily member limit (enforce_limits, spent):
    # a 429 without any header, so the check waits for the documented 00:00 UTC reset.
    fake = linkedin("timeout_after_accept")
    shift = [3600.0]  # ids dated an hour off ours, so only the read can tell
    fake.clock = lambda: time.time() + shift[0]
    account = _account(fake, workspace_a)
    author = f"urn:li:person:{account.remote_id}"
    fake.switch(author, "enforce_limits")
    midnight = fake.exhaust(author, "reads")
    settings.RECONCILE_SETTLE_S = 0
    rendition = _schedule(workspace_a, account, {"text": "Crumb report"})
    worker = _worker()

    _drain(worker, rendition)

    assert rendition.status == "failed" and rendition.ambiguous
    assert rendition.last_error["action"] == "wait", rendition.last_error
    refused = rendition.delivery_attempts.get(outcome=DeliveryAttempt.Outcome.FAILED)
    assert refused.error["code"] == "DUPLICATE_POST_UNREAD"
    check = Job.objects.unfinished().get(dedupe_key=reconcile_dedupe_key(rendition.pk))
    next_midnight = (timezone.now() + timedelta(days=1)).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    assert check.run_at >= next_midnight - timedelta(seconds=5), check.run_at
    assert len(fake.published()) == 1
    # Midnight UTC comes on LinkedIn's clock: the read is answered, the post settles.
    shift[0] = midnight - time.time()
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    _drain(worker, rendition)

    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert rendition.segments.get().provider_post_id == post.id


def test_a_throttled_read_of_a_post_dated_to_the_request_settles_at_once(
    linkedin, settings, workspace_a
):
    fake = linkedin("timeout_after_accept", "poll_rate_limit")
    account = _account(fake, workspace_a)
    settings.RECONCILE_SETTLE_S = 0
    rendition = _schedule(workspace_a, account, {"text": "Oven at six"})

    _drain(_worker(), rendition)

    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert rendition.segments.get().provider_post_id == post.id


def test_a_lost_image_post_is_resent_with_its_images_and_settles_as_one_post(
    linkedin, settings, workspace_a, photos
):
    fake = linkedin("timeout_after_accept", duplicate_compares_media=True)
    account = _account(fake, workspace_a)
    settings.RECONCILE_SETTLE_S = 0
    rendition = _schedule(
        workspace_a, account, {"text": "Rye today", "media": [{"id": photos().pk}]}
    )

    _lost_then_checked(_worker(), rendition)

    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert len(fake.images) == 1  # the resend carried the image uploaded the first time
    assert rendition.segments.get().provider_post_id == post.id


def test_a_lost_image_only_post_without_text_is_not_resent(linkedin, settings, workspace_a, photos):
    fake = linkedin("timeout_after_accept")
    account = _account(fake, workspace_a)
    settings.RECONCILE_SETTLE_S = 0
    rendition = _schedule(workspace_a, account, {"text": "", "media": [{"id": photos().pk}]})

    _lost_then_checked(_worker(), rendition)

    # Empty text is no duplicate of anything: a resend would be a second post.
    assert len(fake.published()) == 1
    assert rendition.status == "failed" and rendition.ambiguous
    assert rendition.last_error["action"] == "verify"
    assert rendition.segments.get().provider_post_id == ""


def test_a_refusal_naming_a_post_that_answers_404_is_not_recorded_as_published(
    linkedin, settings, workspace_a
):
    fake = linkedin("timeout_after_accept", refusal_names_ghost=True)
    account = _account(fake, workspace_a)
    settings.RECONCILE_SETTLE_S = 0
    rendition = _schedule(workspace_a, account, {"text": "Sourdough Sunday"})

    _lost_then_checked(_worker(), rendition)
    # The refusal left it unsettled; the next check hands it to a person, never resends.
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    _drain(_worker(), rendition)
    rendition.refresh_from_db()

    assert rendition.status == "failed" and rendition.ambiguous
    assert rendition.last_error["action"] == "verify"
    assert rendition.segments.get().provider_post_id == ""
    assert len(fake.published()) == 1
    refused = rendition.delivery_attempts.get(outcome=DeliveryAttempt.Outcome.FAILED)
    assert refused.error["code"] == "DUPLICATE_POST_UNCONFIRMED"


def test_no_resend_leans_on_the_refusal_once_its_window_has_passed(linkedin, settings, workspace_a):
    fake = linkedin("timeout_after_accept", duplicate_window_s=3600)
    account = _account(fake, workspace_a)
    settings.RECONCILE_SETTLE_S = 3600
    rendition = _schedule(workspace_a, account, {"text": "Week-old news"})
    worker = _worker()
    _drain(worker, rendition)
    assert rendition.status == "failed" and rendition.ambiguous

    # The check comes two days later (an outage, a reconnect): LinkedIn no longer refuses.
    later = fake.clock() + 2 * 86400
    fake.clock = lambda: later
    DeliveryAttempt.objects.filter(rendition=rendition).update(
        started_at=timezone.now() - timedelta(days=2)
    )
    settings.RECONCILE_SETTLE_S = 0
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    _drain(worker, rendition)
    rendition.refresh_from_db()

    assert len(fake.published()) == 1
    assert rendition.status == "failed" and rendition.last_error["action"] == "verify"
