"""Delivery's job types (imported at startup by the jobs app). Their names are stored in
the jobs table, so they keep the ``renditions.`` prefix they were first written with."""

from datetime import timedelta

from django.conf import settings
from django.db.models import CharField, Exists, OuterRef, Q, Value
from django.db.models.functions import Cast, Concat, Now

from apps.jobs.models import Job
from apps.jobs.registry import Backoff, StalePolicy, job_type
from apps.providers.errors import RETRYABLE_KINDS
from apps.publishing.delivery import comment as commenting
from apps.publishing.delivery import comment_jobless, stranded
from apps.publishing.delivery import poll as polling
from apps.publishing.delivery import publish as publishing
from apps.publishing.delivery import reconcile as reconciliation
from apps.publishing.delivery.enqueue import POLL_JOB, PUBLISH_JOB, RECONCILE_JOB, schedule_publish
from apps.renditions.models import Rendition


@job_type(
    PUBLISH_JOB,
    max_attempts=8,
    # Read at startup: operators (and the soak) tune how fast failed deliveries come back.
    backoff=Backoff(base_s=settings.PUBLISH_RETRY_BASE_S, cap_s=settings.PUBLISH_RETRY_CAP_S),
    # "errored" is absent on purpose: our bug mid-publish is never blindly rerun.
    retry_kinds=frozenset(str(kind) for kind in RETRYABLE_KINDS),
    stale_policy=StalePolicy.CALLBACK,
    on_stale=publishing.on_publish_stale,
    snooze_budget_s=48 * 3600.0,
)
def publish(job: Job) -> None:
    publishing.publish(job)


@job_type(
    POLL_JOB,
    max_attempts=5,
    backoff=Backoff(base_s=30, cap_s=600),
    retry_kinds=frozenset({"provider_unavailable", "network_before_send", "rate_limited"}),
    stale_policy=StalePolicy.REQUEUE,
    wait_budget_s=24 * 3600.0,
    seat=None,  # a status check holds no publish seat, however long the platform takes
)
def poll(job: Job) -> None:
    polling.poll(job)


@job_type(
    RECONCILE_JOB,
    max_attempts=5,
    backoff=Backoff(base_s=15, cap_s=900),
    retry_kinds=frozenset(
        {
            reconciliation.NOT_FOUND_YET,
            "provider_unavailable",
            "network_before_send",
            "rate_limited",
        }
    ),
    stale_policy=StalePolicy.REQUEUE,  # a lookup only reads
    seat=None,  # ...and holds no publish seat
)
def reconcile_job(job: Job) -> None:
    reconciliation.reconcile(job)


@job_type(
    commenting.COMMENT_JOB,
    max_attempts=6,
    backoff=Backoff(base_s=settings.PUBLISH_RETRY_BASE_S, cap_s=settings.PUBLISH_RETRY_CAP_S),
    # "errored" is absent: after our bug mid-call a person looks, the comment may exist.
    retry_kinds=frozenset(str(kind) for kind in commenting.RETRY_KINDS),
    # A run that stopped mid-call leaves its attempt in flight; the next run looks it up.
    stale_policy=StalePolicy.REQUEUE,
)
def first_comment(job: Job) -> None:
    commenting.post_first_comment(job)


@job_type(
    "renditions.sweep_due",
    periodic_every=timedelta(minutes=1),
    stale_policy=StalePolicy.CLOSE,
)
def sweep_due(job: Job) -> None:
    """The outbox safety net: a due rendition with no unfinished publish job (a lost
    enqueue, an operator's cancel) gets one, a rendition left in flight with no job
    (publishing or waiting, its job ended by a database outage or a cancel) is settled by
    the ambiguity rules (``stranded``), and so is a first comment left pending with no job
    (``comment_jobless``). Normally it finds nothing."""
    has_job = Job.objects.unfinished().filter(
        dedupe_key=Concat(Value("publish:"), Cast(OuterRef("pk"), CharField()))
    )
    due = (
        Rendition.objects.with_effective_scheduled_at()
        .filter(
            Q(status=Rendition.Status.SCHEDULED, effective_at__lte=Now())
            | Q(
                status=Rendition.Status.FAILED,
                ambiguous=False,
                next_retry_at__isnull=False,
                next_retry_at__lte=Now(),
            )
        )
        .exclude(Exists(has_job))
        # Accepted work belongs to its poll job; a publish job would only resume waiting.
        .exclude(checkpoint__has_key="pending")
        .select_related("workspace__organization", "publication")[:500]
    )
    for rendition in due:
        schedule_publish(rendition, run_at=None)
    stranded.settle_stranded()
    comment_jobless.settle_jobless_comments()
