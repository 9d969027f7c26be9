"""Two real transactions on two connections racing for the same row or the same unit."""

import threading
import time
from contextlib import nullcontext
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from apps.common.deferred_checks import deferred
from apps.common.errors import Conflict, QuotaExceeded
from apps.publications.models import Publication
from apps.publishing import services
from apps.renditions.models import Rendition
from tests.publications.test_quotas import fill_day

pytestmark = pytest.mark.django_db(transaction=True)


def race(*calls):
    """Run each call in its own thread (own connection), released together; return what
    each returned or raised."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(i, call):
        try:
            barrier.wait()
            results[i] = call()
        except Exception as exc:  # the outcome is what the test asserts
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def test_two_edits_of_the_same_revision_one_wins_one_conflicts(workspace_a):
    publication = services.publication_create(
        workspace=workspace_a, author=None, segments=["Original"], destinations=[]
    )

    def edit(text):
        return lambda: services.publication_update(
            publication=Publication.objects.get(pk=publication.pk),
            expected_revision=1,
            segments=[text],
        )

    results = race(edit("From Alice"), edit("From Bob"))

    winners = [r for r in results if isinstance(r, Publication)]
    losers = [r for r in results if isinstance(r, Conflict)]
    assert len(winners) == 1 and len(losers) == 1, results
    assert losers[0].code == "REVISION_CONFLICT"
    assert losers[0].details["current_revision"] == 2
    publication.refresh_from_db()
    assert publication.revision == 2
    assert publication.segments.get().text == winners[0].segments.get().text


def test_an_edit_waits_for_the_row_lock_then_sees_the_new_revision(workspace_a):
    """The first edit holds the lock (its transaction is slow); the second blocks on it
    and, once it may read, finds revision 2: a conflict, never a silent overwrite."""
    from django.db import transaction

    publication = services.publication_create(
        workspace=workspace_a, author=None, segments=["Original"], destinations=[]
    )
    locked = threading.Event()

    def slow_edit():
        with transaction.atomic():
            result = services.publication_update(
                publication=publication, expected_revision=1, segments=["Slow"]
            )
            locked.set()
            threading.Event().wait(0.3)  # hold the lock while the other one arrives
            return result

    def second_edit():
        locked.wait(5)
        return services.publication_update(
            publication=publication, expected_revision=1, segments=["Fast"]
        )

    slow, second = race(slow_edit, second_edit)

    assert isinstance(slow, Publication)
    assert isinstance(second, Conflict) and second.code == "REVISION_CONFLICT"
    publication.refresh_from_db()
    assert (publication.revision, publication.segments.get().text) == (2, "Slow")


def test_two_creations_racing_for_the_last_quota_unit(org_a, workspace_a):
    org_a.monthly_post_quota = 1
    org_a.save()

    def create():
        return services.publication_create(
            workspace=workspace_a, author=None, segments=["Hi"], destinations=[]
        )

    results = race(create, create)

    assert sorted(type(r).__name__ for r in results) == ["Publication", "QuotaExceeded"]
    assert Publication.objects.count() == 1


def _lock_waiters() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE wait_event_type = 'Lock' AND datname = current_database()"
        )
        return cursor.fetchone()[0]


def _second_waits_for_first(first, second):
    """Run first() in a transaction left open until second() has started and is waiting
    for a lock (the organization's), then commit it; return both outcomes."""
    holding, release = threading.Event(), threading.Event()

    def hold():
        with transaction.atomic():
            result = first()
            holding.set()
            assert release.wait(15), "the second create never waited for the lock"
        return result

    def follow():
        assert holding.wait(15)
        return second()

    def release_once_waiting():
        assert holding.wait(15)
        deadline = time.monotonic() + 15
        while _lock_waiters() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        release.set()
        connection.close()

    watcher = threading.Thread(target=release_once_waiting)
    watcher.start()
    results = race(hold, follow)
    watcher.join(timeout=30)
    return results


@pytest.mark.parametrize("deferring", [False, True], ids=["at-once", "deferred"])
def test_a_create_waiting_for_the_lock_counts_the_create_that_held_it(
    org_a, workspace_a, deferring
):
    """The quota is counted after the organization's lock is taken (the lock is taken
    last, after the rows are written; "deferred": at the end of the caller's
    ``deferred()`` block, as the API's idempotent create runs it): a create that waited
    for the lock behind another, uncommitted, create counts that one once it has
    committed."""
    org_a.monthly_post_quota = 1
    org_a.save()

    def create():
        with transaction.atomic(), deferred() if deferring else nullcontext():
            return services.publication_create(
                workspace=workspace_a, author=None, segments=["Hi"], destinations=[]
            )

    first, second = _second_waits_for_first(create, create)

    assert isinstance(first, Publication), first
    assert isinstance(second, QuotaExceeded), second
    assert second.code == "MONTHLY_QUOTA_EXCEEDED" and second.details["used"] == 1
    assert Publication.objects.count() == 1


def test_a_schedule_waiting_for_the_lock_counts_the_daily_cap_unit_taken_before(
    workspace_a, instagram_a, jpeg_a
):
    """The same for an account's daily cap (Instagram: 100 a day): 99 taken, two creates
    for the last unit, the second waiting for the first's lock, then refused."""
    when = timezone.now() + timedelta(days=2)
    fill_day(instagram_a, 99, when=when)

    def schedule():
        return services.publication_create(
            workspace=workspace_a,
            author=None,
            segments=[{"text": "pic", "media": [jpeg_a.pk]}],
            destinations=[instagram_a.pk],
            scheduled_at=when,
            status="scheduled",
        )

    first, second = _second_waits_for_first(schedule, schedule)

    assert isinstance(first, Publication), first
    assert isinstance(second, QuotaExceeded), second
    assert second.code == "DAILY_CAP_EXCEEDED" and second.details["used"] == 100
    assert Rendition.objects.filter(social_account=instagram_a).count() == 100


def test_two_creations_racing_for_one_reference_key(workspace_a):
    def create():
        return services.publication_create(
            workspace=workspace_a,
            author=None,
            segments=["Hi"],
            destinations=[],
            reference_key="occurrence-1",
        )

    results = race(create, create)

    conflicts = [r for r in results if isinstance(r, Conflict)]
    assert len(conflicts) == 1 and conflicts[0].code == "REFERENCE_KEY_EXISTS"
    assert Publication.objects.filter(reference_key="occurrence-1").count() == 1


def test_reschedule_and_edit_race(workspace_a):
    publication = services.publication_create(
        workspace=workspace_a, author=None, segments=["Hi"], destinations=[]
    )
    later = publication.created_at + timedelta(days=1)

    results = race(
        lambda: services.publication_reschedule(
            publication=publication, expected_revision=1, scheduled_at=later
        ),
        lambda: services.publication_update(
            publication=publication, expected_revision=1, segments=["Edited"]
        ),
    )

    assert sum(isinstance(r, Publication) for r in results) == 1
    assert sum(isinstance(r, Conflict) for r in results) == 1
    assert not any(isinstance(r, QuotaExceeded) for r in results)
