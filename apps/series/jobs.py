"""The series materializer's job types (imported at startup by the jobs app)."""

from datetime import timedelta

from apps.jobs.models import Job
from apps.jobs.registry import StalePolicy, job_type
from apps.series import occurrences
from apps.series.constants import MATERIALIZE_JOB, MATERIALIZE_ONE_JOB
from apps.series.models import Series


@job_type(MATERIALIZE_JOB, periodic_every=timedelta(minutes=10), stale_policy=StalePolicy.CLOSE)
def materialize(job: Job) -> None:
    """Expand every active series over its horizon (idempotent; the next run replaces a
    run that died, hence CLOSE)."""
    occurrences.series_materialize_due()


# Housekeeping: it creates publications, it publishes nothing, so it holds no publish seat.
@job_type(MATERIALIZE_ONE_JOB, max_attempts=3, stale_policy=StalePolicy.REQUEUE, seat=None)
def materialize_one(job: Job) -> None:
    """Expand one series right after it was created, edited or resumed."""
    series = Series.objects.filter(pk=job.payload["series_id"]).first()
    if series is not None:
        occurrences.series_materialize(series=series)
