"""The first comment under a live post, end to end: real jobs through the worker's
unit-of-work methods, the sandbox over real HTTP as the witness. A comment is posted once,
whatever the platform did to its answer; its failure never touches the post."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.worker import Worker
from apps.providers.base import PublishedSegment, get_adapter
from apps.publishing.delivery import comment as commenting
from apps.publishing.delivery.comment import (
    _connect,
    comment_idempotency_key,
    first_comment_mark_posted,
    first_comment_retry,
    start_first_comment,
)
from apps.publishing.services import publication_create
from apps.renditions.models import DeliveryAttempt, FirstComment
from apps.sandbox.models import SandboxAccount
from apps.sandbox.services import sandbox_account_create
from tests.factories import RenditionFactory
from tests.sandbox.witness import witness_posts

pytestmark = pytest.mark.django_db(transaction=True)

A = DeliveryAttempt


@pytest.fixture
def sandbox(live_server, settings):
    settings.SANDBOX_BASE_URL = live_server.url
    settings.PROVIDER_TIMEOUT_S = 2
    settings.RECONCILE_DELAY_S = 0
    return live_server.url


@pytest.fixture
def worker(db):
    return Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="test-worker")


def run_due(worker: Worker) -> int:
    jobs = worker.claim_batch()
    for job in jobs:
        worker.run_one(job)
    return len(jobs)


def drain(worker: Worker, timeout: float = 20) -> None:
    """Run due jobs until none is left (retries are made due at once)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        Job.objects.unfinished().filter(type=commenting.COMMENT_JOB).update(run_at=timezone.now())
        if not run_due(worker) and not Job.objects.unfinished().exists():
            return
    raise AssertionError("jobs still open after the drain")


def post_with_comment(workspace, account, comment="Link in the first comment: https://e.x"):
    return publication_create(
        workspace=workspace,
        author=None,
        segments=[{"text": "New bread today"}],
        destinations=[{"account": account.pk}],
        first_comment=comment,
        scheduled_at=timezone.now(),
        status="scheduled",
    )


def publish_post_only(worker, publication):
    """Run the publish job alone: the post is live, its comment job waits."""
    for job in worker.claim_batch():
        assert job.type != commenting.COMMENT_JOB
        worker.run_one(job)
    rendition = publication.renditions.get()
    assert rendition.status == "published"
    return rendition


def misbehave(handle: str, **counters) -> None:
    """From now on, the sandbox account answers the next calls as told."""
    SandboxAccount.objects.filter(handle=handle).update(counters=counters)


def split(posts: list[dict]) -> tuple[list[dict], list[dict]]:
    return (
        [p for p in posts if not p["comment_on"]],
        [p for p in posts if p["comment_on"]],
    )


def test_the_comment_is_posted_once_under_the_live_post(sandbox, worker, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="baker")
    publication = post_with_comment(workspace_a, account)
    drain(worker)

    posts, comments = split(witness_posts(sandbox, "baker"))
    assert [p["text"] for p in posts] == ["New bread today"]
    assert [(c["text"], c["comment_on"]) for c in comments] == [
        ("Link in the first comment: https://e.x", posts[0]["id"])
    ]
    comment = FirstComment.objects.get(rendition__publication=publication)
    assert comment.status == "published"
    assert comment.provider_comment_id == comments[0]["id"]
    assert comment.provider_url.endswith(f"/{comments[0]['id']}")
    sent = A.objects.get(rendition=comment.rendition, kind=A.Kind.COMMENT)
    assert sent.outcome == A.Outcome.PUBLISHED
    assert sent.idempotency_key == comment_idempotency_key(comment.rendition_id)


def test_a_lost_answer_is_looked_up_and_never_commented_twice(sandbox, worker, workspace_a):
    # The platform would take a resend as a second comment: only the lookup prevents it.
    account = sandbox_account_create(
        workspace=workspace_a, handle="lossy", behaviour={"honours_idempotency_key": False}
    )
    publication = post_with_comment(workspace_a, account)
    rendition = publish_post_only(worker, publication)
    misbehave("lossy", lost_answer_times=1)

    run_due(worker)
    comment = FirstComment.objects.get(rendition=rendition)
    assert comment.status == "pending"  # the job retries: the comment may exist
    assert A.objects.get(rendition=rendition, kind=A.Kind.COMMENT).outcome == A.Outcome.UNKNOWN

    drain(worker)
    comment.refresh_from_db()
    _posts, comments = split(witness_posts(sandbox, "lossy"))
    assert len(comments) == 1
    assert comment.status == "published"
    assert comment.provider_comment_id == comments[0]["id"]
    kinds = list(
        A.objects.filter(rendition=rendition, idempotency_key=comment_idempotency_key(rendition.pk))
        .order_by("pk")
        .values_list("kind", "outcome")
    )
    assert kinds == [(A.Kind.COMMENT, A.Outcome.UNKNOWN), (A.Kind.RECONCILE, A.Outcome.FOUND)]


def test_a_worker_killed_mid_comment_finds_the_comment_it_made(sandbox, worker, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a, handle="killed", behaviour={"honours_idempotency_key": False}
    )
    publication = post_with_comment(workspace_a, account)
    rendition = publish_post_only(worker, publication)
    comment = FirstComment.objects.get(rendition=rendition)
    key = comment_idempotency_key(rendition.pk)
    # The dead worker's attempt was committed and its comment made; no answer was recorded.
    A.objects.create(
        rendition=rendition,
        workspace=rendition.workspace,
        kind=A.Kind.COMMENT,
        idempotency_key=key,
        worker="dead-worker",
    )
    adapter, ctx = _connect(rendition)  # the worker's own adapter and context
    adapter.publish_comment(
        ctx, PublishedSegment(rendition.provider_post_id, ""), comment.text, key=key
    )

    drain(worker)
    comment.refresh_from_db()
    _posts, comments = split(witness_posts(sandbox, "killed"))
    assert len(comments) == 1
    assert comment.status == "published"
    outcomes = list(
        A.objects.filter(rendition=rendition, idempotency_key=key)
        .order_by("pk")
        .values_list("kind", "outcome")
    )
    assert outcomes == [(A.Kind.COMMENT, A.Outcome.LOST), (A.Kind.RECONCILE, A.Outcome.FOUND)]


def test_a_refused_comment_fails_alone_and_a_retry_posts_it(sandbox, worker, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="strict")
    publication = post_with_comment(workspace_a, account, comment="x" * 20)
    rendition = publish_post_only(worker, publication)
    SandboxAccount.objects.filter(handle="strict").update(behaviour={"reject_content": True})

    drain(worker)
    comment = FirstComment.objects.get(rendition=rendition)
    assert comment.status == "failed"
    assert comment.last_error["kind"] == "content_rejected"
    rendition.refresh_from_db()
    publication.refresh_from_db()
    assert rendition.status == "published" and publication.status == "published"
    assert split(witness_posts(sandbox, "strict"))[1] == []

    SandboxAccount.objects.filter(handle="strict").update(behaviour={})
    first_comment_retry(comment)
    assert FirstComment.objects.get(pk=comment.pk).status == "pending"
    drain(worker)
    comment.refresh_from_db()
    assert comment.status == "published"
    assert len(split(witness_posts(sandbox, "strict"))[1]) == 1


def test_a_passing_outage_is_retried(sandbox, worker, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="flaky")
    publication = post_with_comment(workspace_a, account)
    rendition = publish_post_only(worker, publication)
    misbehave("flaky", server_error_times=2)

    drain(worker)
    comment = FirstComment.objects.get(rendition=rendition)
    assert comment.status == "published"
    assert len(split(witness_posts(sandbox, "flaky"))[1]) == 1
    failed = A.objects.filter(rendition=rendition, kind=A.Kind.COMMENT, outcome=A.Outcome.FAILED)
    assert failed.count() == 2


def test_where_absence_cannot_be_proven_a_person_decides(
    sandbox, worker, workspace_a, monkeypatch, settings
):
    """A platform whose comments are only listed (the listing may lag) never gets a second
    comment on a guess: after the last lookup the comment is left unknown."""
    settings.RECONCILE_SETTLE_S = 0  # the unanswered send can no longer land
    account = sandbox_account_create(workspace=workspace_a, handle="weak")
    publication = post_with_comment(workspace_a, account)
    rendition = publish_post_only(worker, publication)
    adapter = type(get_adapter("sandbox"))
    monkeypatch.setattr(adapter, "comment_lookup_is_strong", False)
    monkeypatch.setattr(adapter, "find_comment", lambda self, *a, **k: None)
    misbehave("weak", lost_answer_times=1)

    drain(worker)
    comment = FirstComment.objects.get(rendition=rendition)
    assert comment.status == "unknown"
    assert comment.last_error["action"] == "verify"
    assert len(split(witness_posts(sandbox, "weak"))[1]) == 1  # sent once, never again
    sends = A.objects.filter(rendition=rendition, kind=A.Kind.COMMENT)
    assert sends.count() == 1

    first_comment_mark_posted(comment, url="https://sandbox.example/c/1")
    comment.refresh_from_db()
    assert comment.status == "published"
    assert comment.provider_url == "https://sandbox.example/c/1"


def test_retrying_an_unknown_comment_records_that_none_was_found(sandbox, worker, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="checked")
    publication = post_with_comment(workspace_a, account)
    rendition = publish_post_only(worker, publication)
    comment = FirstComment.objects.get(rendition=rendition)
    comment.move({"pending"}, "unknown")
    Job.objects.filter(type=commenting.COMMENT_JOB).delete()

    first_comment_retry(comment, actor_note="Checked by bob: none.")
    drain(worker)
    comment.refresh_from_db()
    assert comment.status == "published"
    resolve = A.objects.get(rendition=rendition, kind=A.Kind.RESOLVE)
    assert (resolve.outcome, resolve.note) == (A.Outcome.ABSENT, "Checked by bob: none.")


def test_posts_on_platforms_without_comments_get_none(db):
    rendition = RenditionFactory(platform="x")
    rendition.publication.first_comment = "Hello"
    rendition.publication.save()
    assert start_first_comment(rendition) is None
    assert not FirstComment.objects.exists()


def test_a_publication_without_a_comment_starts_no_job(sandbox, worker, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="quiet")
    post_with_comment(workspace_a, account, comment="   ")
    drain(worker)
    assert not FirstComment.objects.exists()
    assert not Job.objects.filter(type=commenting.COMMENT_JOB).exists()
