"""Fixtures for the job queue: a worker driven through its unit-of-work methods, throwaway
job types, and database-clock helpers (the queue decides everything on the database's
clock, so tests move time by moving rows)."""

from datetime import timedelta

import pytest
from django.db import connection

from apps.jobs import registry
from apps.jobs.worker import Worker


@pytest.fixture
def worker(db):
    return Worker(threads=1, batch_size=10, poll_s=0.05, heartbeat_s=1, stale_after_s=10, name="w1")


@pytest.fixture
def other_worker(db):
    return Worker(threads=1, batch_size=10, poll_s=0.05, heartbeat_s=1, stale_after_s=10, name="w2")


@pytest.fixture
def job_types():
    """Register throwaway job types: `job_types("name", handler, **options)`."""
    names = []

    def register(name, handler, **options):
        registry.job_type(name, **options)(handler)
        names.append(name)
        return registry.get_job_type(name)

    yield register
    for name in names:
        registry.unregister(name)


def db_now():
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        return cursor.fetchone()[0]


def seconds_from_now(value) -> float:
    """`value - now()` on the database clock, in seconds."""
    return (value - db_now()).total_seconds()


def age_heartbeat(job, seconds: float) -> None:
    """Pretend the job's last heartbeat was `seconds` ago."""
    from apps.jobs.models import Job

    Job.objects.filter(pk=job.pk).update(locked_at=db_now() - timedelta(seconds=seconds))
