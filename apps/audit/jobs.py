"""The audit log's housekeeping job."""

from datetime import timedelta

from apps.audit.services import audit_prune
from apps.jobs.models import Job
from apps.jobs.registry import StalePolicy, job_type

PRUNE_JOB = "audit.prune"


@job_type(PRUNE_JOB, periodic_every=timedelta(hours=6), stale_policy=StalePolicy.CLOSE, seat=None)
def prune(job: Job) -> None:
    """Forget audit events past AUDIT_RETENTION_DAYS."""
    audit_prune()
