from datetime import UTC, datetime

import pytest
from django.urls import reverse

from apps.series.models import Series
from apps.series.occurrences import series_materialize
from apps.series.services import series_create


@pytest.fixture
def series(workspace_a, template, clock):
    with clock(datetime(2027, 5, 3, 6, tzinfo=UTC)):
        made = series_create(
            workspace=workspace_a,
            name="Daily",
            template=template,
            rrule="FREQ=DAILY",
            dtstart="2027-05-03T10:00",
            timezone="Europe/Warsaw",
            horizon_days=2,
        )
        series_materialize(series=made)
    return made


@pytest.mark.parametrize("name", ["series", "seriesoccurrence"])
@pytest.mark.parametrize("params", [{}, {"q": "Daily"}, {"status": "active"}])
def test_changelists_render(admin_client, series, name, params):
    if name == "seriesoccurrence" and params.get("status"):
        params = {"status": "materialized"}

    response = admin_client.get(reverse(f"admin:series_{name}_changelist"), params)

    assert response.status_code == 200


def test_change_page_renders_with_occurrences(admin_client, series):
    response = admin_client.get(reverse("admin:series_series_change", args=[series.pk]))

    assert response.status_code == 200
    assert b"2027-05-03T10:00:00" in response.content


def test_pause_action(admin_client, series):
    admin_client.post(
        reverse("admin:series_series_changelist"),
        {"action": "pause", "_selected_action": [series.pk]},
    )

    assert Series.objects.get(pk=series.pk).status == "paused"
