"""A first comment whose job ended without settling it (its snooze budget spent on a
throttled lookup, a dying worker or a run past its time limit beyond its recoveries, an
unexpected error, an operator's cancel, a lost enqueue) is never left pending: the due
sweep settles it, unknown for a person where a send is in doubt, failed where nothing was
sent."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from apps.common.db_clock import db_now
from apps.jobs.errors import SNOOZE_BUDGET_EXHAUSTED
from apps.jobs.models import Job
from apps.jobs.registry import get_job_type
from apps.jobs.services import job_cancel, job_recover_stale
from apps.jobs.worker import Worker
from apps.providers.errors import ErrorKind, ProviderError
from apps.publishing.delivery import comment as commenting
from apps.publishing.delivery import comment_jobless
from apps.publishing.delivery.comment import first_comment_retry
from apps.renditions.models import DeliveryAttempt, FirstComment, Rendition
from tests.factories import RenditionFactory
from tests.plans import analyze, assert_bounded, scans_of
from tests.publishing.test_infrastructure_faults import _copies

A = DeliveryAttempt
Status = FirstComment.Status


def live_comment() -> FirstComment:
    rendition = RenditionFactory(
        status=Rendition.Status.PUBLISHED,
        published_at=timezone.now(),
        provider_post_id="post-1",
        provider_url="https://x.example/post-1",
    )
    return FirstComment.objects.create(
        rendition=rendition, workspace_id=rendition.workspace_id, text="Link: https://e.x"
    )


def comment_job(comment: FirstComment) -> Job:
    return commenting.enqueue_comment(comment, comment.rendition)


def attempt(comment: FirstComment, kind: str, outcome: str, job: Job | None = None) -> A:
    return A.objects.create(
        rendition_id=comment.rendition_id,
        workspace_id=comment.workspace_id,
        kind=kind,
        outcome=outcome,
        job_id=job.pk if job else None,
        idempotency_key=commenting.comment_idempotency_key(comment.rendition_id),
        started_at=db_now() - timedelta(hours=1),
    )


def claimed(job: Job, **fields) -> Job:
    """The job as a worker holds it mid-run."""
    Job.objects.filter(pk=job.pk).update(
        status="processing", lease=uuid.uuid4(), locked_at=timezone.now(), locked_by="w",
        attempts=1, **fields,
    )  # fmt: skip
    return Job.objects.get(pk=job.pk)


def sweep() -> None:
    """One run of the periodic due sweep, as the worker runs it."""
    get_job_type("renditions.sweep_due").handler(Job())


def settled(comment: FirstComment) -> tuple[str, str]:
    comment.refresh_from_db()
    return comment.status, (comment.last_error or {}).get("message", "")


@pytest.mark.django_db(transaction=True)
def test_a_lookup_throttled_past_the_snooze_budget_leaves_the_comment_to_a_person(monkeypatch):
    comment = live_comment()
    job = comment_job(comment)
    attempt(comment, A.Kind.COMMENT, A.Outcome.UNKNOWN)  # sent, no answer: in doubt
    Job.objects.filter(pk=job.pk).update(snoozed_s=get_job_type(job.type).snooze_budget_s - 60)

    class Throttled:
        comment_lookup_is_strong = True

        def find_comment(self, *args, **kwargs):
            raise ProviderError(
                ErrorKind.RATE_LIMITED, "Slow down.", retry_at=db_now() + timedelta(hours=1)
            )

    monkeypatch.setattr(commenting, "_connect", lambda rendition: (Throttled(), None))
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")
    [claimed_job] = [j for j in worker.claim_batch() if j.pk == job.pk]
    worker.run_one(claimed_job)
    job.refresh_from_db()
    assert (job.status, job.last_error["kind"]) == ("failed", SNOOZE_BUDGET_EXHAUSTED)

    sweep()

    status, message = settled(comment)
    assert status == Status.UNKNOWN
    assert SNOOZE_BUDGET_EXHAUSTED in message and "check the post" in message
    assert comment.last_error["code"] == "comment_job_ended"


def test_a_send_in_flight_when_its_runs_kept_timing_out_goes_to_a_person(db):
    comment = live_comment()
    job = claimed(comment_job(comment), recoveries=6)
    send = attempt(comment, A.Kind.COMMENT, A.Outcome.IN_FLIGHT, job)
    job_recover_stale(job_ids=[job.pk], timed_out_after_s=600)
    assert Job.objects.get(pk=job.pk).status == "failed"

    sweep()

    status, message = settled(comment)
    assert status == Status.UNKNOWN and "timed_out" in message
    send.refresh_from_db()
    assert send.outcome == A.Outcome.LOST


def test_a_send_in_flight_when_its_worker_kept_dying_goes_to_a_person(db):
    comment = live_comment()
    job = claimed(comment_job(comment), recoveries=6)
    attempt(comment, A.Kind.COMMENT, A.Outcome.IN_FLIGHT, job)
    job_recover_stale(job_ids=[job.pk])

    sweep()

    status, message = settled(comment)
    assert status == Status.UNKNOWN and "stale" in message


def test_a_job_ended_by_an_unexpected_error_with_a_send_in_doubt_never_fails_the_comment(db):
    comment = live_comment()
    job = comment_job(comment)
    attempt(comment, A.Kind.COMMENT, A.Outcome.UNKNOWN, job)
    error = {"kind": "errored", "message": "KeyError: 'id'"}
    Job.objects.filter(pk=job.pk).update(status="failed", last_error=error)

    sweep()

    status, message = settled(comment)
    assert status == Status.UNKNOWN and "KeyError" in message


def test_a_worker_dying_past_the_recoveries_before_anything_was_sent_fails_the_comment(db):
    comment = live_comment()
    job = claimed(comment_job(comment), recoveries=6)
    attempt(comment, A.Kind.COMMENT, A.Outcome.FAILED, job)  # refused: made nothing
    job_recover_stale(job_ids=[job.pk])

    sweep()

    status, message = settled(comment)
    assert status == Status.FAILED and "stopped heart-beating" in message
    assert "retry it" in message
    assert comment.last_error["action"] == "retry"


def test_an_operators_cancel_fails_the_comment_and_a_retry_posts_it_again(db):
    comment = live_comment()
    comment_job(comment)
    assert job_cancel(dedupe_key=commenting.comment_dedupe_key(comment.pk), reason="ops")

    sweep()

    status, message = settled(comment)
    assert status == Status.FAILED and "cancelled" in message
    first_comment_retry(comment)
    assert Job.objects.unfinished().filter(dedupe_key=f"comment:{comment.pk}").exists()


def test_a_comment_whose_job_was_never_queued_fails_rather_than_waiting_forever(db):
    comment = live_comment()

    sweep()

    assert settled(comment)[0] == Status.FAILED


def test_a_doubt_a_lookup_cleared_leaves_nothing_in_doubt(db):
    comment = live_comment()
    job = comment_job(comment)
    attempt(comment, A.Kind.COMMENT, A.Outcome.UNKNOWN, job)
    attempt(comment, A.Kind.RECONCILE, A.Outcome.ABSENT, job)
    job_cancel(job_id=job.pk)

    sweep()

    assert settled(comment)[0] == Status.FAILED


@pytest.mark.parametrize("job_status", ["pending", "processing", "waiting"])
def test_a_comment_its_job_is_still_working_on_is_left_alone(db, job_status):
    comment = live_comment()
    job = comment_job(comment)
    attempt(comment, A.Kind.COMMENT, A.Outcome.IN_FLIGHT, job)
    if job_status != "pending":
        claimed(job)
        Job.objects.filter(pk=job.pk).update(status=job_status)

    sweep()

    assert settled(comment)[0] == Status.PENDING
    assert comment_jobless.settle_one(comment.pk) is False
    assert A.objects.get(job_id=job.pk).outcome == A.Outcome.IN_FLIGHT


def test_the_sweep_reads_pending_comments_only(db):
    """Many published comments with their done jobs: the sweep reads the pending ones
    through their partial index and probes the jobs' unique index of unfinished keys."""
    template = live_comment()
    FirstComment.objects.filter(pk=template.pk).update(
        status=Status.PUBLISHED, provider_comment_id="c-1"
    )
    first_new = template.rendition.publication_id
    _copies("publications_publication", first_new, "generate_series(1, 3000) AS s(n)", {})
    _copies(
        "renditions_rendition",
        template.rendition_id,
        "publications_publication s",
        {"publication_id": "s.id"},
        where=f"s.id > {first_new}",
    )
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO renditions_firstcomment (rendition_id, workspace_id, text, status,
                   provider_comment_id, provider_url, created_at, updated_at)
            SELECT r.id, r.workspace_id, 'hi', 'published', 'c-' || r.id, '', now(), now()
              FROM renditions_rendition r
             WHERE NOT EXISTS (SELECT 1 FROM renditions_firstcomment c
                                WHERE c.rendition_id = r.id)
            """
        )
        cursor.execute(
            """
            INSERT INTO jobs_job (type, seat, payload, status, run_at, attempts, max_attempts,
                   locked_by, dedupe_key, recoveries, snoozed_s, waited_s, created_at,
                   updated_at, finished_at)
            SELECT 'renditions.first_comment', 'publish', '{}', 'done', now(), 1, 6, '',
                   'comment:' || c.id, 0, 0, 0, now(), now(), now()
              FROM renditions_firstcomment c
            """
        )
    jobless = [live_comment() for _ in range(3)]
    working = live_comment()
    comment_job(working)
    analyze("renditions_firstcomment", "renditions_rendition", "jobs_job")

    tables = ("renditions_firstcomment", "jobs_job")
    scans = scans_of(comment_jobless.JOBLESS_SQL, tables, [100])

    assert scans and {s.table for s in scans} == set(tables)
    assert_bounded(scans, max_rows=20)
    found = comment_jobless.settle_jobless_comments()
    assert found == 3 and {settled(c)[0] for c in jobless} == {Status.FAILED}
    assert settled(working)[0] == Status.PENDING
