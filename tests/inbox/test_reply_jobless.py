"""An inbox reply whose job ended without settling it (its snooze budget spent on a
throttled lookup, a dying worker past its recoveries, an operator's cancel, a lost
enqueue) is never left pending: the inbox sweep settles it, unknown for a person where a
send is in doubt, failed where nothing was sent."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from apps.common.db_clock import db_now
from apps.inbox import jobless, replies
from apps.inbox.models import Comment, Reply, ReplyAttempt
from apps.jobs.errors import SNOOZE_BUDGET_EXHAUSTED
from apps.jobs.models import Job
from apps.jobs.registry import get_job_type
from apps.jobs.services import job_cancel, job_recover_stale
from apps.jobs.worker import Worker
from apps.providers.errors import ErrorKind, ProviderError
from apps.renditions.models import Rendition
from tests.factories import RenditionFactory
from tests.plans import analyze, assert_bounded, scans_of

A = ReplyAttempt
Status = Reply.Status


def a_reply(status: str = Status.PENDING, comment: Comment | None = None) -> Reply:
    if comment is None:
        rendition = RenditionFactory(
            status=Rendition.Status.PUBLISHED, published_at=timezone.now(), provider_post_id="p"
        )
        comment = Comment.objects.create(
            workspace_id=rendition.workspace_id,
            rendition=rendition,
            social_account_id=rendition.social_account_id,
            platform=rendition.platform,
            platform_id="fan-1",
            text="When do you open?",
            commented_at=timezone.now(),
        )
    return Reply.objects.create(
        workspace_id=comment.workspace_id, comment=comment, text="At nine.", status=status
    )


def attempt(reply: Reply, kind: str, outcome: str, job: Job | None = None) -> A:
    return A.objects.create(
        workspace_id=reply.workspace_id,
        reply=reply,
        kind=kind,
        outcome=outcome,
        job_id=job.pk if job else None,
        started_at=db_now() - timedelta(hours=1),
    )


def claimed(job: Job, **fields) -> Job:
    Job.objects.filter(pk=job.pk).update(
        status="processing", lease=uuid.uuid4(), locked_at=timezone.now(), locked_by="w",
        attempts=1, **fields,
    )  # fmt: skip
    return Job.objects.get(pk=job.pk)


def sweep() -> None:
    """One run of the inbox's periodic sweep, as the worker runs it."""
    get_job_type("inbox.sync_due").handler(Job())


def settled(reply: Reply) -> tuple[str, str]:
    reply.refresh_from_db()
    return reply.status, (reply.last_error or {}).get("message", "")


@pytest.mark.django_db(transaction=True)
def test_a_lookup_throttled_past_the_snooze_budget_leaves_the_reply_to_a_person(monkeypatch):
    reply = a_reply()
    job = replies.enqueue_reply(reply)
    attempt(reply, A.Kind.SEND, A.Outcome.UNKNOWN)
    Job.objects.filter(pk=job.pk).update(snoozed_s=get_job_type(job.type).snooze_budget_s - 60)

    class Throttled:
        reply_lookup_is_strong = True

        def find_reply(self, *args, **kwargs):
            raise ProviderError(
                ErrorKind.RATE_LIMITED, "Slow down.", retry_at=db_now() + timedelta(hours=1)
            )

    monkeypatch.setattr(replies, "connect", lambda rendition: (Throttled(), None))
    monkeypatch.setattr(replies, "published_post", lambda rendition: None)
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")
    [claimed_job] = [j for j in worker.claim_batch() if j.pk == job.pk]
    worker.run_one(claimed_job)
    job.refresh_from_db()
    assert (job.status, job.last_error["kind"]) == ("failed", SNOOZE_BUDGET_EXHAUSTED)

    sweep()

    status, message = settled(reply)
    assert status == Status.UNKNOWN
    assert SNOOZE_BUDGET_EXHAUSTED in message and "check the thread" in message
    assert reply.last_error["code"] == "reply_job_ended"


def test_a_send_in_flight_when_its_worker_kept_dying_goes_to_a_person(db):
    reply = a_reply()
    job = claimed(replies.enqueue_reply(reply), recoveries=6)
    send = attempt(reply, A.Kind.SEND, A.Outcome.IN_FLIGHT, job)
    job_recover_stale(job_ids=[job.pk])

    sweep()

    status, message = settled(reply)
    assert status == Status.UNKNOWN and "stale" in message
    send.refresh_from_db()
    assert send.outcome == A.Outcome.LOST


def test_an_operators_cancel_fails_the_reply_and_a_retry_sends_it_again(db):
    reply = a_reply()
    replies.enqueue_reply(reply)
    assert job_cancel(dedupe_key=replies.reply_dedupe_key(reply.pk))

    sweep()

    status, message = settled(reply)
    assert status == Status.FAILED and "cancelled" in message and "retry it" in message
    replies.reply_retry(reply=reply)
    assert Job.objects.unfinished().filter(dedupe_key=f"inbox-reply:{reply.pk}").exists()


def test_a_reply_whose_job_was_never_queued_fails_rather_than_waiting_forever(db):
    reply = a_reply()

    sweep()

    assert settled(reply)[0] == Status.FAILED


def test_a_doubt_a_person_cleared_leaves_nothing_in_doubt(db):
    reply = a_reply()
    job = replies.enqueue_reply(reply)
    attempt(reply, A.Kind.SEND, A.Outcome.UNKNOWN, job)
    attempt(reply, A.Kind.RESOLVE, A.Outcome.ABSENT)
    job_cancel(job_id=job.pk)

    sweep()

    assert settled(reply)[0] == Status.FAILED


@pytest.mark.parametrize("job_status", ["pending", "processing", "waiting"])
def test_a_reply_its_job_is_still_working_on_is_left_alone(db, job_status):
    reply = a_reply()
    job = replies.enqueue_reply(reply)
    if job_status != "pending":
        claimed(job)
        Job.objects.filter(pk=job.pk).update(status=job_status)

    sweep()

    assert settled(reply)[0] == Status.PENDING
    assert jobless.settle_one(reply.pk) is False


def test_a_reply_awaiting_approval_has_no_job_and_is_left_alone(db):
    reply = a_reply(Status.AWAITING_APPROVAL)

    sweep()

    assert settled(reply)[0] == Status.AWAITING_APPROVAL


def test_the_sweep_reads_pending_replies_only(db):
    """Many sent replies with their done jobs: the sweep reads the pending ones through
    their partial index and probes the jobs' unique index of unfinished keys."""
    template = a_reply(Status.REJECTED)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO inbox_reply (workspace_id, comment_id, text, status, provider_reply_id,
                   provider_url, created_at, updated_at)
            SELECT workspace_id, comment_id, text, 'sent', 'r-' || n, '', now(), now()
              FROM inbox_reply, generate_series(1, 3000) s(n)
             WHERE id = %s
            """,
            [template.pk],
        )
        cursor.execute(
            """
            INSERT INTO jobs_job (type, seat, payload, status, run_at, attempts, max_attempts,
                   locked_by, dedupe_key, recoveries, snoozed_s, waited_s, created_at,
                   updated_at, finished_at)
            SELECT 'inbox.reply', 'publish', '{}', 'done', now(), 1, 6, '',
                   'inbox-reply:' || r.id, 0, 0, 0, now(), now(), now()
              FROM inbox_reply r
            """
        )
    orphans = [a_reply(comment=template.comment) for _ in range(3)]
    working = a_reply(comment=template.comment)
    replies.enqueue_reply(working)
    analyze("inbox_reply", "jobs_job")

    tables = ("inbox_reply", "jobs_job")
    scans = scans_of(jobless.JOBLESS_SQL, tables, [100])

    assert scans and {s.table for s in scans} == set(tables)
    assert_bounded(scans, max_rows=20)
    assert jobless.settle_jobless_replies() == 3
    assert {settled(r)[0] for r in orphans} == {Status.FAILED}
    assert settled(working)[0] == Status.PENDING
