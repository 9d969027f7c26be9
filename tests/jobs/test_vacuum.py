from datetime import timedelta

import pytest
from django.db import connection

from apps.jobs.registry import get_job_type
from apps.jobs.services import jobs_vacuum_if_needed
from tests.factories import OrganizationFactory


def _dead_rows() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")  # this backend's counts, now
        cursor.execute(
            "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'jobs_job'::regclass"
        )
        return cursor.fetchone()[0]


def _claimed_burst(org, count: int) -> None:
    """`count` pending jobs, then all flipped to processing: one dead row each."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO jobs_job (organization_id, type, payload, status, run_at, attempts,
                                  max_attempts, locked_by, recoveries, snoozed_s, waited_s,
                                  created_at, updated_at)
            SELECT %s, 'noop', '{}', 'pending', now(), 0, 5, '', 0, 0, 0, now(), now()
              FROM generate_series(1, %s)
            """,
            [org.pk, count],
        )
        cursor.execute(
            "UPDATE jobs_job SET status = 'done', finished_at = now() WHERE organization_id = %s",
            [org.pk],
        )


@pytest.mark.django_db(transaction=True)
def test_it_vacuums_the_table_once_dead_rows_pile_up():
    _claimed_burst(OrganizationFactory(), 300)
    assert _dead_rows() >= 300

    assert jobs_vacuum_if_needed(dead_rows=10**9) is False
    assert _dead_rows() >= 300
    assert jobs_vacuum_if_needed(dead_rows=300) is True
    assert _dead_rows() < 300


def test_the_vacuum_runs_every_minute():
    assert get_job_type("jobs.vacuum").periodic_every == timedelta(minutes=1)
