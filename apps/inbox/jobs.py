"""The inbox's job types: reading comments (a read: no publish seat), the sweep that
schedules those reads, and sending a reply (a write, under the first comment's rules)."""

from datetime import timedelta

from django.conf import settings

from apps.jobs.models import Job
from apps.jobs.registry import Backoff, StalePolicy, job_type
from apps.providers.errors import RETRYABLE_KINDS

from . import jobless, replies, services, sync


@job_type(
    sync.SYNC_JOB,
    max_attempts=5,
    backoff=Backoff(base_s=30, cap_s=1800),
    retry_kinds=frozenset(str(kind) for kind in RETRYABLE_KINDS),
    stale_policy=StalePolicy.REQUEUE,  # a read only reads
    seat=None,  # ...and holds no publish seat
)
def read_comments(job: Job) -> None:
    sync.read_comments(job)


@job_type(
    "inbox.sync_due",
    periodic_every=timedelta(minutes=1),
    stale_policy=StalePolicy.CLOSE,
    seat=None,
)
def sync_due(job: Job) -> None:
    """Schedules the due reads, and settles replies left pending with no job (``jobless``)."""
    sync.sync_due()
    jobless.settle_jobless_replies()


@job_type(
    replies.REPLY_JOB,
    max_attempts=6,
    backoff=Backoff(base_s=settings.PUBLISH_RETRY_BASE_S, cap_s=settings.PUBLISH_RETRY_CAP_S),
    # "errored" is absent: after our bug mid-call a person looks, the reply may exist.
    retry_kinds=frozenset(str(kind) for kind in replies.RETRY_KINDS),
    # A run that stopped mid-call leaves its attempt in flight; the next run looks it up.
    stale_policy=StalePolicy.REQUEUE,
)
def send_reply(job: Job) -> None:
    replies.send_reply(job)


@job_type(
    services.MODERATE_JOB,
    max_attempts=5,
    backoff=Backoff(base_s=30, cap_s=1800),
    retry_kinds=frozenset(str(kind) for kind in RETRYABLE_KINDS),
    stale_policy=StalePolicy.REQUEUE,  # hiding or deleting twice does what once did
    seat=None,
)
def moderate(job: Job) -> None:
    services.moderate(job)
