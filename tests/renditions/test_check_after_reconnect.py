"""An ambiguous rendition whose account must be reconnected cannot be checked: the check
waits for the reconnect (action `reconnect`), then runs by itself, never leaving the post's
fate to a person for good and never sending it twice."""

import pytest
from django.utils import timezone

from apps.accounts.services import social_account_mark_needs_reconnect
from apps.jobs.models import Job
from apps.jobs.services import job_recover_stale
from apps.publishing.delivery.enqueue import reconcile_dedupe_key
from apps.renditions.models import DeliveryAttempt
from apps.sandbox.services import sandbox_account_create, sandbox_account_reconnect
from tests.renditions.test_pipeline import drain, publish_now, run_due, sandbox, witness, worker

__all__ = ["sandbox", "worker"]  # fixtures

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_check_waits_for_the_reconnect_then_settles_the_post_once(sandbox, worker, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="lapsed")
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    [job] = worker.claim_batch()
    # The worker died with the request in flight; meanwhile the account's token lapsed.
    rendition.mark_publishing()
    DeliveryAttempt.objects.create(
        rendition=rendition, workspace=workspace_a, kind="publish", segment_position=0
    )
    job_recover_stale(job_ids=[job.pk])
    social_account_mark_needs_reconnect(account=account)

    run_due(worker)  # the check cannot ask the platform without the account
    rendition.refresh_from_db()
    assert (rendition.status, rendition.ambiguous) == ("failed", True)
    assert rendition.last_error["action"] == "reconnect"
    assert "check_at" not in rendition.last_error
    assert not Job.objects.unfinished().filter(dedupe_key=reconcile_dedupe_key(rendition.pk))
    assert witness(sandbox, "lapsed") == []

    account.refresh_from_db()
    sandbox_account_reconnect(account=account)
    rendition.refresh_from_db()
    assert rendition.last_error["action"] == "wait"
    check = Job.objects.unfinished().get(dedupe_key=reconcile_dedupe_key(rendition.pk))
    Job.objects.filter(pk=check.pk).update(run_at=timezone.now())

    drain(worker, publication)
    rendition.refresh_from_db()
    assert rendition.status == "published"
    assert len(witness(sandbox, "lapsed")) == 1


def test_the_post_page_offers_the_reconnect_first(sandbox, worker, workspace_a, client, alice):
    account = sandbox_account_create(workspace=workspace_a, handle="lapsed-page")
    publication = publish_now(workspace_a, [account])
    rendition = publication.renditions.get()
    [job] = worker.claim_batch()
    rendition.mark_publishing()
    DeliveryAttempt.objects.create(
        rendition=rendition, workspace=workspace_a, kind="publish", segment_position=0
    )
    job_recover_stale(job_ids=[job.pk])
    social_account_mark_needs_reconnect(account=account)
    run_due(worker)

    client.force_login(alice)
    page = client.get(f"/w/{workspace_a.slug}/posts/{publication.pk}/")
    assert page.status_code == 200
    assert 'data-primary="reconnect"' in page.content.decode()
