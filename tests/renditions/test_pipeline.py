"""The publish pipeline end to end: real jobs driven through the worker's unit-of-work
methods, the sandbox platform over real HTTP. The sandbox's store is the witness."""

import time
import uuid
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.accounts.services import social_account_credentials
from apps.jobs.models import Job
from apps.jobs.registry import Backoff
from apps.jobs.services import job_recover_stale
from apps.jobs.worker import Worker
from apps.publications.models import Publication
from apps.publishing.delivery.enqueue import publish_dedupe_key, reconcile_dedupe_key
from apps.publishing.services import publication_cancel, publication_create
from apps.renditions.models import DeliveryAttempt, Rendition
from apps.sandbox.services import sandbox_account_create
from tests.sandbox.witness import witness_posts

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sandbox(live_server, settings):
    settings.SANDBOX_BASE_URL = live_server.url
    settings.PROVIDER_TIMEOUT_S = 2
    settings.RECONCILE_DELAY_S = 0
    return live_server.url


@pytest.fixture
def worker(db):
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="test-worker")


def witness(base_url: str, handle: str) -> list[dict]:
    return witness_posts(base_url, handle)


def publish_now(workspace, accounts, texts=("hello",)) -> Publication:
    return publication_create(
        workspace=workspace,
        author=None,
        segments=[{"text": text} for text in texts],
        destinations=[{"account": account.pk} for account in accounts],
        scheduled_at=timezone.now(),
        status="scheduled",
    )


def run_due(worker: Worker) -> int:
    """Run every job due now, once; returns how many ran."""
    ran = 0
    for job in worker.claim_batch():
        worker.run_one(job)
        ran += 1
    return ran


def drain(worker: Worker, publication: Publication, timeout: float = 20) -> Publication:
    """Run due jobs until every rendition is terminal or settled (bounded)."""
    deadline = timezone.now() + timedelta(seconds=timeout)
    while timezone.now() < deadline:
        if not run_due(worker):
            publication.refresh_from_db()
            open_work = Job.objects.unfinished().exists()
            if not open_work:
                break
            time.sleep(0.05)
    publication.refresh_from_db()
    return publication


def advance_retry(rendition: Rendition) -> None:
    """Step time: make the rendition's pending retry due now."""
    now = timezone.now()
    Rendition.objects.filter(pk=rendition.pk).update(next_retry_at=now)
    Job.objects.filter(dedupe_key=publish_dedupe_key(rendition.pk), status="pending").update(
        run_at=now
    )


def test_it_publishes_every_destination_exactly_once(sandbox, worker, workspace_a):
    accounts = [sandbox_account_create(workspace=workspace_a, handle=f"ok{i}") for i in range(3)]
    publication = drain(worker, publish_now(workspace_a, accounts))

    assert publication.status == "published"
    for account in accounts:
        posts = witness(sandbox, account.handle)
        assert [p["text"] for p in posts] == ["hello"]
        rendition = publication.renditions.get(social_account=account)
        assert rendition.status == "published"
        assert rendition.provider_post_id == posts[0]["id"]
        assert rendition.provider_url.endswith(f"/{posts[0]['id']}")
        assert rendition.attempts == 1
        attempt = rendition.delivery_attempts.get()
        assert attempt.outcome == "published"
        assert attempt.idempotency_key == f"rendition-{rendition.pk}-s0"
        assert attempt.worker == "test-worker"


def test_a_429_is_retried_no_earlier_than_asked_and_then_succeeds(sandbox, worker, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a,
        handle="limited",
        behaviour={"rate_limit_times": 1, "retry_after_s": 2},
    )
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    asked_at = timezone.now()
    run_due(worker)

    rendition.refresh_from_db()
    assert rendition.status == "failed"
    assert rendition.last_error["kind"] == "rate_limited"
    assert rendition.last_error["http_status"] == 429
    assert rendition.last_error["action"] == "wait"
    assert rendition.next_retry_at >= asked_at + timedelta(seconds=1.5)
    job = Job.objects.get(dedupe_key=publish_dedupe_key(rendition.pk))
    assert job.status == "pending"
    assert job.attempts == 0  # being rate limited spends no attempt
    assert abs((job.run_at - rendition.next_retry_at).total_seconds()) < 0.5
    assert run_due(worker) == 0  # a wake-up before the time runs nothing
    assert witness(sandbox, "limited") == []

    drain(worker, publication)
    rendition.refresh_from_db()
    assert rendition.status == "published"
    second = rendition.delivery_attempts.filter(outcome="published").get()
    assert second.started_at >= asked_at + timedelta(seconds=1.5)
    assert len(witness(sandbox, "limited")) == 1


def test_a_5xx_on_one_destination_retries_only_that_one(sandbox, worker, workspace_a, monkeypatch):
    # Full jitter may draw a retry within the drain below; hold it well past it.
    monkeypatch.setattr(Backoff, "delay", lambda self, attempt, floor_s=0.0, rng=None: 60.0)
    good = [sandbox_account_create(workspace=workspace_a, handle=f"good{i}") for i in range(2)]
    flaky = sandbox_account_create(
        workspace=workspace_a, handle="flaky", behaviour={"server_error_times": 1}
    )
    publication = publish_now(workspace_a, [*good, flaky])
    drain(worker, publication, timeout=3)

    failed = publication.renditions.get(social_account=flaky)
    assert failed.status == "failed"
    assert failed.last_error["kind"] == "provider_unavailable"
    assert failed.last_error["retryable"] is True
    # The rendition shows the very time its job will run again.
    job = Job.objects.get(dedupe_key=publish_dedupe_key(failed.pk))
    assert abs((job.run_at - failed.next_retry_at).total_seconds()) < 0.5
    publication.refresh_from_db()
    assert publication.status == "publishing"  # a retry is pending

    advance_retry(failed)
    publication = drain(worker, publication)
    assert publication.status == "published"
    for account in [*good, flaky]:
        assert len(witness(sandbox, account.handle)) == 1
    # The destinations that succeeded were never sent again.
    for account in good:
        assert publication.renditions.get(social_account=account).delivery_attempts.count() == 1


def test_accept_then_hang_with_key_support_ends_published_exactly_once(
    sandbox, settings, worker, workspace_a
):
    settings.PROVIDER_TIMEOUT_S = 0.5
    account = sandbox_account_create(
        workspace=workspace_a,
        handle="hangs",
        behaviour={"hang_after_accept_times": 1, "hang_s": 1.5},
    )
    publication = drain(worker, publish_now(workspace_a, [account]))

    rendition = publication.renditions.get()
    assert rendition.status == "published"
    assert rendition.ambiguous is False
    outcomes = list(rendition.delivery_attempts.values_list("kind", "outcome"))
    assert outcomes == [("publish", "unknown"), ("reconcile", "found")]
    posts = witness(sandbox, "hangs")
    assert len(posts) == 1
    assert rendition.provider_post_id == posts[0]["id"]


def test_without_key_support_it_is_ambiguous_never_resent_and_reconciled(
    sandbox, settings, worker, workspace_a
):
    settings.PROVIDER_TIMEOUT_S = 0.5
    settings.RECONCILE_DELAY_S = 60  # look at the ambiguous state before reconciling
    account = sandbox_account_create(
        workspace=workspace_a,
        handle="nokey",
        behaviour={
            "hang_after_accept_times": 1,
            "hang_s": 1.5,
            "honours_idempotency_key": False,
        },
    )
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    run_due(worker)

    rendition.refresh_from_db()
    assert rendition.status == "failed"
    assert rendition.ambiguous is True
    assert rendition.next_retry_at is None
    assert rendition.last_error["kind"] == "outcome_unknown"
    # The system checks the platform itself: nothing for a person to do yet.
    assert rendition.last_error["action"] == "wait"
    publish_job = Job.objects.get(dedupe_key=publish_dedupe_key(rendition.pk))
    assert publish_job.status == "failed"  # not retried automatically
    reconcile_job = Job.objects.get(dedupe_key=reconcile_dedupe_key(rendition.pk))
    assert reconcile_job.status == "pending"
    assert rendition.last_error["check_at"] == reconcile_job.run_at.isoformat()

    Job.objects.filter(pk=reconcile_job.pk).update(run_at=timezone.now())
    drain(worker, publication)
    rendition.refresh_from_db()
    assert rendition.status == "published"
    assert len(witness(sandbox, "nokey")) == 1
    assert rendition.delivery_attempts.filter(kind="publish").count() == 1


def test_an_expired_token_asks_to_reconnect(sandbox, worker, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a, handle="expired", behaviour={"expired_token": True}
    )
    publication = drain(worker, publish_now(workspace_a, [account]))

    rendition = publication.renditions.get()
    assert rendition.status == "failed"
    assert rendition.last_error["kind"] == "auth_expired"
    assert rendition.last_error["action"] == "reconnect"
    assert rendition.last_error["retryable"] is False
    account.refresh_from_db()
    assert account.status == SocialAccount.Status.NEEDS_RECONNECT
    assert publication.status == "failed"
    assert witness(sandbox, "expired") == []


def test_a_token_near_expiry_is_refreshed_before_publishing(sandbox, worker, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="stale-token")
    SocialAccount.objects.filter(pk=account.pk).update(
        token_expires_at=timezone.now() + timedelta(seconds=30)
    )
    publication = drain(worker, publish_now(workspace_a, [account]))

    assert publication.status == "published"
    account.refresh_from_db()
    assert account.token_expires_at > timezone.now() + timedelta(hours=1)


def test_a_rejected_post_asks_for_an_edit(sandbox, worker, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a, handle="strict", behaviour={"reject_content": True}
    )
    publication = drain(worker, publish_now(workspace_a, [account]))

    rendition = publication.renditions.get()
    assert rendition.status == "failed"
    assert rendition.last_error["kind"] == "content_rejected"
    assert rendition.last_error["action"] == "edit"
    assert rendition.next_retry_at is None


def test_a_thread_retry_skips_the_segments_already_published(sandbox, worker, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="thread")
    publication = publish_now(workspace_a, [account], texts=("1/3", "2/3", "3/3"))
    rendition = publication.renditions.get()
    # An earlier attempt published the first segment, then stopped.
    first = rendition.segments.get(position=0)
    earlier = httpx.post(
        f"{sandbox}/sandbox/api/v1/posts",
        json={"text": "1/3"},
        headers={"Authorization": f"Bearer {social_account_credentials(account)['access_token']}"},
    ).json()
    first.mark_published(earlier["id"], earlier["url"])

    drain(worker, publication)
    rendition.refresh_from_db()
    assert rendition.status == "published"
    posts = witness(sandbox, "thread")
    assert [p["text"] for p in posts] == ["1/3", "2/3", "3/3"]
    assert posts[1]["reply_to"] == posts[0]["id"]
    assert posts[2]["reply_to"] == posts[1]["id"]
    assert rendition.provider_post_id == earlier["id"]


def test_a_cancelled_publication_is_never_sent(sandbox, worker, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="cancelled")
    publication = publish_now(workspace_a, [account])
    publication_cancel(publication=publication)

    drain(worker, publication, timeout=2)
    assert witness(sandbox, "cancelled") == []
    assert publication.renditions.get().status == "cancelled"


def test_a_stale_publish_with_a_request_in_flight_becomes_ambiguous(sandbox, worker, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="lost")
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    [job] = worker.claim_batch()
    # The worker got as far as sending, then died.
    rendition.mark_publishing()
    DeliveryAttempt.objects.create(
        rendition=rendition, workspace=workspace_a, kind="publish", segment_position=0
    )

    assert job_recover_stale(job_ids=[job.pk]) == 1
    rendition.refresh_from_db()
    assert rendition.status == "failed"
    assert rendition.ambiguous is True
    assert rendition.last_error["code"] == "worker_lost"
    assert rendition.delivery_attempts.get().outcome == "lost"
    assert Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).exists()
    assert not Job.objects.unfinished().filter(dedupe_key=publish_dedupe_key(rendition.pk))


def test_a_stale_publish_with_nothing_sent_runs_again(sandbox, worker, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="unsent")
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    [job] = worker.claim_batch()
    rendition.mark_publishing()

    job_recover_stale(job_ids=[job.pk])
    rendition.refresh_from_db()
    assert rendition.status == "scheduled"
    drain(worker, publication)
    rendition.refresh_from_db()
    assert rendition.status == "published"
    assert len(witness(sandbox, "unsent")) == 1


def test_a_lost_lease_writes_no_outcome(sandbox, worker, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="fenced")
    publication = publish_now(workspace_a, [account])
    [job] = worker.claim_batch()
    # Another worker took the job over (a fresh lease) before this one ran it.
    Job.objects.filter(pk=job.pk).update(lease=uuid.uuid4())

    assert worker.run_one(job) == "lost"
    rendition = publication.renditions.get()
    assert rendition.status == "scheduled"
    assert witness(sandbox, "fenced") == []


def test_without_key_support_absence_is_trusted_only_after_the_settle_window(
    sandbox, settings, worker, workspace_a
):
    settings.RECONCILE_SETTLE_S = 60
    account = sandbox_account_create(
        workspace=workspace_a, handle="late", behaviour={"honours_idempotency_key": False}
    )
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    [job] = worker.claim_batch()
    # A request left and no answer came: nothing is on the platform (yet).
    rendition.mark_publishing()
    sent = DeliveryAttempt.objects.create(
        rendition=rendition, workspace=workspace_a, kind="publish", segment_position=0
    )
    job_recover_stale(job_ids=[job.pk])
    rendition.refresh_from_db()
    assert rendition.ambiguous is True

    run_due(worker)  # the lookup finds nothing, but the request might still land
    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous) == ("failed", True)
    again = Job.objects.get(dedupe_key=reconcile_dedupe_key(rendition.pk))
    assert again.status == "pending"
    expected = sent.started_at + timedelta(seconds=60)
    assert abs((again.run_at - expected).total_seconds()) < 1
    assert witness(sandbox, "late") == []

    settings.RECONCILE_SETTLE_S = 0  # the window has passed
    Job.objects.filter(pk=again.pk).update(run_at=timezone.now())
    drain(worker, publication)
    rendition.refresh_from_db()
    assert rendition.status == "published"
    assert len(witness(sandbox, "late")) == 1
