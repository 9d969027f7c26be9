"""Expanding a series costs what its window costs, never its age: dtstart at most a year
back, a budget per expansion, rules restarted near the window, and one materializer job
per organization."""

import time
from datetime import UTC, datetime, timedelta

import pytest
from dateutil.rrule import rrulestr
from django.core.cache import cache

from apps.common.errors import ValidationFailed
from apps.jobs.models import Job
from apps.publications.scheduling import local_to_utc
from apps.series import recurrence
from apps.series.jobs import materialize, materialize_organization
from apps.series.models import Series, SeriesOccurrence
from apps.series.occurrences import organization_materialize, series_materialize
from apps.series.rules import schedule_preview, series_preview
from apps.series.services import series_create
from tests.api.helpers import bearer, error
from tests.factories import JobFactory, SocialAccountFactory

pytestmark = pytest.mark.django_db

NOW = datetime(2027, 5, 3, 6, 0, tzinfo=UTC)
WARSAW = recurrence.get_zone("Europe/Warsaw")


def hourly(workspace, template, **overrides):
    options = {
        "workspace": workspace,
        "name": "Hourly",
        "template": template,
        "rrule": "FREQ=HOURLY",
        "dtstart": "2027-05-03T09:00",
        "timezone": "Europe/Warsaw",
        "horizon_days": 2,
        **overrides,
    }
    return series_create(**options)


def test_a_read_token_previewing_an_hourly_rule_from_1926_gets_a_fast_clear_error(
    workspace_a, make_token
):
    cache.clear()
    client = bearer(make_token(workspace_a, scopes=["read"]).clear)
    started = time.monotonic()
    response = client.post(
        "/api/v1/series/preview",
        {"rrule": "FREQ=HOURLY", "dtstart": "1926-01-01T00:00", "timezone": "Europe/Warsaw"},
        format="json",
    )
    elapsed = time.monotonic() - started

    assert response.status_code == 400
    body = error(response)
    assert body["code"] == "DTSTART_TOO_OLD"
    earliest = body["details"]["earliest"]
    assert earliest in body["message"]
    assert "dtstart" in body["details"]
    assert elapsed < 1.0


def test_the_earliest_accepted_dtstart_is_a_year_ago_in_the_zone():
    a_year_ago = NOW - timedelta(days=365)  # 2026-05-03 06:00 UTC = 08:00 in Warsaw
    ok = schedule_preview(
        rrule="FREQ=DAILY", dtstart="2026-05-03T08:00", timezone_name="Europe/Warsaw", now=NOW
    )
    assert ok[0].utc > NOW
    with pytest.raises(ValidationFailed) as refused:
        schedule_preview(
            rrule="FREQ=DAILY", dtstart="2026-05-03T07:59", timezone_name="Europe/Warsaw", now=NOW
        )
    assert refused.value.code == "DTSTART_TOO_OLD"
    assert refused.value.details["earliest"] == "2026-05-03T08:00"
    assert a_year_ago.astimezone(WARSAW).hour == 8


def test_an_old_series_edited_without_a_new_dtstart_is_not_refused(workspace_a, template, clock):
    from apps.series.services import series_update

    with clock(NOW):
        series = hourly(workspace_a, template)
    with clock(NOW + timedelta(days=800)):
        series_update(series=series, timezone="Europe/Berlin")
        with pytest.raises(ValidationFailed):
            series_update(series=series, dtstart="2027-05-03T10:00")
    series.refresh_from_db()
    assert series.timezone == "Europe/Berlin"


def test_a_preview_past_the_iteration_budget_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(recurrence, "MAX_ITERATIONS", 5)
    with pytest.raises(ValidationFailed) as refused:
        schedule_preview(
            rrule="FREQ=DAILY",
            dtstart="2027-05-03T09:00",
            timezone_name="Europe/Warsaw",
            limit=50,
            now=NOW,
        )
    assert refused.value.code == "RULE_TOO_COSTLY"


def test_the_materializer_past_the_budget_makes_a_bounded_part_and_the_rest_next_run(
    workspace_a, template, clock, monkeypatch
):
    with clock(NOW):
        series = hourly(workspace_a, template)
        # Room for the day of margin walked before the cursor, and a few more.
        monkeypatch.setattr(recurrence, "MAX_ITERATIONS", 40)
        first = series_materialize(series=series)
        series.refresh_from_db()
        assert 0 < len(first.created) <= 40
        assert series.materialized_through < NOW + timedelta(days=2)
        second = series_materialize(series=series)

    assert len(second.created) > 0
    made = list(
        SeriesOccurrence.objects.filter(series=series).values_list("local_start", flat=True)
    )
    assert len(made) == len(set(made)) == len(first.created) + len(second.created)


def test_an_old_series_expands_in_its_window_cost_not_its_age(workspace_a, template, clock):
    with clock(NOW):
        series = hourly(workspace_a, template, dtstart="2026-06-01T09:30")
    # Forty years later the rule is still walked from near the window, and the phase
    # (half past, every hour) is kept.
    later = NOW + timedelta(days=40 * 365)
    started = time.monotonic()
    items = series_preview(series=series, limit=3, now=later)
    assert time.monotonic() - started < recurrence.MAX_SECONDS
    assert [i.local[-5:] for i in items] == ["30:00"] * 3
    assert items[0].scheduled_at > later


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=HOURLY;INTERVAL=5",
        "FREQ=DAILY;INTERVAL=3;BYHOUR=8,20",
        "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,FR;WKST=SU",
        "FREQ=WEEKLY;INTERVAL=3",
        "FREQ=MONTHLY;INTERVAL=5",
        "FREQ=MONTHLY;BYDAY=-1FR",
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
        "FREQ=YEARLY;INTERVAL=3",
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
        "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
    ],
)
def test_a_restarted_rule_gives_what_the_rule_gives_from_its_dtstart(rule):
    dtstart = datetime(2001, 1, 31, 9, 15)
    after, through = datetime(2031, 3, 1, tzinfo=UTC), datetime(2035, 3, 1, tzinfo=UTC)
    moved = recurrence.expand(
        rule, dtstart=dtstart, count=None, zone=WARSAW, after=after, through=through, limit=40
    )
    # dateutil walking the rule from its dtstart, without any budget.
    walked = rrulestr(f"RRULE:{rule}", dtstart=dtstart).between(
        datetime(2031, 2, 27), datetime(2035, 3, 2), inc=True
    )
    expected = [local for local in walked if after < local_to_utc(local, WARSAW) <= through][:40]
    assert moved.complete
    assert expected
    assert [o.local for o in moved.occurrences] == expected


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30",
        "FREQ=HOURLY;BYMONTH=4;BYMONTHDAY=31",
        "FREQ=WEEKLY;BYDAY=MO;BYSETPOS=2",
        "FREQ=MONTHLY;BYDAY=MO;BYSETPOS=7",
    ],
)
def test_a_rule_that_never_happens_is_refused_quickly(rule):
    started = time.monotonic()
    with pytest.raises(ValidationFailed) as refused:
        schedule_preview(
            rrule=rule, dtstart="2027-05-03T09:00", timezone_name="Europe/Warsaw", now=NOW
        )
    assert refused.value.code == "INVALID_RRULE"
    assert time.monotonic() - started < 0.5


def test_bysetpos_on_an_hourly_rule_and_a_huge_count_are_refused():
    with pytest.raises(ValidationFailed, match="BYSETPOS"):
        recurrence.build_rule("FREQ=HOURLY;BYSETPOS=2", dtstart=datetime(2027, 5, 3))
    with pytest.raises(ValidationFailed, match="count"):
        schedule_preview(
            rrule="FREQ=DAILY",
            dtstart="2027-05-03T09:00",
            timezone_name="Europe/Warsaw",
            count=recurrence.MAX_COUNT + 1,
            now=NOW,
        )


def test_one_organizations_huge_series_does_not_make_another_organizations_late(
    workspace_a, workspace_b, template, clock, monkeypatch
):
    account_b = SocialAccountFactory(workspace=workspace_b, platform="sandbox", handle="b")
    template_b = {"segments": [{"text": "B"}], "destinations": [{"account": account_b.pk}]}
    with clock(NOW):
        huge = [hourly(workspace_a, template, horizon_days=366) for _ in range(3)]
        on_time = series_create(
            workspace=workspace_b,
            name="B daily",
            template=template_b,
            rrule="FREQ=DAILY",
            dtstart="2027-05-03T08:30",  # 06:30 UTC: due half an hour from now
            timezone="Europe/Warsaw",
            horizon_days=1,
        )
        Job.objects.all().delete()
        materialize(JobFactory(type="series.materialize"))
        jobs = {
            j.payload["organization_id"]: j
            for j in Job.objects.filter(type="series.materialize_organization")
        }
        assert set(jobs) == {workspace_a.organization_id, workspace_b.organization_id}
        # Organization A's job has no time for more than one series per run.
        monkeypatch.setattr("apps.series.occurrences.ORGANIZATION_RUN_SECONDS", 0.0)
        run_a = organization_materialize(organization_id=workspace_a.organization_id, budget_s=0.0)
        materialize_organization(jobs[workspace_b.organization_id])

    assert run_a.resume_after == huge[0].pk
    occurrence = SeriesOccurrence.objects.get(series=on_time)
    assert occurrence.status == "materialized"
    assert occurrence.scheduled_at == datetime(2027, 5, 3, 6, 30, tzinfo=UTC)
    assert not occurrence.is_late
    assert occurrence.publication.scheduled_at == occurrence.scheduled_at
    assert not SeriesOccurrence.objects.filter(series=huge[1]).exists()


def test_an_organization_job_out_of_time_queues_its_continuation(
    workspace_a, template, clock, monkeypatch
):
    with clock(NOW):
        first, second = hourly(workspace_a, template), hourly(workspace_a, template)
        Job.objects.all().delete()
        monkeypatch.setattr("apps.series.occurrences.ORGANIZATION_RUN_SECONDS", 0.0)
        job = JobFactory(
            type="series.materialize_organization",
            organization=workspace_a.organization,
            payload={"organization_id": workspace_a.organization_id, "after_series_id": 0},
        )
        materialize_organization(job)
        continuation = Job.objects.exclude(pk=job.pk).get(type="series.materialize_organization")
        assert continuation.payload["after_series_id"] == first.pk
        materialize_organization(continuation)

    assert SeriesOccurrence.objects.filter(series=first).exists()
    assert SeriesOccurrence.objects.filter(series=second).exists()
    assert Series.objects.get(pk=second.pk).materialized_through > NOW
    assert (
        not Job.objects.filter(type="series.materialize_organization")
        .exclude(pk__in=[job.pk, continuation.pk])
        .exists()
    )
