"""Two real transactions on two connections racing for the same row or the same unit."""

import threading
from datetime import timedelta

import pytest
from django.db import connection

from apps.common.errors import Conflict, QuotaExceeded
from apps.publications.models import Publication
from apps.publishing import services

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
