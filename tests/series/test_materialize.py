"""The materializer: occurrences over the horizon become scheduled publications, once;
missed occurrences are published late within the window and skipped after it."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.jobs.models import Job
from apps.publications.models import Publication
from apps.series.jobs import materialize, materialize_organization
from apps.series.models import Series, SeriesOccurrence
from apps.series.occurrences import series_materialize
from apps.series.services import series_create
from tests.factories import JobFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2027, 5, 3, 6, 0, tzinfo=UTC)  # a Monday, 08:00 in Warsaw


def daily(workspace, template, **overrides):
    options = {
        "workspace": workspace,
        "name": "Daily tip",
        "template": template,
        "rrule": "FREQ=DAILY",
        "dtstart": "2027-05-01T10:00",
        "timezone": "Europe/Warsaw",
        "horizon_days": 7,
        **overrides,
    }
    return series_create(**options)


def publications(series) -> list[Publication]:
    return list(
        Publication.objects.filter(reference_key__startswith=f"series-{series.pk}-").order_by(
            "scheduled_at"
        )
    )


def test_it_creates_one_scheduled_publication_per_occurrence_in_the_horizon(
    workspace_a, template, account_a, alice, clock
):
    with clock(T0):
        series = daily(workspace_a, template, created_by=alice)
        result = series_materialize(series=series)

    made = publications(series)
    assert len(made) == 7  # May 3..9 at 10:00 (08:00 UTC); dtstart's earlier days are not made up
    assert [p.pk for p in made] == sorted(result.created)
    first = made[0]
    assert first.reference_key == f"series-{series.pk}-2027-05-03T10:00:00"
    assert first.scheduled_at == datetime(2027, 5, 3, 8, 0, tzinfo=UTC)
    assert first.status == "scheduled"
    assert first.author == alice
    assert [s.text for s in first.segments.all()] == ["Weekly update"]
    assert [r.social_account_id for r in first.renditions.all()] == [account_a.pk]
    rows = SeriesOccurrence.objects.filter(series=series)
    assert {r.status for r in rows} == {"materialized"}
    assert all(r.publication_id for r in rows)
    series.refresh_from_db()
    assert series.materialized_through == T0 + timedelta(days=7)


def test_running_it_again_creates_nothing_twice(workspace_a, template, clock):
    with clock(T0):
        series = daily(workspace_a, template)
        series_materialize(series=series)
        before = [p.pk for p in publications(series)]

        again = series_materialize(series=series)

    assert again.created == []
    assert [p.pk for p in publications(series)] == before
    with clock(T0 + timedelta(days=1)):
        later = series_materialize(series=series)
    assert len(later.created) == 1  # the horizon moved by one day
    assert len(publications(series)) == len(before) + 1


def test_a_lost_cursor_links_the_existing_publications_instead_of_duplicating(
    workspace_a, template, clock
):
    """As if two runs raced, or the occurrence log was lost: the reference key holds."""
    with clock(T0):
        series = daily(workspace_a, template)
        series_materialize(series=series)
        before = [p.pk for p in publications(series)]
        SeriesOccurrence.objects.filter(series=series).delete()
        Series.objects.filter(pk=series.pk).update(materialized_through=T0)

        result = series_materialize(series=series)

    assert result.created == []
    assert [p.pk for p in publications(series)] == before
    linked = SeriesOccurrence.objects.filter(series=series).order_by("scheduled_at")
    assert [o.publication_id for o in linked] == before


def test_a_missed_occurrence_within_the_window_is_published_late(workspace_a, template, clock):
    with clock(T0):
        series = daily(workspace_a, template, late_window_minutes=60, horizon_days=1)
        series_materialize(series=series)  # May 3 10:00 (08:00 UTC) and nothing else
    # The system was down: the cursor stayed before May 4's 10:00; it is now 10:40 there.
    Series.objects.filter(pk=series.pk).update(materialized_through=T0 + timedelta(hours=20))
    now = datetime(2027, 5, 4, 8, 40, tzinfo=UTC)
    with clock(now):
        result = series_materialize(series=series)

    occurrence = SeriesOccurrence.objects.get(series=series, local_start="2027-05-04T10:00:00")
    assert occurrence.status == "materialized"
    assert occurrence.is_late is True
    assert occurrence.scheduled_at == datetime(2027, 5, 4, 8, 0, tzinfo=UTC)  # its own time
    assert occurrence.publication.scheduled_at == now  # goes out at once
    assert occurrence.publication.status == "scheduled"
    assert result.late == 1


def test_a_missed_occurrence_past_the_window_is_skipped(workspace_a, template, clock):
    with clock(T0):
        series = daily(workspace_a, template, late_window_minutes=30, horizon_days=1)
    Series.objects.filter(pk=series.pk).update(materialized_through=T0)
    with clock(datetime(2027, 5, 3, 9, 0, tzinfo=UTC)):  # an hour after 10:00 in Warsaw
        result = series_materialize(series=series)

    occurrence = SeriesOccurrence.objects.get(series=series, local_start="2027-05-03T10:00:00")
    assert occurrence.status == "skipped"
    assert occurrence.publication is None
    assert occurrence.error["code"] == "MISSED"
    assert result.skipped == 1
    assert not Publication.objects.filter(
        reference_key=f"series-{series.pk}-2027-05-03T10:00:00"
    ).exists()


def test_a_publication_not_sent_by_the_end_of_its_window_is_cancelled_and_skipped(
    workspace_a, template, clock
):
    """The workers were down past the window: the next run withdraws the post."""
    with clock(T0):
        series = daily(workspace_a, template, late_window_minutes=30, horizon_days=1)
        series_materialize(series=series)
    occurrence = SeriesOccurrence.objects.get(series=series, local_start="2027-05-03T10:00:00")

    with clock(datetime(2027, 5, 3, 8, 45, tzinfo=UTC)):
        result = series_materialize(series=series)

    occurrence.refresh_from_db()
    assert occurrence.status == "skipped"
    assert occurrence.publication.status == "cancelled"
    assert result.expired == 1


def test_count_bounds_the_series_and_ends_it(workspace_a, template, clock):
    with clock(T0):
        series = daily(workspace_a, template, dtstart="2027-05-03T10:00", count=3, horizon_days=30)
        series_materialize(series=series)

    assert len(publications(series)) == 3
    series.refresh_from_db()
    assert series.status == "ended"
    assert series.ended_at == T0


def test_until_bounds_the_series(workspace_a, template, clock):
    with clock(T0):
        series = daily(workspace_a, template, until="2027-05-05", horizon_days=30)
        series_materialize(series=series)

    assert [p.scheduled_at.day for p in publications(series)] == [3, 4, 5]
    series.refresh_from_db()
    assert series.status == "ended"


def test_an_occurrence_that_cannot_be_made_is_recorded_and_tried_again(
    workspace_a, template, account_a, clock
):
    account_a.status = "disabled"
    account_a.save()
    with clock(T0):
        series = daily(workspace_a, template, horizon_days=1)
        result = series_materialize(series=series)
    occurrence = SeriesOccurrence.objects.get(series=series)
    assert occurrence.status == "failed"
    assert result.failed == 1
    assert "disabled" in str(occurrence.error)

    account_a.status = "connected"
    account_a.save()
    with clock(T0 + timedelta(minutes=10)):
        series_materialize(series=series)
    occurrence.refresh_from_db()
    assert occurrence.status == "materialized"
    assert occurrence.publication.status == "scheduled"


def test_the_periodic_job_materializes_every_active_series(workspace_a, template, clock):
    with clock(T0):
        active = daily(workspace_a, template, horizon_days=2)
        paused = daily(workspace_a, template, horizon_days=2)
        Series.objects.filter(pk=paused.pk).update(status="paused")

        materialize(JobFactory(type="series.materialize"))
        job = Job.objects.get(type="series.materialize_organization")
        assert job.payload == {"organization_id": workspace_a.organization_id, "after_series_id": 0}
        materialize_organization(job)

    assert len(publications(active)) == 2
    assert publications(paused) == []


def test_creating_a_series_queues_its_first_materialization(workspace_a, template, clock):
    with clock(T0):
        series = daily(workspace_a, template)

    job = Job.objects.get(type="series.materialize_one")
    assert job.payload == {"series_id": series.pk}
    assert job.workspace_id == workspace_a.pk
