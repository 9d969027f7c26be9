"""The Series page: create a series (with a preview of its next occurrences first), see
its next occurrences, pause, resume and delete it; viewers read, outsiders get 404."""

from datetime import UTC, datetime

import pytest
from django.test import Client

from apps.series.models import Series
from apps.series.services import series_create

pytestmark = pytest.mark.django_db

NOW = datetime(2027, 3, 20, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _frozen(clock):
    with clock(NOW):
        yield


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def base(workspace) -> str:
    return f"/w/{workspace.slug}/series/"


def form(account, **overrides):
    return {
        "name": "Sunday digest",
        "text": "This week",
        "accounts": [account.pk],
        "rrule": "FREQ=WEEKLY;BYDAY=SU",
        "dtstart": "2027-03-21T09:00",
        "timezone": "Europe/Warsaw",
        "late_window_minutes": "60",
        **overrides,
    }


@pytest.fixture
def series(workspace_a, template):
    return series_create(
        workspace=workspace_a,
        name="Mine",
        template=template,
        rrule="FREQ=WEEKLY;BYDAY=SU",
        dtstart="2027-03-21T09:00",
        timezone="Europe/Warsaw",
    )


def test_the_preview_shows_the_next_occurrences_across_dst_without_creating(
    bob, workspace_a, account_a
):
    response = login(bob).post(f"{base(workspace_a)}new/", {**form(account_a), "preview": "1"})

    assert response.status_code == 200
    page = response.content.decode()
    assert "2027-03-21T09:00:00" in page
    assert "2027-03-21 08:00 UTC" in page  # CET
    assert "2027-03-28 07:00 UTC" in page  # CEST
    assert not Series.objects.exists()


def test_an_editor_creates_a_series(bob, workspace_a, account_a):
    response = login(bob).post(f"{base(workspace_a)}new/", form(account_a))

    series = Series.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"{base(workspace_a)}{series.pk}/"
    assert series.template == {
        "segments": [{"text": "This week"}],
        "destinations": [{"account": account_a.pk}],
    }
    assert series.created_by == bob
    page = login(bob).get(response["Location"]).content.decode()
    assert "2027-03-28T09:00:00" in page


def test_a_bad_rule_is_shown_on_the_form(bob, workspace_a, account_a):
    response = login(bob).post(f"{base(workspace_a)}new/", form(account_a, rrule="FREQ=OFTEN"))

    assert response.status_code == 400
    assert "FREQ must be one of" in response.content.decode()
    assert not Series.objects.exists()


def test_pause_resume_and_delete(bob, workspace_a, series):
    client = login(bob)
    client.post(f"{base(workspace_a)}{series.pk}/pause/")
    series.refresh_from_db()
    assert series.status == "paused"
    client.post(f"{base(workspace_a)}{series.pk}/resume/")
    series.refresh_from_db()
    assert series.status == "active"

    response = client.post(f"{base(workspace_a)}{series.pk}/delete/")
    assert response.status_code == 302
    assert not Series.objects.exists()


def test_a_viewer_reads_but_cannot_change(vera, workspace_a, series, account_a):
    client = login(vera)

    assert client.get(base(workspace_a)).status_code == 200
    assert client.get(f"{base(workspace_a)}{series.pk}/").status_code == 200
    assert client.post(f"{base(workspace_a)}{series.pk}/pause/").status_code == 403
    assert client.post(f"{base(workspace_a)}new/", form(account_a)).status_code == 403
    series.refresh_from_db()
    assert series.status == "active"


def test_another_workspaces_series_is_404(charlie, workspace_b, workspace_a, series):
    client = login(charlie)

    assert client.get(f"{base(workspace_b)}{series.pk}/").status_code == 404
    for action in ["pause", "resume", "delete"]:
        assert client.post(f"{base(workspace_b)}{series.pk}/{action}/").status_code == 404
    assert client.get(base(workspace_a)).status_code == 404
    assert Series.objects.filter(pk=series.pk, status="active").exists()


def test_occurrence_times_are_shown_as_the_app_shows_times(bob, workspace_a, series):
    page = login(bob).get(f"{base(workspace_a)}{series.pk}/").content.decode()

    assert ">Sun 28 Mar 2027, 09:00</time>" in page  # wall-clock time in Europe/Warsaw
    assert ">2027-03-28T09:00:00<" not in page
    assert "Sun 21 Mar 2027, 09:00</time> (Europe/Warsaw)" in page  # its first time


def test_the_form_preview_shows_wall_clock_times_in_the_series_zone(bob, workspace_a, account_a):
    response = login(bob).post(f"{base(workspace_a)}new/", {**form(account_a), "preview": "1"})

    assert "Sunday 21 March 2027, 09:00</time> (Europe/Warsaw)" in response.content.decode()
