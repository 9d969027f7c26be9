"""A refusal never settles an earlier unanswered request.

LinkedIn stored the post but its answer never came (outcome unknown); once that request
could no longer land, reconciliation sent the post again, and the platform refused the
resend (its daily limit, or a 5xx before anything was stored). The refusal says nothing
about the first request: the rendition stays ambiguous with its check scheduled, never a
plain failure with a blind retry, and the check settles it with the one post."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from apps.jobs.models import Job
from apps.jobs.registry import Backoff
from apps.jobs.services import job_recover_stale
from apps.jobs.worker import Worker
from apps.providers.errors import ErrorKind, ProviderError
from apps.providers.linkedin.adapter import LinkedInAdapter
from apps.publishing.delivery.enqueue import publish_dedupe_key, reconcile_dedupe_key
from apps.publishing.services import publication_create
from apps.renditions.models import DeliveryAttempt
from apps.sandbox.services import sandbox_account_create
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.linkedin import MEMBER_SCOPES, LinkedInFake
from loadtest.platform_fakes.server import FakeServer
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db(transaction=True)


class Script(FaultPlan):
    """The faults strike in this order, each on the first eligible call after the one
    before it struck; nothing else strikes."""

    def __init__(self, *faults: str) -> None:
        super().__init__(rates={}, hang_s=1.0)
        self.script = list(faults)

    def strikes(self, fault: str) -> bool:
        if self.script and self.script[0] == fault:
            self.script.pop(0)
            self.struck[fault] = self.struck.get(fault, 0) + 1
            return True
        return False


@pytest.fixture
def linkedin(settings):
    fakes = {}

    def serve(*faults: str) -> LinkedInFake:
        fake = LinkedInFake(Script(*faults))
        fakes["server"] = FakeServer([fake]).start()
        settings.PROVIDER_API_REDIRECT = fakes["server"].base_url
        return fake

    settings.PROVIDER_TIMEOUT_S = 0.5
    settings.RECONCILE_DELAY_S = 0
    settings.RECONCILE_SETTLE_S = 0  # the unanswered request can no longer land
    settings.LINKEDIN_CLIENT_ID, settings.LINKEDIN_CLIENT_SECRET = "li-client", "li-secret"
    settings.LINKEDIN_API_VERSION = "202609"
    yield serve
    if "server" in fakes:
        fakes["server"].stop()


def _drain(worker: Worker, rendition, *, rounds: int = 40) -> None:
    for _ in range(rounds):
        jobs = worker.claim_batch()
        for job in jobs:
            worker.run_one(job)
        rendition.refresh_from_db()
        if not jobs and not Job.objects.unfinished().filter(run_at__lte=timezone.now()).exists():
            return


def _publish_now(fake: LinkedInFake, workspace):
    # The account may read its own posts, so the post a refusal names can be confirmed.
    opened = fake.new_account("Alice Example", scopes=MEMBER_SCOPES | {"r_member_social"})
    account = make_account(workspace, "linkedin", **opened)
    account.token_expires_at = datetime.fromisoformat(opened["credentials"]["expires_at"])
    account.save(update_fields=["token_expires_at"])
    publication = publication_create(
        workspace=workspace,
        author=None,
        segments=[{"text": "Fresh loaves at dawn"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    return publication.renditions.get()


def _assert_ambiguous_with_a_check(rendition, *, not_before: datetime) -> Job:
    assert (rendition.status, rendition.ambiguous) == ("failed", True), rendition.last_error
    assert rendition.next_retry_at is None  # no retry of its own: the check comes first
    assert rendition.last_error["kind"] == "outcome_unknown"
    assert rendition.last_error["action"] == "wait"
    check = Job.objects.unfinished().get(dedupe_key=reconcile_dedupe_key(rendition.pk))
    assert check.status == "pending"
    assert check.run_at >= not_before - timedelta(seconds=1)
    assert rendition.last_error["check_at"] == check.run_at.isoformat()
    # Nothing will send the post again before the check.
    assert not Job.objects.unfinished().filter(dedupe_key=publish_dedupe_key(rendition.pk)).exists()
    return check


def _assert_settled_with_one_post(fake: LinkedInFake, rendition, worker: Worker) -> None:
    check = Job.objects.get(dedupe_key=reconcile_dedupe_key(rendition.pk), status="pending")
    Job.objects.filter(pk=check.pk).update(run_at=timezone.now())
    _drain(worker, rendition)
    assert rendition.status == "published", rendition.last_error
    [post] = fake.published()
    assert rendition.segments.get().provider_post_id == post.id
    assert rendition.provider_post_id == post.id
    outcomes = list(
        rendition.delivery_attempts.filter(kind="publish").values_list("outcome", flat=True)
    )
    assert outcomes == ["unknown", "failed", "found"]


def test_a_rate_limited_resend_after_an_unknown_outcome_stays_ambiguous(linkedin, workspace_a):
    fake = linkedin("timeout_after_accept", "rate_limit")
    rendition = _publish_now(fake, workspace_a)
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")

    _drain(worker, rendition)

    # The first request made the post; the resend met the daily limit (429).
    assert len(fake.published()) == 1
    midnight = datetime.combine(
        datetime.now(UTC).date() + timedelta(days=1), datetime.min.time(), tzinfo=UTC
    )
    _assert_ambiguous_with_a_check(rendition, not_before=midnight)
    assert rendition.last_error["refused"]["kind"] == "rate_limited"
    assert rendition.last_error["refused"]["http_status"] == 429

    _assert_settled_with_one_post(fake, rendition, worker)


def test_a_5xx_on_the_resend_after_an_unknown_outcome_stays_ambiguous(
    linkedin, workspace_a, monkeypatch
):
    # Full jitter may draw a check within the drain below; hold it well past it.
    monkeypatch.setattr(Backoff, "delay", lambda self, attempt, floor_s=0.0, rng=None: 60.0)
    fake = linkedin("timeout_after_accept")
    sends = []
    publish_segment = LinkedInAdapter.publish_segment

    def resend_meets_a_5xx(self, ctx, segment, *, reply_to):
        sends.append(segment.position)
        if len(sends) == 2:
            # A 5xx the platform answers before it stores anything.
            raise ProviderError(
                ErrorKind.PROVIDER_UNAVAILABLE,
                "Service Unavailable",
                code="503",
                http_status=503,
                retryable=True,
            )
        return publish_segment(self, ctx, segment, reply_to=reply_to)

    monkeypatch.setattr(LinkedInAdapter, "publish_segment", resend_meets_a_5xx)
    rendition = _publish_now(fake, workspace_a)
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")
    before = timezone.now()

    _drain(worker, rendition)

    assert len(sends) == 2
    assert len(fake.published()) == 1
    _assert_ambiguous_with_a_check(rendition, not_before=before + timedelta(seconds=59))
    assert rendition.last_error["refused"]["kind"] == "provider_unavailable"
    assert rendition.last_error["refused"]["http_status"] == 503

    _assert_settled_with_one_post(fake, rendition, worker)


@pytest.fixture
def sandbox(live_server, settings):
    settings.SANDBOX_BASE_URL = live_server.url
    settings.PROVIDER_TIMEOUT_S = 2
    settings.RECONCILE_DELAY_S = 0
    settings.RECONCILE_SETTLE_S = 0
    return live_server.url


def test_once_an_exact_lookup_proved_absence_a_refusal_is_an_ordinary_failure(sandbox, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a,
        handle="absent",
        behaviour={
            "honours_idempotency_key": False,
            "rate_limit_times": 1,
            "retry_after_s": 30,
        },
    )
    publication = publication_create(
        workspace=workspace_a,
        author=None,
        segments=[{"text": "hello"}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now(),
        status="scheduled",
    )
    rendition = publication.renditions.get()
    worker = Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t")
    [job] = worker.claim_batch()
    # A request left and its worker died: the post may exist.
    rendition.mark_publishing()
    DeliveryAttempt.objects.create(
        rendition=rendition, workspace=workspace_a, kind="publish", segment_position=0
    )
    job_recover_stale(job_ids=[job.pk])

    # The exact lookup finds nothing once the request can no longer land: a clean resend,
    # which the platform refuses (429). Nothing is unsettled any more: an ordinary retry.
    _drain(worker, rendition)

    assert (rendition.status, rendition.ambiguous) == ("failed", False), rendition.last_error
    assert rendition.last_error["kind"] == "rate_limited"
    assert rendition.next_retry_at is not None
    outcomes = list(rendition.delivery_attempts.values_list("kind", "outcome"))
    assert outcomes == [("publish", "lost"), ("reconcile", "absent"), ("publish", "failed")]


def test_a_rejected_resend_after_an_unknown_outcome_goes_to_a_person(
    linkedin, workspace_a, monkeypatch
):
    fake = linkedin("timeout_after_accept")
    publish_segment = LinkedInAdapter.publish_segment
    sends = []

    def resend_is_rejected(self, ctx, segment, *, reply_to):
        sends.append(segment.position)
        if len(sends) == 2:
            raise ProviderError(
                ErrorKind.CONTENT_REJECTED, "Not allowed.", code="422", http_status=422
            )
        return publish_segment(self, ctx, segment, reply_to=reply_to)

    monkeypatch.setattr(LinkedInAdapter, "publish_segment", resend_is_rejected)
    rendition = _publish_now(fake, workspace_a)

    _drain(Worker(threads=1, batch_size=10, heartbeat_s=1, stale_after_s=30, name="t"), rendition)

    # Sending again cannot help, and the first request's post may exist: a person verifies.
    assert len(fake.published()) == 1
    assert (rendition.status, rendition.ambiguous) == ("failed", True), rendition.last_error
    assert rendition.last_error["kind"] == "outcome_unknown"
    assert rendition.last_error["action"] == "verify"
    assert rendition.last_error["refused"]["kind"] == "content_rejected"
    assert rendition.next_retry_at is None
    assert not Job.objects.unfinished().exists()
