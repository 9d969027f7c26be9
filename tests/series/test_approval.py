"""A series schedules its posts by itself: where editors' posts need an admin's approval,
an editor cannot start one, change what or when it posts, or resume it (through the
services, the API or the web form); an admin can, and anyone may pause, end or rename."""

from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from django.test import Client

from apps.accounts.services import api_token_create
from apps.approvals.models import ApprovalRule
from apps.approvals.rule import ApprovalRequired
from apps.series.models import Series
from apps.series.services import series_create, series_pause, series_resume, series_update
from tests.api.helpers import bearer, error
from tests.series.test_api import body
from tests.series.test_web import form

pytestmark = pytest.mark.django_db

NOW = datetime(2027, 5, 3, 6, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _frozen(clock):
    cache.clear()
    with clock(NOW):
        yield


@pytest.fixture
def rule(workspace_a):
    return ApprovalRule.objects.create(workspace=workspace_a, required=True)


def _token(workspace, person):
    scopes = ["read", "write", "publish"]
    return bearer(
        api_token_create(
            workspace=workspace, name=person.email, scopes=scopes, created_by=person
        ).clear
    )


def _create(workspace, template, created_by):
    return series_create(
        workspace=workspace,
        name="Daily",
        template=template,
        rrule="FREQ=DAILY",
        dtstart="2027-05-03T10:00",
        timezone="Europe/Warsaw",
        created_by=created_by,
    )


def test_an_editor_cannot_start_change_or_resume_a_series(rule, workspace_a, template, alice, bob):
    with pytest.raises(ApprovalRequired) as refused:
        _create(workspace_a, template, bob)
    assert refused.value.code == "APPROVAL_REQUIRED" and refused.value.http_status == 403
    assert not Series.objects.exists()  # nothing stored

    series = _create(workspace_a, template, alice)  # the admin approves by creating it
    for changes in (
        {"rrule": "FREQ=HOURLY"},
        {"template": template},
        {"dtstart": "2027-05-04T10:00"},
    ):
        with pytest.raises(ApprovalRequired):
            series_update(series=series, actor=bob, **changes)
    series.refresh_from_db()
    assert series.rrule == "FREQ=DAILY"

    renamed = series_update(series=series, actor=bob, name="Daily digest")
    assert renamed.name == "Daily digest"
    series_pause(series=series)  # taking posts away needs no approval
    with pytest.raises(ApprovalRequired):
        series_resume(series=series, actor=bob)
    assert series_resume(series=series, actor=alice).status == Series.Status.ACTIVE


def test_without_the_rule_an_editor_runs_series(workspace_a, template, bob):
    series = _create(workspace_a, template, bob)
    assert series_update(series=series, actor=bob, rrule="FREQ=WEEKLY").rrule == "FREQ=WEEKLY"


def test_the_api_refuses_an_editors_token_with_the_envelope(
    rule, workspace_a, account_a, alice, bob
):
    editor = _token(workspace_a, bob)
    refused = editor.post("/api/v1/series", body(account_a), format="json")
    assert refused.status_code == 403
    assert error(refused)["code"] == "APPROVAL_REQUIRED"
    assert not Series.objects.exists()

    admin = _token(workspace_a, alice)
    created = admin.post("/api/v1/series", body(account_a), format="json")
    assert created.status_code == 201
    url = f"/api/v1/series/{created.json()['id']}"
    assert (
        error(editor.patch(url, {"rrule": "FREQ=DAILY"}, format="json"))["code"]
        == "APPROVAL_REQUIRED"
    )
    assert editor.post(f"{url}/pause").status_code == 200
    assert error(editor.post(f"{url}/resume"))["code"] == "APPROVAL_REQUIRED"
    assert admin.post(f"{url}/resume").json()["status"] == "active"


def test_the_web_form_says_why_and_keeps_the_input(rule, workspace_a, account_a, bob):
    client = Client()
    client.force_login(bob)
    response = client.post(
        f"/w/{workspace_a.slug}/series/new/", form(account_a, dtstart="2027-05-04T09:00")
    )
    assert response.status_code in (400, 403)
    page = response.content.decode()
    assert "an admin creates, changes or resumes it" in page
    assert "Sunday digest" in page  # what was typed is still on the form
    assert not Series.objects.exists()
