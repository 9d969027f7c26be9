"""A series' schedule: the rule fields a caller gives, checked and normalized, and the
occurrences they produce, for previews and for the materializer. The rule arithmetic
itself (RRULE, wall-clock times, DST) is in ``apps.series.recurrence``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from apps.common.errors import ValidationFailed
from apps.publications.scheduling import get_zone
from apps.series import recurrence
from apps.series.models import Series


@dataclass
class Schedule:
    rrule: str
    dtstart: str
    timezone: str
    count: int | None
    until: datetime | None


# How far in the past a series may start: expanding walks from dtstart, and an old
# start says nothing the rule would not say from a recent one.
MAX_DTSTART_AGE = timedelta(days=365)


def clean_schedule(
    *,
    rrule: Any,
    dtstart: Any,
    timezone_name: Any,
    count: Any,
    until: Any,
    check_dtstart_age: bool = True,
    now: datetime | None = None,
) -> Schedule:
    """The schedule checked and normalized. `check_dtstart_age`: refuse a dtstart more
    than MAX_DTSTART_AGE ago (off when an edit keeps a series' own, older, start)."""
    zone = get_zone(timezone_name if isinstance(timezone_name, str) else None)
    start = recurrence.parse_local(dtstart, field="dtstart")
    if check_dtstart_age:
        _check_dtstart_age(start, zone, now=now or timezone.now())
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValidationFailed(
            "count must be a positive whole number.", details={"count": ["At least 1."]}
        )
    if count is not None and count > recurrence.MAX_COUNT:
        raise ValidationFailed(
            f"count may be at most {recurrence.MAX_COUNT}; leave it empty for no limit.",
            details={"count": [f"At most {recurrence.MAX_COUNT}."]},
        )
    until_utc = recurrence.parse_until(until, zone.key)
    if count is not None and until_utc is not None:
        raise ValidationFailed(
            "Give count or until, not both.", details={"until": ["Give count or until."]}
        )
    recurrence.build_rule(rrule, dtstart=start, count=count)
    text = rrule.strip()
    text = text[len("RRULE:") :] if text.upper().startswith("RRULE:") else text
    return Schedule(
        rrule=text.upper(),
        dtstart=recurrence.format_local(start),
        timezone=zone.key,
        count=count,
        until=until_utc,
    )


def _check_dtstart_age(start: datetime, zone, *, now: datetime) -> None:
    earliest = (now - MAX_DTSTART_AGE).astimezone(zone).replace(tzinfo=None, microsecond=0)
    if start < earliest:
        shown = earliest.strftime("%Y-%m-%dT%H:%M")
        raise ValidationFailed(
            f"dtstart may be at most a year in the past: the earliest accepted is {shown} "
            "in the series' zone. A later start with the same rule gives the same future "
            "occurrences.",
            code="DTSTART_TOO_OLD",
            details={"dtstart": [f"Not before {shown}."], "earliest": shown},
        )


def series_occurrences(
    series: Series,
    *,
    after: datetime,
    through: datetime,
    limit: int | None = None,
    partial: bool = False,
) -> recurrence.Expansion:
    """The series' occurrences in (after, through], by its rule, zone, count and until,
    within the expansion budget (RuleTooCostly past it, unless `partial`)."""
    return recurrence.expand(
        series.rrule,
        dtstart=recurrence.parse_local(series.dtstart, field="dtstart"),
        count=series.count,
        zone=get_zone(series.timezone),
        after=after,
        through=through,
        until=series.until,
        limit=limit,
        partial=partial,
    )


@dataclass(frozen=True)
class PreviewItem:
    local: str  # wall-clock, in the series' zone
    scheduled_at: datetime  # UTC
    status: str | None  # the occurrence's status when already handled
    publication_id: int | None


def series_preview(
    *, series: Series, limit: int = 10, now: datetime | None = None
) -> list[PreviewItem]:
    """The next `limit` occurrences after now, with local and UTC times, and what became
    of each one already materialized."""
    now = now or timezone.now()
    limit = max(1, min(int(limit), 100))
    found = series_occurrences(
        series, after=now, through=now + timedelta(days=5 * 366), limit=limit
    ).occurrences
    handled = {
        occ.local_start: occ
        for occ in series.occurrences.current().filter(local_start__in=[o.local_iso for o in found])
    }
    return [
        PreviewItem(
            local=o.local_iso,
            scheduled_at=o.utc,
            status=handled[o.local_iso].status if o.local_iso in handled else None,
            publication_id=handled[o.local_iso].publication_id if o.local_iso in handled else None,
        )
        for o in found
    ]


def schedule_preview(
    *,
    rrule: str,
    dtstart: str,
    timezone_name: str,
    count: int | None = None,
    until: Any = None,
    limit: int = 10,
    now: datetime | None = None,
) -> list[recurrence.Occurrence]:
    """The next occurrences of a schedule that is not saved yet (the composer's preview)."""
    now = now or timezone.now()
    schedule = clean_schedule(
        rrule=rrule,
        dtstart=dtstart,
        timezone_name=timezone_name,
        count=count,
        until=until,
        now=now,
    )
    return recurrence.expand(
        schedule.rrule,
        dtstart=recurrence.parse_local(schedule.dtstart, field="dtstart"),
        count=schedule.count,
        zone=get_zone(schedule.timezone),
        after=now,
        through=now + timedelta(days=5 * 366),
        until=schedule.until,
        limit=max(1, min(int(limit), 100)),
    ).occurrences
