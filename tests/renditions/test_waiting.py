"""Accepted work is never created anew: the waiting path, against the sandbox's
asynchronous behaviours over real HTTP (a post processes before it is published, its status
is polled, polls can be rate limited, processing can fail). The sandbox's store is the
witness: one post per rendition, whatever happens to the polls."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.models import SocialAccount
from apps.jobs.models import Job
from apps.jobs.registry import get_job_type
from apps.jobs.services import job_enqueue
from apps.publishing.delivery import waiting
from apps.publishing.delivery.enqueue import (
    POLL_JOB,
    poll_dedupe_key,
    publish_dedupe_key,
    reconcile_dedupe_key,
    schedule_publish,
)
from apps.publishing.delivery.publish import on_publish_stale
from apps.publishing.services import rendition_retry
from apps.renditions.models import DeliveryAttempt, Rendition
from apps.sandbox.models import SandboxPost
from apps.sandbox.services import sandbox_account_create
from tests.renditions.test_pipeline import publish_now, run_due, witness

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sandbox(live_server, settings):
    settings.SANDBOX_BASE_URL = live_server.url
    settings.PROVIDER_TIMEOUT_S = 2
    settings.RECONCILE_DELAY_S = 0
    return live_server.url


@pytest.fixture
def worker(db):
    from apps.jobs.worker import Worker

    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="test-worker")


def processing_account(workspace, handle, **behaviour):
    return sandbox_account_create(
        workspace=workspace, handle=handle, behaviour={"processing_s": 0.3, **behaviour}
    )


def step(worker, rounds: int = 1) -> None:
    """Make every unfinished job due now (time travel), then run what is due."""
    for _ in range(rounds):
        Job.objects.filter(status__in=["pending", "waiting"]).update(run_at=timezone.now())
        worker.promote_waiting()
        run_due(worker)


def settle(worker, rendition: Rendition, *, rounds: int = 30) -> Rendition:
    """Step until the rendition leaves publishing/waiting (or rounds run out)."""
    for _ in range(rounds):
        rendition.refresh_from_db()
        if rendition.status not in ("scheduled", "publishing", "waiting") and not (
            Job.objects.unfinished().exists()
        ):
            break
        import time

        time.sleep(0.12)  # the sandbox processes in wall-clock time
        step(worker)
    rendition.refresh_from_db()
    return rendition


def sweep() -> None:
    """Run the due-rendition sweep (the outbox safety net) as the worker would."""
    get_job_type("renditions.sweep_due").handler(None)


def test_a_processing_post_waits_then_is_published_once(sandbox, worker, workspace_a):
    account = processing_account(workspace_a, "slowvideo")
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    run_due(worker)

    rendition.refresh_from_db()
    assert rendition.status == "waiting"
    assert rendition.checkpoint["pending"]["pending_id"]
    assert Job.objects.get(dedupe_key=poll_dedupe_key(rendition.pk)).organization_id is not None

    rendition = settle(worker, rendition)
    assert rendition.status == "published"
    assert "pending" not in rendition.checkpoint
    assert len(witness(sandbox, "slowvideo")) == 1


def test_a_rate_limited_status_poll_then_the_sweep_makes_no_second_post(
    sandbox, worker, workspace_a
):
    account = processing_account(
        workspace_a, "pollimit", status_rate_limit_times=3, retry_after_s=5
    )
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    run_due(worker)

    Job.objects.filter(dedupe_key=poll_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    worker.promote_waiting()
    run_due(worker)  # the poll is answered 429
    rendition.refresh_from_db()
    assert rendition.status == "waiting", rendition.last_error
    poll_job = Job.objects.get(dedupe_key=poll_dedupe_key(rendition.pk))
    assert poll_job.status == "waiting"
    assert poll_job.run_at >= timezone.now() + timedelta(seconds=4)  # Retry-After honoured
    assert poll_job.attempts <= 1

    sweep()  # the safety net finds nothing to publish anew
    assert not Job.objects.filter(
        dedupe_key=publish_dedupe_key(rendition.pk), status="pending"
    ).exists()

    rendition = settle(worker, rendition)
    assert rendition.status == "published"
    assert len(witness(sandbox, "pollimit")) == 1
    polls = rendition.delivery_attempts.filter(kind=DeliveryAttempt.Kind.POLL)
    assert polls.filter(outcome="failed").count() == 3


def test_a_publish_job_for_accepted_work_resumes_waiting_instead_of_sending(
    sandbox, worker, workspace_a
):
    """Whatever path wakes a publish job (a retry time, the sweep, a person), a segment the
    platform accepted is waited for, never sent again."""
    account = processing_account(workspace_a, "resume")
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    run_due(worker)
    rendition.refresh_from_db()
    assert rendition.status == "waiting"

    # A retry-pending failure as an earlier release could leave it, with its poll job gone.
    Job.objects.filter(dedupe_key=poll_dedupe_key(rendition.pk)).delete()
    Rendition.objects.filter(pk=rendition.pk).update(
        status="failed",
        next_retry_at=timezone.now(),
        last_error={"kind": "rate_limited", "message": "poll limited"},
    )
    rendition.refresh_from_db()
    schedule_publish(rendition, run_at=timezone.now())
    run_due(worker)

    rendition.refresh_from_db()
    assert rendition.status == "waiting"
    assert Job.objects.filter(dedupe_key=poll_dedupe_key(rendition.pk)).exists()
    rendition = settle(worker, rendition)
    assert rendition.status == "published"
    assert len(witness(sandbox, "resume")) == 1
    assert rendition.delivery_attempts.filter(kind="publish").count() == 1


def test_a_worker_killed_after_the_platform_accepted_resumes_waiting(sandbox, worker, workspace_a):
    account = processing_account(workspace_a, "killed")
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    run_due(worker)
    rendition.refresh_from_db()
    pending = rendition.checkpoint["pending"]

    # As if the worker died between the platform's answer and parking the rendition: the
    # checkpoint holds the accepted segment, the rendition is still publishing, the attempt
    # still in flight, no poll job.
    Job.objects.filter(dedupe_key=poll_dedupe_key(rendition.pk)).delete()
    Rendition.objects.filter(pk=rendition.pk).update(status="publishing")
    rendition.delivery_attempts.update(outcome="in_flight", finished_at=None)
    job = Job.objects.get(dedupe_key=publish_dedupe_key(rendition.pk))
    from django.db import transaction

    with transaction.atomic():
        on_publish_stale(job)

    rendition.refresh_from_db()
    assert rendition.status == "waiting"
    assert rendition.ambiguous is False
    assert rendition.checkpoint["pending"] == pending
    rendition = settle(worker, rendition)
    assert rendition.status == "published"
    assert len(witness(sandbox, "killed")) == 1


def test_processing_that_fails_at_the_platform_fails_cleanly_and_may_be_retried(
    sandbox, worker, workspace_a
):
    account = processing_account(workspace_a, "failsonce", processing_fail_times=1)
    publication = publish_now(workspace_a, [account])
    rendition = settle(worker, publication.renditions.get())

    assert rendition.status == "failed"
    assert rendition.ambiguous is False
    assert rendition.last_error["code"] == "processing_failed"
    assert "pending" not in rendition.checkpoint
    assert witness(sandbox, "failsonce") == []  # the platform never showed it

    rendition_retry(rendition=rendition)  # a person retries: a new post is right
    rendition = settle(worker, rendition)
    assert rendition.status == "published"
    assert len(witness(sandbox, "failsonce")) == 1
    assert SandboxPost.objects.filter(account__handle="failsonce").count() == 2


def test_a_lost_token_while_waiting_hands_it_to_a_person_never_resent(sandbox, worker, workspace_a):
    account = processing_account(workspace_a, "lostauth", processing_s=30)
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    run_due(worker)
    SocialAccount.objects.filter(pk=account.pk).update(status=SocialAccount.Status.NEEDS_RECONNECT)
    step(worker)

    rendition.refresh_from_db()
    assert rendition.status == "failed"
    assert rendition.ambiguous is True  # the platform may still publish it
    assert rendition.next_retry_at is None
    sweep()
    step(worker, rounds=3)
    assert SandboxPost.objects.filter(account__handle="lostauth").count() == 1


def test_processing_past_the_platforms_budget_is_looked_up_not_resent(
    sandbox, worker, workspace_a, monkeypatch
):
    account = processing_account(workspace_a, "toolong", processing_s=0.5)
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    run_due(worker)
    # The platform's poll budget is spent at the first poll.
    monkeypatch.setattr(waiting, "next_poll_delay", lambda adapter, **kw: None)
    step(worker)

    rendition.refresh_from_db()
    assert rendition.status == "failed"
    assert rendition.ambiguous is True
    assert rendition.last_error["code"] == "processing_timeout"
    assert rendition.last_error["action"] == "wait"  # a lookup is scheduled
    assert Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).exists()

    rendition = settle(worker, rendition)
    assert rendition.status == "published"  # the lookup found it
    assert SandboxPost.objects.filter(account__handle="toolong").count() == 1


def _ambiguous_rendition(workspace, handle):
    account = sandbox_account_create(
        workspace=workspace,
        handle=handle,
        behaviour={"hang_after_accept_times": 1, "hang_s": 1.5},
    )
    return account, publish_now(workspace, [account]).renditions.get()


def _run_check_now(worker, rendition):
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    run_due(worker)
    rendition.refresh_from_db()


def test_an_ambiguous_outcome_says_wait_while_checked_and_reconnect_when_the_account_lapsed(
    sandbox, worker, workspace_a, settings
):
    settings.PROVIDER_TIMEOUT_S = 0.5
    settings.RECONCILE_DELAY_S = 60
    account, rendition = _ambiguous_rendition(workspace_a, "hangs")
    run_due(worker)
    rendition.refresh_from_db()
    assert rendition.ambiguous is True
    assert rendition.last_error["action"] == "wait"
    assert rendition.last_error["check_at"]

    # The check cannot run until the account is reconnected (it runs again then).
    SocialAccount.objects.filter(pk=account.pk).update(status=SocialAccount.Status.NEEDS_RECONNECT)
    _run_check_now(worker, rendition)
    assert rendition.ambiguous is True
    assert rendition.last_error["action"] == "reconnect"
    assert "check_at" not in rendition.last_error


def test_an_ambiguous_outcome_no_check_can_settle_says_verify(
    sandbox, worker, workspace_a, settings
):
    settings.PROVIDER_TIMEOUT_S = 0.5
    settings.RECONCILE_DELAY_S = 60
    account, rendition = _ambiguous_rendition(workspace_a, "unreadable")
    run_due(worker)
    rendition.refresh_from_db()
    assert rendition.last_error["action"] == "wait"

    # Credentials no key can open: no automatic check will ever run, a person is needed.
    SocialAccount.objects.filter(pk=account.pk).update(credentials_ciphertext=b"not sealed")
    _run_check_now(worker, rendition)
    assert rendition.ambiguous is True
    assert rendition.last_error["action"] == "verify"
    assert "check_at" not in rendition.last_error


def test_enqueueing_a_poll_twice_keeps_one(sandbox, workspace_a):
    """One poll job per rendition (its dedupe key), whoever resumes the waiting."""
    account = processing_account(workspace_a, "dedupe")
    rendition = publish_now(workspace_a, [account]).renditions.get()
    for _ in range(2):
        job_enqueue(
            type=POLL_JOB,
            payload={"rendition_id": rendition.pk},
            organization=None,
            workspace=workspace_a,
            dedupe_key=poll_dedupe_key(rendition.pk),
        )
    assert Job.objects.filter(dedupe_key=poll_dedupe_key(rendition.pk)).count() == 1


def test_a_lookup_that_finds_the_post_still_processing_waits_for_it(
    sandbox, worker, workspace_a, settings
):
    """Reconciliation that finds our work unfinished never calls it published: it waits."""
    settings.PROVIDER_TIMEOUT_S = 0.5
    account = processing_account(
        workspace_a, "hangproc", processing_s=1.5, hang_after_accept_times=1, hang_s=1.0
    )
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    run_due(worker)
    rendition.refresh_from_db()
    assert rendition.ambiguous is True

    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(run_at=timezone.now())
    run_due(worker)  # the lookup finds the post, still processing
    rendition.refresh_from_db()
    assert rendition.status == "waiting"
    assert rendition.checkpoint["pending"]["pending_id"]
    assert rendition.delivery_attempts.filter(kind="reconcile", outcome="pending").exists()

    rendition = settle(worker, rendition)
    assert rendition.status == "published"
    assert SandboxPost.objects.filter(account__handle="hangproc").count() == 1
