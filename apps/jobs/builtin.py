"""Job types of the jobs app itself: the no-op used by benchmarks and tests, and the
housekeeping that prunes finished jobs and vacuums the table."""

import time
from datetime import timedelta

from apps.jobs.models import Job
from apps.jobs.registry import StalePolicy, job_type
from apps.jobs.services import jobs_prune_finished, jobs_vacuum_if_needed

NOOP = "noop"
PRUNE = "jobs.prune"
VACUUM = "jobs.vacuum"


@job_type(NOOP, stale_policy=StalePolicy.REQUEUE)
def noop(job: Job) -> None:
    """Does nothing (bench_queue's workload). `{"sleep_s": x}` holds the job for x seconds,
    which tests use to have a job running when a worker is stopped or killed."""
    sleep_s = job.payload.get("sleep_s") if job.payload else None
    if sleep_s:
        time.sleep(float(sleep_s))


@job_type(PRUNE, periodic_every=timedelta(hours=1), stale_policy=StalePolicy.REQUEUE)
def prune(job: Job) -> None:
    """Delete finished jobs past JOB_RETENTION_DAYS, and registry rows of long-gone workers."""
    jobs_prune_finished()


@job_type(VACUUM, periodic_every=timedelta(minutes=1), stale_policy=StalePolicy.REQUEUE)
def vacuum(job: Job) -> None:
    """Vacuum jobs_job when dead rows pile up (autovacuum off or behind)."""
    jobs_vacuum_if_needed()
