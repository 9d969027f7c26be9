"""A worker killed after the platform answered but before the answer's consequence was
committed: recovery must see the request as possibly sent (ambiguous, reconciled), never as
nothing sent, or the post is published twice."""

import pytest

from apps.jobs.models import Job
from apps.jobs.services import job_recover_stale
from apps.publishing.delivery import failures, publish
from apps.publishing.delivery.enqueue import publish_dedupe_key, reconcile_dedupe_key
from apps.renditions.models import DeliveryAttempt
from apps.sandbox.services import sandbox_account_create
from tests.renditions.test_pipeline import drain, publish_now, sandbox, witness, worker

__all__ = ["sandbox", "worker"]  # fixtures

pytestmark = pytest.mark.django_db(transaction=True)


class WorkerKilled(BaseException):
    """SIGKILL: no handler of ours runs after it, and the open transaction is rolled back."""


def die(*args, **kwargs):
    raise WorkerKilled


def run_until_killed(job: Job) -> None:
    with pytest.raises(WorkerKilled):
        publish.publish(job)


def recover_and_settle(worker, publication, job: Job) -> None:
    assert job_recover_stale(job_ids=[job.pk]) == 1
    rendition = publication.renditions.get()
    assert (rendition.status, rendition.ambiguous) == ("failed", True)
    assert rendition.last_error["code"] == "worker_lost"
    assert rendition.delivery_attempts.get().outcome == DeliveryAttempt.Outcome.LOST
    assert Job.objects.unfinished().filter(dedupe_key=reconcile_dedupe_key(rendition.pk))
    assert not Job.objects.unfinished().filter(dedupe_key=publish_dedupe_key(rendition.pk))
    Job.objects.filter(dedupe_key=reconcile_dedupe_key(rendition.pk)).update(
        run_at=rendition.updated_at
    )
    drain(worker, publication)


def test_killed_after_a_timeout_before_the_failure_committed(
    sandbox, settings, worker, workspace_a, monkeypatch
):
    settings.PROVIDER_TIMEOUT_S = 0.5
    account = sandbox_account_create(
        workspace=workspace_a,
        handle="killed-unknown",
        behaviour={"hang_after_accept_times": 1, "hang_s": 1.5, "honours_idempotency_key": False},
    )
    publication = publish_now(workspace_a, [account])
    [job] = worker.claim_batch()
    monkeypatch.setattr(failures, "_write_failure", die)
    run_until_killed(job)  # the request timed out, the post may exist; then the kill
    monkeypatch.undo()

    recover_and_settle(worker, publication, job)
    rendition = publication.renditions.get()
    assert rendition.status == "published"
    assert len(witness(sandbox, "killed-unknown")) == 1


def test_killed_after_the_post_was_accepted_before_its_id_was_stored(
    sandbox, worker, workspace_a, monkeypatch
):
    account = sandbox_account_create(workspace=workspace_a, handle="killed-published")
    publication = publish_now(workspace_a, [account])
    [job] = worker.claim_batch()
    monkeypatch.setattr(publish, "record_segment", die)
    run_until_killed(job)  # the platform answered with the post's id; then the kill
    monkeypatch.undo()

    recover_and_settle(worker, publication, job)
    rendition = publication.renditions.get()
    assert rendition.status == "published"
    [post] = witness(sandbox, "killed-published")
    assert rendition.provider_post_id == post["id"]
