"""Editing, pausing, resuming, ending and deleting a series, and what happens to the
publications it already made."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.common.errors import Conflict
from apps.publications.models import Publication
from apps.series.models import Series, SeriesOccurrence
from apps.series.occurrences import series_materialize
from apps.series.services import (
    series_create,
    series_delete,
    series_end,
    series_pause,
    series_resume,
    series_update,
)

pytestmark = pytest.mark.django_db

T0 = datetime(2027, 5, 3, 6, 0, tzinfo=UTC)


@pytest.fixture
def series(workspace_a, template, clock):
    with clock(T0):
        made = series_create(
            workspace=workspace_a,
            name="Daily",
            template=template,
            rrule="FREQ=DAILY",
            dtstart="2027-05-03T10:00",
            timezone="Europe/Warsaw",
            horizon_days=3,
        )
        series_materialize(series=made)
    return made


def texts(series, status: str | None = "scheduled") -> list[str]:
    found = Publication.objects.filter(series_occurrences__series=series)
    if status:
        found = found.filter(status=status)
    return [p.segments.get().text for p in found.order_by("scheduled_at")]


def test_an_edit_leaves_materialized_publications_and_applies_further_out(
    series, workspace_a, account_a, clock
):
    new_template = {
        "segments": [{"text": "New words"}],
        "destinations": [{"account": account_a.pk}],
    }
    with clock(T0):
        series_update(series=series, template=new_template)
        series_materialize(series=series)
    assert texts(series) == ["Weekly update"] * 3

    with clock(T0 + timedelta(days=1)):
        series_materialize(series=series)
    assert texts(series, status=None) == ["Weekly update"] * 3 + ["New words"]


def test_an_edit_applied_to_materialized_ones_replaces_their_publications(series, account_a, clock):
    new_template = {
        "segments": [{"text": "New words"}],
        "destinations": [{"account": account_a.pk}],
    }
    old = list(
        Publication.objects.filter(series_occurrences__series=series).values_list("pk", flat=True)
    )
    with clock(T0 + timedelta(minutes=1)):
        series_update(series=series, template=new_template, apply_to_materialized=True)
        series_materialize(series=series)

    assert texts(series) == ["New words"] * 3
    assert set(Publication.objects.filter(pk__in=old).values_list("status", flat=True)) == {
        "cancelled"
    }
    assert SeriesOccurrence.objects.filter(series=series, status="superseded").count() == 3
    current = SeriesOccurrence.objects.current().filter(series=series)
    assert [o.publication.reference_key for o in current.order_by("scheduled_at")] == [
        f"series-{series.pk}-2027-05-0{day}T10:00:00" for day in (3, 4, 5)
    ]


def test_a_schedule_edit_moves_future_occurrences(series, clock):
    with clock(T0 + timedelta(minutes=1)):
        series_update(series=series, dtstart="2027-05-03T12:30", apply_to_materialized=True)
        series_materialize(series=series)

    times = Publication.objects.filter(
        series_occurrences__series=series, status="scheduled"
    ).order_by("scheduled_at")
    assert [p.scheduled_at.strftime("%d %H:%M") for p in times] == [
        "03 10:30",
        "04 10:30",
        "05 10:30",
    ]


def test_pausing_stops_materializing_and_resuming_skips_the_pause(series, clock):
    with clock(T0):
        series_pause(series=series)
    with clock(T0 + timedelta(days=5)):
        assert not series_materialize(series=series)
        assert texts(series, status="scheduled") == ["Weekly update"] * 3  # already made: kept
        series_resume(series=series)
        series_materialize(series=series)

    local_starts = list(
        SeriesOccurrence.objects.filter(series=series)
        .order_by("scheduled_at")
        .values_list("local_start", flat=True)
    )
    # Made before the pause: the 3rd to the 5th; after it, from the 8th (horizon 3 days).
    assert [s[8:10] for s in local_starts] == ["03", "04", "05", "08", "09", "10"]


def test_pausing_with_cancel_future_withdraws_what_was_scheduled(series, clock):
    with clock(T0):
        series_pause(series=series, cancel_future=True)

    assert texts(series, status="scheduled") == []
    assert texts(series, status="cancelled") == ["Weekly update"] * 3
    with clock(T0 + timedelta(hours=1)):
        series_resume(series=series)
        series_materialize(series=series)
    assert len(texts(series, status="scheduled")) == 3


def test_ending_with_cancel_future_cancels_future_publications(series, clock):
    with clock(T0):
        series_end(series=series, cancel_future=True)

    series.refresh_from_db()
    assert series.status == "ended"
    assert texts(series, status="scheduled") == []
    assert set(SeriesOccurrence.objects.filter(series=series).values_list("status", flat=True)) == {
        "cancelled"
    }
    with pytest.raises(Conflict) as refused:
        series_update(series=series, name="Again")
    assert refused.value.code == "SERIES_ENDED"


def test_ending_without_cancelling_keeps_what_is_scheduled(series, clock):
    with clock(T0):
        series_end(series=series)
        assert not series_materialize(series=series)

    assert texts(series) == ["Weekly update"] * 3


def test_a_started_publication_is_never_withdrawn(series, clock):
    first = Publication.objects.filter(series_occurrences__series=series).order_by("scheduled_at")[
        0
    ]
    Publication.objects.filter(pk=first.pk).update(status="publishing")

    with clock(T0):
        series_end(series=series, cancel_future=True)

    assert Publication.objects.get(pk=first.pk).status == "publishing"


def test_deleting_a_series_cancels_its_future_publications(series, clock):
    pks = list(
        Publication.objects.filter(series_occurrences__series=series).values_list("pk", flat=True)
    )
    with clock(T0):
        series_delete(series=series)

    assert not Series.objects.filter(pk=series.pk).exists()
    assert set(Publication.objects.filter(pk__in=pks).values_list("status", flat=True)) == {
        "cancelled"
    }


def test_pause_and_resume_refuse_the_wrong_state(series, clock):
    with clock(T0), pytest.raises(Conflict) as refused:
        series_resume(series=series)
    assert refused.value.code == "SERIES_NOT_PAUSED"
    with clock(T0):
        series_pause(series=series)
    with clock(T0), pytest.raises(Conflict) as refused:
        series_pause(series=series)
    assert refused.value.code == "SERIES_NOT_ACTIVE"
