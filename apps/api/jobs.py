"""The API's job types (imported at startup by the jobs app)."""

from datetime import timedelta

from apps.api.idempotency import idempotency_records_prune
from apps.jobs.models import Job
from apps.jobs.registry import StalePolicy, job_type

IDEMPOTENCY_PRUNE = "api.idempotency_prune"


@job_type(IDEMPOTENCY_PRUNE, periodic_every=timedelta(hours=1), stale_policy=StalePolicy.REQUEUE)
def idempotency_prune(job: Job) -> None:
    """Delete stored Idempotency-Key responses past IDEMPOTENCY_RETENTION_HOURS."""
    idempotency_records_prune()
