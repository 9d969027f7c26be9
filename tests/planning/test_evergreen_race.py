"""Two recyclers at once on one evergreen post make one re-share: the one that finds the
post's row taken passes it over, and the next look finds the turn made (committed rows,
two database sessions)."""

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction

from apps.planning.evergreen import EvergreenSettings, evergreen_mark
from apps.planning.models import EvergreenPost, EvergreenShare
from apps.planning.recycling import evergreen_recycle, evergreen_recycle_due
from apps.publications.models import Publication
from apps.publishing.services import publication_create

pytestmark = pytest.mark.django_db(transaction=True)

NOW = datetime(2027, 1, 1, 10, tzinfo=UTC)


def test_a_recycler_finding_the_post_taken_makes_nothing_and_one_turn_is_made(
    workspace_a, alice, news, set_slots, clock
):
    set_slots([(0, "09:00"), (1, "09:00")])
    with clock(NOW):
        source = publication_create(
            workspace=workspace_a,
            author=alice,
            segments=[{"text": "Our guide"}],
            destinations=[{"account": news.pk}],
        )
        [row] = evergreen_mark(
            workspace=workspace_a,
            publications=[source],
            actor=alice,
            settings=EvergreenSettings(every_days=1),
        )
        held, release = threading.Event(), threading.Event()

        def other_recycler() -> None:
            # Holds the post's row as a recycler in the middle of its look would.
            try:
                with transaction.atomic():
                    EvergreenPost.objects.select_for_update().get(pk=row.pk)
                    held.set()
                    release.wait(10)
            finally:
                connection.close()

        thread = threading.Thread(target=other_recycler)
        thread.start()
        assert held.wait(10)
        try:
            passed_over = evergreen_recycle(evergreen=row)
            swept = evergreen_recycle_due()
        finally:
            release.set()
            thread.join(10)

        assert passed_over.note["code"] == "BUSY" and swept == 0
        assert not EvergreenShare.objects.exists()

        made = evergreen_recycle_due()
        again = evergreen_recycle_due(now=NOW + timedelta(minutes=1))

    assert (made, again) == (1, 0)
    assert EvergreenShare.objects.count() == 1
    assert Publication.objects.filter(reference_key__startswith="evergreen-").count() == 1
