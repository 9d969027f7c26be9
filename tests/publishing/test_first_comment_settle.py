"""A first comment whose create the platform holds (Mastodon runs a keyed create under its
key's lock, saving the status only when it ends): a lookup that finds nothing decides
nothing until RECONCILE_SETTLE_S after the unanswered send. The checks until then spend
none of the job's tries, so the comment is found once it lands, without a person and
without a second comment. The real adapter and worker against the Mastodon fake."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.providers import httpcall
from apps.publishing.delivery import comment as commenting
from apps.publishing.delivery.comment import first_comment_retry
from apps.publishing.services import publication_create
from apps.renditions.models import DeliveryAttempt, FirstComment
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.mastodon import MastodonFake
from loadtest.platform_fakes.server import FakeServer
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db(transaction=True)

A = DeliveryAttempt
HOLD_S = 1.0  # how long the instance runs the comment's create, on its own clock


class Clock:
    """The instance's clock, moved only by the test."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(httpcall, "sleep", clock.sleep)
    return clock


@pytest.fixture
def fake(settings, clock):
    fake = MastodonFake(FaultPlan(rates={}, hang_s=HOLD_S))
    fake.clock = clock
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.5  # the client gives up before the create ends
    settings.RECONCILE_DELAY_S = 0
    settings.RECONCILE_SETTLE_S = 300
    yield fake
    server.stop()


@pytest.fixture
def worker() -> Worker:
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")


def run_comment_job(worker: Worker) -> None:
    """Run the comment job once, whenever it was scheduled for."""
    past = timezone.now() - timedelta(days=1)
    Job.objects.unfinished().filter(type=commenting.COMMENT_JOB).update(run_at=past)
    for job in worker.claim_batch():
        worker.run_one(job)


def live_post_with_comment(fake: MastodonFake, workspace, worker: Worker) -> FirstComment:
    """A published post whose comment job has not run yet; from now on the instance holds
    every keyed create of the account under its key's lock for HOLD_S."""
    opened = fake.new_account("alice")
    account = make_account(workspace, "mastodon", **opened)
    publication = publication_create(
        workspace=workspace,
        author=None,
        segments=[{"text": "Rye today"}],
        destinations=[{"account": account.pk}],
        first_comment="Order at the counter",
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    for job in worker.claim_batch():
        assert job.type != commenting.COMMENT_JOB
        worker.run_one(job)
    rendition = publication.renditions.get()
    assert rendition.status == "published", rendition.last_error
    fake.switch(opened["settings"]["account_id"], "key_lock")
    fake.switched_share, fake.key_lock_hold_s = 1.0, HOLD_S
    return FirstComment.objects.get(rendition=rendition)


def comments_at_the_platform(fake: MastodonFake) -> list:
    return [p for p in fake.published() if p.reply_to]


def creates(fake: MastodonFake) -> int:
    return fake.calls.count(("POST", "/api/v1/statuses"))


def outcomes(comment: FirstComment) -> list[tuple[str, str]]:
    return list(
        A.objects.filter(
            rendition_id=comment.rendition_id, kind__in=[A.Kind.COMMENT, A.Kind.RESOLVE]
        )
        .order_by("pk")
        .values_list("kind", "outcome")
    )


def test_a_held_comment_is_looked_for_past_the_lookups_tries_and_found_once_it_lands(
    fake, clock, worker, workspace_a
):
    comment = live_post_with_comment(fake, workspace_a, worker)
    run_comment_job(worker)  # the create runs on at the instance; the client gave up
    assert outcomes(comment) == [("comment", "unknown")]

    job = Job.objects.get(type=commenting.COMMENT_JOB)
    for _ in range(job.max_attempts + 2):  # more checks than the job has tries
        run_comment_job(worker)
    comment.refresh_from_db()
    assert comment.status == "pending"  # not handed to a person inside the settle window
    job.refresh_from_db()
    assert job.status == "pending" and job.attempts == 1  # the checks spent no try
    assert job.run_at <= timezone.now() + timedelta(seconds=300)

    clock.now += HOLD_S  # the create ends: the comment is saved and listed
    run_comment_job(worker)

    comment.refresh_from_db()
    [made] = comments_at_the_platform(fake)
    assert comment.status == "published"
    assert comment.provider_comment_id == made.id
    assert creates(fake) == 2  # the post and one comment: never sent again
    lookups = A.objects.filter(rendition_id=comment.rendition_id, kind=A.Kind.RECONCILE)
    assert lookups.last().outcome == A.Outcome.FOUND


def test_a_send_meeting_a_running_create_under_its_key_waits_for_it_and_sends_nothing_more(
    fake, clock, worker, workspace_a
):
    comment = live_post_with_comment(fake, workspace_a, worker)
    run_comment_job(worker)
    # A person checked, found nothing (the create still runs) and asks for it again.
    comment.move({"pending"}, "unknown")
    Job.objects.filter(type=commenting.COMMENT_JOB).delete()
    first_comment_retry(comment, actor_note="None under the post.")

    run_comment_job(worker)  # the resend meets the running create's lock
    assert outcomes(comment) == [
        ("comment", "unknown"),
        ("resolve", "absent"),
        ("comment", "unknown"),
    ]
    resend = A.objects.filter(rendition_id=comment.rendition_id, kind=A.Kind.COMMENT).last()
    assert resend.error["code"] == "request_in_progress"
    for _ in range(8):
        run_comment_job(worker)
    comment.refresh_from_db()
    assert comment.status == "pending"
    assert creates(fake) == 3  # the post, the held comment, the refused resend: no more

    clock.now += HOLD_S
    run_comment_job(worker)

    comment.refresh_from_db()
    [made] = comments_at_the_platform(fake)
    assert comment.status == "published" and comment.provider_comment_id == made.id
    assert creates(fake) == 3


class Once(FaultPlan):
    """Each of `faults` strikes its first eligible call only."""

    def __init__(self, *faults: str) -> None:
        super().__init__(rates={}, hang_s=HOLD_S)
        self.once = set(faults)

    def strikes(self, fault: str) -> bool:
        if fault in self.once and not self.struck.get(fault):
            self.struck[fault] = 1
            return True
        return False


def test_past_the_settle_window_a_comment_the_platform_never_made_is_sent_under_its_key(
    fake, clock, worker, workspace_a, settings
):
    settings.RECONCILE_SETTLE_S = 0  # the unanswered send can no longer land
    comment = live_post_with_comment(fake, workspace_a, worker)
    fake.switch(comment.rendition.social_account.settings["account_id"], "key_lock", on=False)
    fake.faults = Once("server_error_before")  # a 5xx before anything is saved
    run_comment_job(worker)
    assert outcomes(comment) == [("comment", "unknown")]

    run_comment_job(worker)  # not listed: sent again under the comment's key

    comment.refresh_from_db()
    [made] = comments_at_the_platform(fake)
    assert comment.status == "published" and comment.provider_comment_id == made.id
    assert outcomes(comment) == [("comment", "unknown"), ("comment", "published")]


def test_a_resend_under_the_key_meeting_the_held_create_waits_for_it_without_a_person(
    fake, clock, worker, workspace_a, settings
):
    settings.RECONCILE_SETTLE_S = 0  # shorter than the hold: the key tells it still runs
    comment = live_post_with_comment(fake, workspace_a, worker)
    run_comment_job(worker)

    for _ in range(Job.objects.get(type=commenting.COMMENT_JOB).max_attempts + 2):
        run_comment_job(worker)
    comment.refresh_from_db()
    assert comment.status == "pending"
    refused = A.objects.filter(rendition_id=comment.rendition_id, kind=A.Kind.COMMENT)[1:]
    assert {a.error["code"] for a in refused} == {"request_in_progress"}
    assert len(fake.published()) == 2  # the post and the held comment, nothing more

    clock.now += HOLD_S
    run_comment_job(worker)

    comment.refresh_from_db()
    [made] = comments_at_the_platform(fake)
    assert comment.status == "published" and comment.provider_comment_id == made.id


def test_past_the_settle_window_a_comment_not_listed_goes_to_a_person_without_a_key(
    fake, clock, worker, workspace_a, settings
):
    settings.RECONCILE_SETTLE_S = 0  # the unanswered send can no longer land
    comment = live_post_with_comment(fake, workspace_a, worker)
    account = comment.rendition.social_account
    account.settings["honours_idempotency_key"] = False  # a server that ignores the header
    account.save(update_fields=["settings"])
    run_comment_job(worker)

    for _ in range(Job.objects.get(type=commenting.COMMENT_JOB).max_attempts):
        run_comment_job(worker)

    comment.refresh_from_db()
    assert comment.status == "unknown"
    assert comment.last_error["action"] == "verify"
    assert creates(fake) == 2
