"""The series materializer's job types (imported at startup by the jobs app).

The periodic sweep only fans out: one job per organization with active series, each
time-boxed and continued by a job of its own, so one organization's large series never
hold back (or make "missed") another organization's occurrences."""

from datetime import timedelta

from django.db import transaction

from apps.accounts.models import Organization
from apps.jobs.models import Job
from apps.jobs.registry import StalePolicy, job_type
from apps.jobs.services import job_enqueue
from apps.series import occurrences
from apps.series.constants import (
    MATERIALIZE_JOB,
    MATERIALIZE_ONE_JOB,
    MATERIALIZE_ORGANIZATION_JOB,
)
from apps.series.models import Series


def _organization_key(organization_id: int, after_series_id: int) -> str:
    # A continuation is queued while its own job still holds its key: each position in
    # the organization's series gets its own.
    suffix = f":after:{after_series_id}" if after_series_id else ""
    return f"series-materialize-organization:{organization_id}{suffix}"


@job_type(MATERIALIZE_JOB, periodic_every=timedelta(minutes=10), stale_policy=StalePolicy.CLOSE)
def materialize(job: Job) -> None:
    """Queue one materializer job per organization that has active series (the next
    sweep replaces a sweep that died, hence CLOSE)."""
    with transaction.atomic():
        for organization_id in occurrences.organizations_with_active_series():
            _enqueue_organization(organization_id)


def _enqueue_organization(organization_id: int, *, after_series_id: int = 0) -> None:
    job_enqueue(
        type=MATERIALIZE_ORGANIZATION_JOB,
        payload={"organization_id": organization_id, "after_series_id": after_series_id},
        organization=Organization(pk=organization_id),
        dedupe_key=_organization_key(organization_id, after_series_id),
    )


# Housekeeping: it creates publications, it publishes nothing, so it holds no publish
# seat; under its organization, so a suspended organization's series wait.
@job_type(MATERIALIZE_ORGANIZATION_JOB, max_attempts=3, stale_policy=StalePolicy.REQUEUE, seat=None)
def materialize_organization(job: Job) -> None:
    """Materialize one organization's series for a few seconds, then queue the rest."""
    run = occurrences.organization_materialize(
        organization_id=job.payload["organization_id"],
        after_series_id=job.payload.get("after_series_id", 0),
    )
    if run.resume_after is not None:
        _enqueue_organization(job.payload["organization_id"], after_series_id=run.resume_after)


@job_type(MATERIALIZE_ONE_JOB, max_attempts=3, stale_policy=StalePolicy.REQUEUE, seat=None)
def materialize_one(job: Job) -> None:
    """Expand one series right after it was created, edited or resumed."""
    series = Series.objects.filter(pk=job.payload["series_id"]).first()
    if series is not None:
        occurrences.series_materialize(series=series)
