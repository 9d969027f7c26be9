"""The evergreen recycler's job type (imported at startup by the jobs app)."""

from datetime import timedelta

from apps.jobs.models import Job
from apps.jobs.registry import StalePolicy, job_type
from apps.planning.recycling import evergreen_recycle_due

RECYCLE_JOB = "planning.evergreen_recycle"
# Wall-clock seconds one sweep spends on due posts; what is left waits for the next sweep.
RECYCLE_SECONDS = 30.0


# Housekeeping: it creates publications and publishes nothing, so it holds no seat; the
# next sweep replaces one that died (CLOSE). Each post is looked at in its own transaction.
@job_type(
    RECYCLE_JOB, periodic_every=timedelta(minutes=10), stale_policy=StalePolicy.CLOSE, seat=None
)
def recycle(job: Job) -> None:
    """Make the evergreen re-shares that are due."""
    evergreen_recycle_due(budget_s=RECYCLE_SECONDS)
