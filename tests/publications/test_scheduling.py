from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from apps.common.errors import ValidationFailed
from apps.publications.scheduling import (
    PAST_GRACE,
    is_ambiguous,
    is_nonexistent,
    resolve_schedule,
)

NOW = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)


def resolve(**kwargs):
    return resolve_schedule(now=NOW, **kwargs)


@pytest.mark.parametrize(
    "value, expected",
    [
        ("2027-03-28T09:00:00+02:00", datetime(2027, 3, 28, 7, 0, tzinfo=UTC)),
        ("2027-03-28T07:00:00Z", datetime(2027, 3, 28, 7, 0, tzinfo=UTC)),
        ("2027-03-28T02:00:00-05:30", datetime(2027, 3, 28, 7, 30, tzinfo=UTC)),
        (
            datetime(2027, 3, 28, 9, 0, tzinfo=timezone(timedelta(hours=2))),
            datetime(2027, 3, 28, 7, 0, tzinfo=UTC),
        ),
    ],
)
def test_an_instant_with_an_offset_is_converted_to_utc(value, expected):
    instant, zone = resolve(scheduled_at=value)

    assert instant == expected
    assert instant.tzinfo == UTC
    assert zone == "UTC"


def test_an_instant_records_the_zone_it_was_chosen_in():
    instant, zone = resolve(scheduled_at="2027-03-28T09:00:00+02:00", timezone="Europe/Warsaw")

    assert (instant, zone) == (datetime(2027, 3, 28, 7, 0, tzinfo=UTC), "Europe/Warsaw")


@pytest.mark.parametrize("value", ["2027-03-28T09:00:00", datetime(2027, 3, 28, 9, 0)])
def test_a_naive_instant_is_refused_with_a_clear_error(value):
    with pytest.raises(ValidationFailed) as caught:
        resolve(scheduled_at=value)

    assert caught.value.code == "MISSING_UTC_OFFSET"
    assert "local_time" in caught.value.message
    assert list(caught.value.details) == ["scheduled_at"]


@pytest.mark.parametrize("value", ["tomorrow", "2027-13-01T00:00Z", 1234])
def test_garbage_is_not_a_date(value):
    with pytest.raises(ValidationFailed) as caught:
        resolve(scheduled_at=value)

    assert caught.value.code == "INVALID_DATETIME"


@pytest.mark.parametrize(
    "zone, local, expected_utc, expected_local",
    [
        # Spring forward: 02:00-03:00 does not exist; 02:30 moves forward by the gap.
        ("Europe/Warsaw", "2027-03-28T02:30", datetime(2027, 3, 28, 1, 30, tzinfo=UTC), "03:30"),
        ("Europe/Warsaw", "2027-03-28T02:00", datetime(2027, 3, 28, 1, 0, tzinfo=UTC), "03:00"),
        ("America/New_York", "2027-03-14T02:30", datetime(2027, 3, 14, 7, 30, tzinfo=UTC), "03:30"),
        # Fall back: 02:00-03:00 (Warsaw) and 01:00-02:00 (New York) happen twice; the
        # first occurrence (still on summer time) is taken.
        ("Europe/Warsaw", "2027-10-31T02:30", datetime(2027, 10, 31, 0, 30, tzinfo=UTC), "02:30"),
        ("America/New_York", "2027-11-07T01:30", datetime(2027, 11, 7, 5, 30, tzinfo=UTC), "01:30"),
        # Ordinary times on both sides of the changes.
        ("Europe/Warsaw", "2027-03-27T02:30", datetime(2027, 3, 27, 1, 30, tzinfo=UTC), "02:30"),
        ("Europe/Warsaw", "2027-03-28T03:30", datetime(2027, 3, 28, 1, 30, tzinfo=UTC), "03:30"),
        ("America/New_York", "2027-11-07T02:30", datetime(2027, 11, 7, 7, 30, tzinfo=UTC), "02:30"),
    ],
)
def test_dst_policy(zone, local, expected_utc, expected_local):
    instant, chosen_zone = resolve(local_time=local, timezone=zone)

    assert instant == expected_utc
    assert chosen_zone == zone
    assert instant.astimezone(ZoneInfo(zone)).strftime("%H:%M") == expected_local


def test_gap_and_overlap_are_detected():
    warsaw = ZoneInfo("Europe/Warsaw")

    assert is_nonexistent(datetime(2027, 3, 28, 2, 30), warsaw)
    assert not is_ambiguous(datetime(2027, 3, 28, 2, 30), warsaw)
    assert is_ambiguous(datetime(2027, 10, 31, 2, 30), warsaw)
    assert not is_nonexistent(datetime(2027, 10, 31, 2, 30), warsaw)
    assert not is_ambiguous(datetime(2027, 10, 31, 3, 30), warsaw)


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "", "../../etc/passwd", "utc+2"])
def test_an_invalid_zone_is_refused(zone):
    with pytest.raises(ValidationFailed) as caught:
        resolve(local_time="2027-03-28T09:00", timezone=zone)

    assert caught.value.code == "INVALID_TIMEZONE"
    assert list(caught.value.details) == ["timezone"]


def test_local_time_needs_a_zone():
    with pytest.raises(ValidationFailed) as caught:
        resolve(local_time="2027-03-28T09:00")

    assert caught.value.code == "INVALID_TIMEZONE"


def test_local_time_with_an_offset_is_refused():
    with pytest.raises(ValidationFailed) as caught:
        resolve(local_time="2027-03-28T09:00+02:00", timezone="Europe/Warsaw")

    assert caught.value.code == "LOCAL_TIME_HAS_OFFSET"


def test_both_forms_at_once_are_refused():
    with pytest.raises(ValidationFailed) as caught:
        resolve(scheduled_at="2027-03-28T09:00Z", local_time="2027-03-28T09:00", timezone="UTC")

    assert caught.value.code == "SCHEDULE_CONFLICT"


def test_a_time_is_required():
    with pytest.raises(ValidationFailed) as caught:
        resolve()

    assert caught.value.code == "SCHEDULE_REQUIRED"


def test_exactly_ten_minutes_in_the_past_is_accepted():
    instant, _zone = resolve(scheduled_at=NOW - PAST_GRACE)

    assert instant == NOW - timedelta(minutes=10)


def test_just_over_ten_minutes_in_the_past_is_refused():
    with pytest.raises(ValidationFailed) as caught:
        resolve(scheduled_at=NOW - PAST_GRACE - timedelta(microseconds=1))

    assert caught.value.code == "SCHEDULE_IN_PAST"
    assert list(caught.value.details) == ["scheduled_at"]


def test_the_grace_applies_to_local_times_too():
    # 12:50 in Warsaw (CET, +01:00) is 11:50 UTC: exactly NOW - 10 minutes.
    resolve(local_time="2027-03-01T12:50", timezone="Europe/Warsaw")

    with pytest.raises(ValidationFailed) as caught:
        resolve(local_time="2027-03-01T12:49:59", timezone="Europe/Warsaw")

    assert caught.value.code == "SCHEDULE_IN_PAST"
    assert list(caught.value.details) == ["local_time"]


def test_there_is_no_maximum_horizon():
    instant, _zone = resolve(scheduled_at="2099-12-31T23:59:00Z")

    assert instant.year == 2099


def test_field_paths_can_be_prefixed():
    with pytest.raises(ValidationFailed) as caught:
        resolve_schedule(scheduled_at="2020-01-01T00:00Z", now=NOW, field_prefix="destinations.3")

    assert list(caught.value.details) == ["destinations.3.scheduled_at"]
