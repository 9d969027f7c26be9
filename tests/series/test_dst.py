"""A weekly series keeps its wall-clock time across DST changes; its UTC instants move,
and nonexistent or ambiguous local times follow the scheduling policy (DESIGN §8)."""

from datetime import UTC, datetime

import pytest

from apps.publications.models import Publication
from apps.series.occurrences import series_materialize
from apps.series.rules import series_preview
from apps.series.services import series_create

pytestmark = pytest.mark.django_db


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def materialized_times(series) -> list[tuple[str, datetime]]:
    rows = series.occurrences.order_by("scheduled_at").select_related("publication")
    return [(row.local_start, row.publication.scheduled_at) for row in rows]


def test_a_weekly_series_in_warsaw_keeps_9am_across_the_spring_change(workspace_a, template, clock):
    with clock(utc(2027, 3, 10, 12)):
        series = series_create(
            workspace=workspace_a,
            name="Sunday digest",
            template=template,
            rrule="FREQ=WEEKLY;BYDAY=SU",
            dtstart="2027-03-14T09:00",
            timezone="Europe/Warsaw",
            horizon_days=21,
        )
        series_materialize(series=series)

    assert materialized_times(series) == [
        ("2027-03-14T09:00:00", utc(2027, 3, 14, 8)),  # CET, UTC+1
        ("2027-03-21T09:00:00", utc(2027, 3, 21, 8)),
        ("2027-03-28T09:00:00", utc(2027, 3, 28, 7)),  # CEST from this morning, UTC+2
    ]
    publication = Publication.objects.get(reference_key=f"series-{series.pk}-2027-03-28T09:00:00")
    assert publication.timezone == "Europe/Warsaw"
    assert publication.status == "scheduled"


def test_a_weekly_series_in_new_york_keeps_9am_across_both_changes(workspace_a, template, clock):
    with clock(utc(2027, 3, 1, 12)):
        series = series_create(
            workspace=workspace_a,
            name="Monday note",
            template=template,
            rrule="FREQ=WEEKLY;BYDAY=MO",
            dtstart="2027-03-08T09:00",
            timezone="America/New_York",
            horizon_days=15,
        )
        series_materialize(series=series)
    with clock(utc(2027, 10, 26, 12)):
        series.refresh_from_db()
        series.materialized_through = utc(2027, 10, 26, 12)  # skip the months between
        series.save()
        series_materialize(series=series)

    assert materialized_times(series) == [
        ("2027-03-08T09:00:00", utc(2027, 3, 8, 14)),  # EST, UTC-5
        ("2027-03-15T09:00:00", utc(2027, 3, 15, 13)),  # EDT since March 14, UTC-4
        ("2027-11-01T09:00:00", utc(2027, 11, 1, 13)),  # still EDT
        ("2027-11-08T09:00:00", utc(2027, 11, 8, 14)),  # EST since November 7
    ]


def test_a_nonexistent_local_time_moves_forward_by_the_gap(workspace_a, template, clock):
    with clock(utc(2027, 3, 20, 12)):
        series = series_create(
            workspace=workspace_a,
            name="Night owl",
            template=template,
            rrule="FREQ=WEEKLY;BYDAY=SU",
            dtstart="2027-03-21T02:30",
            timezone="Europe/Warsaw",
            horizon_days=15,
        )
        series_materialize(series=series)

    assert materialized_times(series) == [
        ("2027-03-21T02:30:00", utc(2027, 3, 21, 1, 30)),
        ("2027-03-28T02:30:00", utc(2027, 3, 28, 1, 30)),  # 02:30 does not exist: 03:30 CEST
        ("2027-04-04T02:30:00", utc(2027, 4, 4, 0, 30)),
    ]


def test_an_ambiguous_local_time_takes_its_first_occurrence(workspace_a, template, clock):
    with clock(utc(2027, 10, 30, 12)):
        series = series_create(
            workspace=workspace_a,
            name="Night owl",
            template=template,
            rrule="FREQ=WEEKLY;BYDAY=SU",
            dtstart="2027-10-31T01:30",
            timezone="America/New_York",
            horizon_days=3,
        )
        warsaw = series_create(
            workspace=workspace_a,
            name="Nocny",
            template=template,
            rrule="FREQ=WEEKLY;BYDAY=SU",
            dtstart="2027-10-31T02:30",
            timezone="Europe/Warsaw",
            horizon_days=3,
        )
        series_materialize(series=series)
        series_materialize(series=warsaw)

    # Warsaw falls back on October 31: 02:30 happens twice; the first is CEST (UTC+2).
    assert materialized_times(warsaw) == [("2027-10-31T02:30:00", utc(2027, 10, 31, 0, 30))]
    # New York falls back on November 7: 01:30 is EDT (UTC-4) the first time.
    assert materialized_times(series) == [("2027-10-31T01:30:00", utc(2027, 10, 31, 5, 30))]
    preview = series_preview(series=series, limit=2, now=utc(2027, 11, 1))
    assert [(p.local, p.scheduled_at) for p in preview] == [
        ("2027-11-07T01:30:00", utc(2027, 11, 7, 5, 30)),
        ("2027-11-14T01:30:00", utc(2027, 11, 14, 6, 30)),
    ]
