"""What a series accepts: RFC 5545 rules (one RRULE, no DTSTART/COUNT/UNTIL inside, at
most hourly, possible), wall-clock start times, zones, and a template like
publication_create's."""

from datetime import UTC, datetime

import pytest

from apps.common.errors import NotFound, ValidationFailed
from apps.series.models import Series
from apps.series.rules import schedule_preview
from apps.series.services import series_create

pytestmark = pytest.mark.django_db


def create(workspace, template, **overrides):
    options = {
        "workspace": workspace,
        "name": "Series",
        "template": template,
        "rrule": "FREQ=WEEKLY;BYDAY=MO,WE",
        "dtstart": "2027-05-03T09:00",
        "timezone": "Europe/Warsaw",
        **overrides,
    }
    return series_create(**options)


@pytest.mark.parametrize(
    ("rrule", "message"),
    [
        ("", "required"),
        ("FREQ=SOMETIMES", "FREQ"),
        ("FREQ=MINUTELY", "FREQ"),
        ("FREQ=WEEKLY;BYDAY=XX", "RFC 5545"),
        ("FREQ=WEEKLY;COUNT=3", "count"),
        ("FREQ=DAILY;UNTIL=20270101T000000Z", "until"),
        ("DTSTART:20270101T090000\nRRULE:FREQ=DAILY", "One RRULE"),
        ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "Never"),
        ("FREQ=HOURLY;BYMINUTE=0,30", "an hour"),
    ],
)
def test_bad_rules_are_refused(workspace_a, template, rrule, message):
    with pytest.raises(ValidationFailed) as refused:
        create(workspace_a, template, rrule=rrule)

    assert refused.value.code == "INVALID_RRULE"
    assert message.lower() in (refused.value.message + str(refused.value.details)).lower()
    assert not Series.objects.exists()


def test_a_rule_may_carry_the_rrule_prefix_and_lower_case(workspace_a, template):
    series = create(workspace_a, template, rrule="RRULE:freq=weekly;byday=fr")

    assert series.rrule == "FREQ=WEEKLY;BYDAY=FR"
    assert series.dtstart == "2027-05-03T09:00:00"


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("dtstart", "2027-05-03T09:00+02:00", "LOCAL_TIME_HAS_OFFSET"),
        ("dtstart", "next monday", "INVALID_DATETIME"),
        ("timezone", "Mars/Olympus", "INVALID_TIMEZONE"),
        ("count", 0, "VALIDATION_ERROR"),
        ("late_window_minutes", -5, "VALIDATION_ERROR"),
        ("horizon_days", 400, "VALIDATION_ERROR"),
    ],
)
def test_bad_schedules_are_refused(workspace_a, template, field, value, code):
    with pytest.raises(ValidationFailed) as refused:
        create(workspace_a, template, **{field: value})

    assert refused.value.code == code


def test_count_and_until_together_are_refused(workspace_a, template):
    with pytest.raises(ValidationFailed):
        create(workspace_a, template, count=3, until="2027-06-01")


def test_the_template_is_checked_like_a_publication(workspace_a, template, account_a):
    with pytest.raises(ValidationFailed) as refused:
        create(workspace_a, {"segments": [{"text": ""}], "destinations": []})
    assert "template.segments.0.text" in refused.value.details
    assert "template.destinations" in refused.value.details

    with pytest.raises(ValidationFailed) as refused:
        create(
            workspace_a,
            {
                "segments": ["hi"],
                "destinations": [{"account": account_a.pk, "scheduled_at": "2027-01-01T00:00Z"}],
            },
        )
    assert "template.destinations.0.scheduled_at" in refused.value.details


def test_another_workspaces_account_is_not_found(workspace_a, workspace_b):
    from tests.factories import SocialAccountFactory

    outsider = SocialAccountFactory(workspace=workspace_b)
    with pytest.raises(NotFound) as refused:
        create(workspace_a, {"segments": ["hi"], "destinations": [{"account": outsider.pk}]})

    assert "template.destinations.0.account" in refused.value.details


def test_the_workspace_zone_is_the_default(workspace_a, template):
    workspace_a.default_timezone = "America/New_York"
    workspace_a.save()

    series = create(workspace_a, template, timezone=None)

    assert series.timezone == "America/New_York"


def test_an_unsaved_schedule_can_be_previewed():
    found = schedule_preview(
        rrule="FREQ=MONTHLY;BYMONTHDAY=-1",
        dtstart="2027-01-31T18:00",
        timezone_name="America/New_York",
        limit=3,
        now=datetime(2027, 1, 1, tzinfo=UTC),
    )

    assert [(o.local_iso, o.utc.isoformat()) for o in found] == [
        ("2027-01-31T18:00:00", "2027-01-31T23:00:00+00:00"),
        ("2027-02-28T18:00:00", "2027-02-28T23:00:00+00:00"),
        ("2027-03-31T18:00:00", "2027-03-31T22:00:00+00:00"),
    ]
