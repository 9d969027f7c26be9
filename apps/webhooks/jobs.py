"""The webhook delivery job type (imported at startup by the jobs app)."""

from datetime import timedelta

from apps.jobs.errors import LeaseLost, PermanentError, RetryableError
from apps.jobs.models import Job
from apps.jobs.registry import Backoff, StalePolicy, job_type
from apps.webhooks import delivery, outbox
from apps.webhooks.constants import DELIVER_JOB, MAX_ATTEMPTS, PRUNE_JOB


@job_type(
    DELIVER_JOB,
    max_attempts=MAX_ATTEMPTS,
    # The service picks each wait (constants.BACKOFF, with the receiver's Retry-After as
    # the floor) and logs it on the delivery; this one-second ceiling only adds jitter on
    # top, so the job runs when the delivery log says it will.
    backoff=Backoff(base_s=1.0, cap_s=1.0),
    # "errored" is absent: our own bug fails the job (traceback kept) instead of looping.
    retry_kinds=delivery.RETRY_KINDS,
    # Delivery is at least once and receivers drop repeated event ids: resending is safe.
    stale_policy=StalePolicy.REQUEUE,
    # A budget of its own: a slow receiver never takes the organization's publish seats.
    seat="webhook",
)
def deliver(job: Job) -> None:
    try:
        outcome = delivery.webhook_delivery_attempt(job=job)
    except LeaseLost:
        raise
    except Exception as exc:
        delivery.webhook_delivery_mark_errored(job=job, exc=exc)
        raise
    if outcome.status == "retry":
        assert outcome.retry_in_s is not None  # a retry outcome always says when
        raise RetryableError(
            outcome.kind, outcome.message, retry_at=timedelta(seconds=outcome.retry_in_s)
        )
    if outcome.status == "failed":
        raise PermanentError(outcome.kind, outcome.message)


@job_type(PRUNE_JOB, periodic_every=timedelta(hours=6), stale_policy=StalePolicy.CLOSE)
def prune(job: Job) -> None:
    """Forget events (and their delivery logs) past WEBHOOK_RETENTION_DAYS."""
    outbox.webhooks_prune()
