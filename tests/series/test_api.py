"""/api/v1/series: CRUD, previews, pause, resume and end; scopes, the error envelope and
another workspace's ids (404)."""

from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from apps.jobs.models import Job
from apps.series.models import Series
from apps.series.services import series_create
from tests.api.helpers import bearer, error
from tests.factories import SocialAccountFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/series"
NOW = datetime(2027, 5, 3, 6, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _frozen(clock):
    cache.clear()  # per-token rate limits
    with clock(NOW):
        yield


@pytest.fixture
def client_with(workspace_a, make_token):
    def make(*scopes):
        return bearer(make_token(workspace_a, scopes=list(scopes)).clear)

    return make


def body(account, **overrides):
    return {
        "name": "Weekly digest",
        "template": {"segments": [{"text": "Digest"}], "destinations": [{"account": account.pk}]},
        "rrule": "FREQ=WEEKLY;BYDAY=MO",
        "dtstart": "2027-05-10T09:00",
        "timezone": "Europe/Warsaw",
        **overrides,
    }


@pytest.fixture
def series_a(workspace_a, template):
    return series_create(
        workspace=workspace_a,
        name="Mine",
        template=template,
        rrule="FREQ=DAILY",
        dtstart="2027-05-03T10:00",
        timezone="Europe/Warsaw",
    )


@pytest.fixture
def series_b(workspace_b):
    account = SocialAccountFactory(workspace=workspace_b)
    return series_create(
        workspace=workspace_b,
        name="Theirs",
        template={"segments": ["Hi"], "destinations": [account.pk]},
        rrule="FREQ=DAILY",
        dtstart="2027-05-03T10:00",
        timezone="UTC",
    )


def test_it_creates_a_series_and_queues_its_materialization(api_a, workspace_a, account_a):
    response = api_a.post(URL, body(account_a, late_window_minutes=30), format="json")

    assert response.status_code == 201
    data = response.json()
    series = Series.objects.get(pk=data["id"])
    assert series.workspace == workspace_a
    assert data["status"] == "active"
    assert data["dtstart"] == "2027-05-10T09:00:00"
    assert data["late_window_minutes"] == 30
    assert data["horizon_days"] == 60
    assert Job.objects.filter(type="series.materialize_one", payload={"series_id": series.pk})


@pytest.mark.parametrize(
    ("overrides", "code", "field"),
    [
        ({"rrule": "FREQ=SOMETIMES"}, "INVALID_RRULE", "rrule"),
        ({"dtstart": "2027-05-10T09:00Z"}, "LOCAL_TIME_HAS_OFFSET", "dtstart"),
        ({"timezone": "Nowhere/Land"}, "INVALID_TIMEZONE", "timezone"),
        ({"template": {"segments": [], "destinations": []}}, None, "template.segments"),
        ({"horizon_days": 0}, None, "horizon_days"),
        ({"colour": "blue"}, None, "colour"),
    ],
)
def test_bad_bodies_get_the_error_envelope(api_a, account_a, overrides, code, field):
    response = api_a.post(URL, body(account_a, **overrides), format="json")

    assert response.status_code == 400
    found = error(response)
    if code:
        assert found["code"] == code
    assert field in found["details"]
    assert not Series.objects.exists()


def test_it_previews_a_saved_series_and_an_unsaved_schedule(api_a, series_a):
    response = api_a.get(f"{URL}/{series_a.pk}/preview?limit=2")

    assert response.status_code == 200
    assert response.json() == [
        {
            "local": "2027-05-03T10:00:00",
            "scheduled_at": "2027-05-03T08:00:00Z",
            "status": None,
            "publication": None,
        },
        {
            "local": "2027-05-04T10:00:00",
            "scheduled_at": "2027-05-04T08:00:00Z",
            "status": None,
            "publication": None,
        },
    ]
    unsaved = api_a.post(
        f"{URL}/preview",
        {"rrule": "FREQ=WEEKLY", "dtstart": "2027-03-21T09:00", "timezone": "Europe/Warsaw"},
        format="json",
    )
    assert unsaved.status_code == 200
    assert [o["scheduled_at"] for o in unsaved.json()[:2]] == [
        "2027-05-09T07:00:00Z",
        "2027-05-16T07:00:00Z",
    ]


def test_pause_resume_end_and_edit(api_a, series_a):
    paused = api_a.post(f"{URL}/{series_a.pk}/pause", {"cancel_future": True}, format="json")
    assert paused.status_code == 200
    assert paused.json()["status"] == "paused"
    again = api_a.post(f"{URL}/{series_a.pk}/pause", {}, format="json")
    assert again.status_code == 409
    assert error(again)["code"] == "SERIES_NOT_ACTIVE"

    resumed = api_a.post(f"{URL}/{series_a.pk}/resume")
    assert resumed.json()["status"] == "active"

    edited = api_a.patch(
        f"{URL}/{series_a.pk}",
        {"name": "Renamed", "rrule": "FREQ=WEEKLY;BYDAY=FR", "apply_to_materialized": True},
        format="json",
    )
    assert edited.status_code == 200
    assert edited.json()["name"] == "Renamed"
    assert edited.json()["rrule"] == "FREQ=WEEKLY;BYDAY=FR"

    ended = api_a.post(f"{URL}/{series_a.pk}/end", {"cancel_future": True}, format="json")
    assert ended.json()["status"] == "ended"
    late_edit = api_a.patch(f"{URL}/{series_a.pk}", {"name": "x"}, format="json")
    assert late_edit.status_code == 409
    assert error(late_edit)["code"] == "SERIES_ENDED"


def test_it_deletes_a_series(api_a, series_a):
    response = api_a.delete(f"{URL}/{series_a.pk}")

    assert response.status_code == 204
    assert not Series.objects.filter(pk=series_a.pk).exists()


def _calls(series):
    base = f"{URL}/{series.pk}"
    return [
        ("get", base, None),
        ("get", f"{base}/preview", None),
        ("patch", base, {"name": "x"}),
        ("post", f"{base}/pause", {}),
        ("post", f"{base}/resume", None),
        ("post", f"{base}/end", {}),
        ("delete", base, None),
    ]


def test_another_workspaces_series_are_404(api_a, series_a, series_b):
    for method, path, data in _calls(series_b):
        response = getattr(api_a, method)(path, data, format="json")
        assert response.status_code == 404, (method, path)
        assert error(response)["code"] == "NOT_FOUND"
    series_b.refresh_from_db()
    assert series_b.status == "active"
    assert [s["id"] for s in api_a.get(URL).json()["results"]] == [series_a.pk]


def test_a_template_naming_another_workspaces_account_is_404(api_a, series_b):
    account_b = series_b.template["destinations"][0]
    response = api_a.post(
        URL,
        {
            "name": "x",
            "template": {"segments": ["Hi"], "destinations": [account_b]},
            "rrule": "FREQ=DAILY",
            "dtstart": "2027-05-03T10:00",
        },
        format="json",
    )

    assert response.status_code == 404
    assert "template.destinations.0.account" in error(response)["details"]


def test_scopes(client_with, account_a, series_a):
    assert APIClient().get(URL).status_code == 401
    reader = client_with("read")
    assert reader.get(URL).status_code == 200
    assert reader.get(f"{URL}/{series_a.pk}/preview").status_code == 200
    writer = client_with("read", "write")  # making scheduled posts needs publish too
    for client in (reader, writer):
        for method, path, data in _calls(series_a):
            if method == "get":
                continue
            response = getattr(client, method)(path, data, format="json")
            assert response.status_code == 403, (method, path)
            assert error(response)["code"] == "INSUFFICIENT_SCOPE"
        assert client.post(URL, body(account_a), format="json").status_code == 403
