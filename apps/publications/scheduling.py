"""When a publication fires: turning what a client sends into a UTC instant (DESIGN §8).

A schedule comes either as an ISO-8601 instant with an offset ("2027-03-28T09:00:00+02:00",
"...Z"), or as a wall-clock ``local_time`` plus an IANA ``timezone``. Instants are stored
in UTC; the zone is kept to show the time back as it was chosen.

Daylight-saving policy for wall-clock times:

- a time that does not exist (skipped by a spring-forward gap) moves forward by the gap:
  02:30 on 2027-03-28 in Europe/Warsaw becomes 03:30 CEST (01:30 UTC);
- a time that happens twice (repeated by a fall-back) takes its first occurrence:
  02:30 on 2027-10-31 in Europe/Warsaw is 02:30 CEST (00:30 UTC), not CET.

A time up to ``PAST_GRACE`` (10 minutes) in the past is accepted and runs at once (a
slow form, a clock a little behind); older is refused with SCHEDULE_IN_PAST. There is no
maximum horizon.
"""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime, timedelta
from functools import cache

from django.utils import timezone as django_timezone

from apps.common.errors import ValidationFailed

PAST_GRACE = timedelta(minutes=10)


class ScheduleError(ValidationFailed):
    """A schedule that cannot be used; ``code`` says why and ``details`` name the field."""


@cache
def _zone_names() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def get_zone(name: str | None, *, field: str = "timezone") -> zoneinfo.ZoneInfo:
    """The IANA zone called name; INVALID_TIMEZONE otherwise."""
    if not isinstance(name, str) or name not in _zone_names():
        raise ScheduleError(
            f"'{name}' is not an IANA time zone (e.g. Europe/Warsaw, America/New_York).",
            code="INVALID_TIMEZONE",
            details={field: ["Not an IANA time zone name."]},
        )
    return zoneinfo.ZoneInfo(name)


def _parse(value: str | datetime, *, field: str) -> datetime:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ScheduleError(
            f"{field} must be an ISO-8601 date and time.",
            code="INVALID_DATETIME",
            details={field: ["Must be an ISO-8601 date and time."]},
        )
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        raise ScheduleError(
            f"'{value}' is not an ISO-8601 date and time (e.g. 2027-03-28T09:00:00+02:00).",
            code="INVALID_DATETIME",
            details={field: ["Not an ISO-8601 date and time."]},
        ) from None


def local_to_utc(local: datetime, zone: zoneinfo.ZoneInfo) -> datetime:
    """The UTC instant of a naive wall-clock time in zone, under the DST policy above.

    fold=0 implements both rules (PEP 495): an ambiguous time takes the offset of its
    first occurrence, and a nonexistent one the offset in force before the gap, which
    lands it after the gap by exactly the gap's length (02:30 in a one-hour gap is 03:30).
    """
    return local.replace(tzinfo=zone, fold=0).astimezone(UTC)


def is_nonexistent(local: datetime, zone: zoneinfo.ZoneInfo) -> bool:
    """True when the wall-clock time is skipped in zone (a spring-forward gap)."""
    as_utc = local.replace(tzinfo=zone, fold=0).astimezone(UTC)
    return as_utc.astimezone(zone).replace(tzinfo=None) != local


def is_ambiguous(local: datetime, zone: zoneinfo.ZoneInfo) -> bool:
    """True when the wall-clock time happens twice in zone (a fall-back overlap)."""
    earlier = local.replace(tzinfo=zone, fold=0)
    later = local.replace(tzinfo=zone, fold=1)
    return earlier.utcoffset() != later.utcoffset() and not is_nonexistent(local, zone)


def resolve_schedule(
    *,
    scheduled_at: str | datetime | None = None,
    local_time: str | datetime | None = None,
    timezone: str | None = None,
    now: datetime | None = None,
    field_prefix: str = "",
) -> tuple[datetime, str]:
    """Return (UTC instant, zone name) for a schedule given as an instant or a local time.

    scheduled_at: an aware datetime or ISO-8601 string with an offset; a naive one is
    refused (MISSING_UTC_OFFSET): send local_time and timezone instead. timezone, when
    given with an instant, is only recorded as the zone it was chosen in (default "UTC").
    local_time: a naive wall-clock time, with timezone required.
    Errors (ValidationFailed subclasses, details keyed by field path with field_prefix):
    SCHEDULE_REQUIRED, SCHEDULE_CONFLICT, INVALID_DATETIME, MISSING_UTC_OFFSET,
    LOCAL_TIME_HAS_OFFSET, INVALID_TIMEZONE, SCHEDULE_IN_PAST.
    """

    def path(name: str) -> str:
        return f"{field_prefix}.{name}" if field_prefix else name

    if scheduled_at is not None and local_time is not None:
        raise ScheduleError(
            "Give either scheduled_at, or local_time with timezone, not both.",
            code="SCHEDULE_CONFLICT",
            details={path("scheduled_at"): ["Give scheduled_at or local_time, not both."]},
        )
    if scheduled_at is None and local_time is None:
        raise ScheduleError(
            "A time is required: scheduled_at, or local_time with timezone.",
            code="SCHEDULE_REQUIRED",
            details={path("scheduled_at"): ["This field is required."]},
        )

    if scheduled_at is not None:
        field = path("scheduled_at")
        instant = _parse(scheduled_at, field=field)
        if instant.tzinfo is None or instant.utcoffset() is None:
            raise ScheduleError(
                f"scheduled_at '{scheduled_at}' has no UTC offset. Add one "
                "(2027-03-28T09:00:00+02:00, or Z for UTC), or send local_time with timezone.",
                code="MISSING_UTC_OFFSET",
                details={field: ["Needs a UTC offset (e.g. +02:00 or Z)."]},
            )
        zone_name = timezone if timezone is not None else "UTC"
        get_zone(zone_name, field=path("timezone"))
        utc = instant.astimezone(UTC)
    else:
        assert local_time is not None  # one of the two is given, checked above
        field = path("local_time")
        if timezone is None:
            raise ScheduleError(
                "local_time needs a timezone (an IANA name such as Europe/Warsaw).",
                code="INVALID_TIMEZONE",
                details={path("timezone"): ["Required with local_time."]},
            )
        zone = get_zone(timezone, field=path("timezone"))
        local = _parse(local_time, field=field)
        if local.tzinfo is not None:
            raise ScheduleError(
                "local_time is a wall-clock time and carries no offset; the timezone "
                "decides it. Send an instant as scheduled_at instead.",
                code="LOCAL_TIME_HAS_OFFSET",
                details={field: ["Must not carry a UTC offset."]},
            )
        zone_name = timezone
        utc = local_to_utc(local, zone)

    check_not_in_past(utc, now=now, field=field)
    return utc, zone_name


def check_not_in_past(instant: datetime, *, now: datetime | None = None, field: str) -> None:
    """Refuse an instant more than PAST_GRACE before now (SCHEDULE_IN_PAST)."""
    now = now or django_timezone.now()
    if instant < now - PAST_GRACE:
        minutes = int(PAST_GRACE.total_seconds() // 60)
        raise ScheduleError(
            f"{instant.isoformat()} is in the past; a time up to {minutes} minutes ago runs "
            "at once, older ones are refused.",
            code="SCHEDULE_IN_PAST",
            details={field: [f"More than {minutes} minutes in the past."]},
        )
