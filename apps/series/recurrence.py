"""Reading recurrence rules and expanding them into instants (pure: no database).

A rule is an RFC 5545 RRULE (python-dateutil) over wall-clock times in the series' IANA
zone, counted from ``dtstart``. Each wall-clock occurrence becomes a UTC instant under
the scheduling DST policy (DESIGN §8, ``apps.publications.scheduling.local_to_utc``):

- a time that does not exist (a spring-forward gap) moves forward by the gap: a weekly
  02:30 in Europe/Warsaw fires at 03:30 CEST on the last Sunday of March;
- a time that happens twice (a fall-back) takes the first occurrence: 02:30 CEST, not CET.

So a weekly 09:00 stays 09:00 on the wall clock all year, and its UTC instant moves by an
hour across a DST change. Two occurrences landing on one instant (an hourly rule across a
gap) are one.

Cost is bounded, whatever the rule and however old the series (a preview is reachable
with a read token, and the materializer serves every organization):

- an expansion restarts the rule a whole number of periods after ``dtstart``, just before
  the window asked for (the phase of INTERVAL is kept), so walking to the window costs
  one period, not the series' age; a COUNT rule is counted from ``dtstart`` and is not
  moved, which is why COUNT is capped at ``MAX_COUNT``;
- each expansion looks at no more than ``MAX_ITERATIONS`` candidates and runs no longer
  than ``MAX_SECONDS`` (``RULE_TOO_COSTLY`` for a preview, a partial result for the
  materializer);
- a rule that matches nothing spins inside dateutil without yielding, so "does it ever
  happen" is asked of the rule restarted in the calendar's last century, where dateutil
  stops at year 9999 by itself.
"""

from __future__ import annotations

import time as clock
import zoneinfo
from dataclasses import dataclass
from datetime import MAXYEAR, UTC, date, datetime, time, timedelta

from dateutil.rrule import rrule, rrulestr

from apps.common.errors import ValidationFailed
from apps.publications.scheduling import get_zone, local_to_utc

LOCAL_FORMAT = "%Y-%m-%dT%H:%M:%S"
ALLOWED_FREQUENCIES = ("HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY")
# Parts of RFC 5545 kept in their own fields (dtstart, count, until), not in the rule text.
_OWN_FIELDS = {"DTSTART": "dtstart", "COUNT": "count", "UNTIL": "until"}
MIN_INTERVAL = timedelta(hours=1)
_PROBE = 100  # occurrences looked at when checking a rule
_POSSIBLE_WITHIN = timedelta(days=5 * 366)
# Candidates and seconds one expansion may spend (preview or materializer run).
MAX_ITERATIONS = 10_000
MAX_SECONDS = 0.2
# A COUNT rule is walked from dtstart: its whole run must fit in the iteration budget,
# with room for a preview (100) or a materializer run (200) on top.
MAX_COUNT = 5_000
# The span of the "ever happens" check, at the end of the calendar (see the module doc).
_LAST_CENTURY = datetime(MAXYEAR - 99, 1, 1)
_WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
# Rule parts that, when all absent, make dateutil take the day from dtstart.
_DAY_PARTS = ("BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY", "BYEASTER")


class RuleTooCostly(ValidationFailed):
    """An expansion ran out of its iteration or time budget."""

    code = "RULE_TOO_COSTLY"


@dataclass(frozen=True)
class Expansion:
    occurrences: list[Occurrence]
    complete: bool  # False: the budget ran out first; more may follow the last one


@dataclass(frozen=True)
class Occurrence:
    local: datetime  # naive wall-clock time in the series' zone
    utc: datetime

    @property
    def local_iso(self) -> str:
        return self.local.strftime(LOCAL_FORMAT)


def parse_local(value: str | datetime, *, field: str) -> datetime:
    """A naive wall-clock time ("2027-03-28T09:00" or with seconds), seconds kept."""
    if isinstance(value, datetime):
        local = value
    else:
        try:
            local = datetime.fromisoformat(str(value).strip())
        except ValueError:
            raise ValidationFailed(
                f"{field} must be a wall-clock date and time like 2027-03-28T09:00.",
                code="INVALID_DATETIME",
                details={field: ["Not a date and time (YYYY-MM-DDTHH:MM)."]},
            ) from None
    if local.tzinfo is not None:
        raise ValidationFailed(
            f"{field} is a wall-clock time in the series' timezone and carries no offset.",
            code="LOCAL_TIME_HAS_OFFSET",
            details={field: ["Must not carry a UTC offset."]},
        )
    return local.replace(microsecond=0)


def format_local(local: datetime) -> str:
    return local.strftime(LOCAL_FORMAT)


def parse_until(value: str | datetime | date | None, zone_name: str) -> datetime | None:
    """The last instant an occurrence may fall on: an instant with an offset, a wall-clock
    time in the series' zone, or a date (the end of that day there)."""
    if value is None or value == "":
        return None
    zone = get_zone(zone_name)
    if isinstance(value, str):
        text = value.strip()
        try:
            parse = date.fromisoformat if len(text) == 10 else datetime.fromisoformat
            value = parse(text)
        except ValueError:
            raise ValidationFailed(
                "until must be a date, or a date and time.",
                code="INVALID_DATETIME",
                details={"until": ["Not a date or a date and time."]},
            ) from None
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime.combine(value, time(23, 59, 59))
    if value.tzinfo is None:
        return local_to_utc(value.replace(microsecond=0), zone)
    return value.astimezone(UTC)


def _rule_text(text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValidationFailed(
            "A recurrence rule is required (e.g. FREQ=WEEKLY;BYDAY=MO).",
            code="INVALID_RRULE",
            details={"rrule": ["This field is required."]},
        )
    body = text.strip()
    if body.upper().startswith("RRULE:"):
        body = body[len("RRULE:") :]
    if "\n" in body or "\r" in body or ":" in body:
        raise ValidationFailed(
            "Give one RRULE (FREQ=...;...), without DTSTART, EXDATE or other lines.",
            code="INVALID_RRULE",
            details={"rrule": ["One RRULE only."]},
        )
    parts = _parts(body)
    for key, field in _OWN_FIELDS.items():
        if key in parts:
            raise ValidationFailed(
                f"Set {key} with the series' {field} field, not inside the rule.",
                code="INVALID_RRULE",
                details={"rrule": [f"{key} belongs in the {field} field."]},
            )
    if parts.get("FREQ") not in ALLOWED_FREQUENCIES:
        raise ValidationFailed(
            f"FREQ must be one of {', '.join(ALLOWED_FREQUENCIES)}.",
            code="INVALID_RRULE",
            details={"rrule": [f"FREQ must be one of {', '.join(ALLOWED_FREQUENCIES)}."]},
        )
    if "BYEASTER" in parts:
        raise ValidationFailed(
            "BYEASTER is not part of RFC 5545.",
            code="INVALID_RRULE",
            details={"rrule": ["BYEASTER is not supported."]},
        )
    # With a one-hour minimum an hourly or daily period holds one time or a few, so
    # BYSETPOS adds nothing there, and a position past the end would never match.
    if "BYSETPOS" in parts and parts["FREQ"] in ("HOURLY", "DAILY"):
        raise ValidationFailed(
            "BYSETPOS works with WEEKLY, MONTHLY and YEARLY rules.",
            code="INVALID_RRULE",
            details={"rrule": ["BYSETPOS needs FREQ=WEEKLY, MONTHLY or YEARLY."]},
        )
    return body


def _parts(body: str) -> dict[str, str]:
    parts = {}
    for part in filter(None, body.split(";")):
        key, _, value = part.partition("=")
        parts[key.strip().upper()] = value.strip().upper()
    return parts


def _pinned(parts: dict[str, str], dtstart: datetime) -> dict[str, str]:
    """The rule's parts with those dateutil would take from dtstart written out (the day
    of a monthly rule, the month and day of a yearly one, the time), so the rule means
    the same from another start."""
    parts = dict(parts)
    freq = parts["FREQ"]
    if not any(part in parts for part in _DAY_PARTS):
        if freq == "YEARLY":
            parts.setdefault("BYMONTH", str(dtstart.month))
            parts["BYMONTHDAY"] = str(dtstart.day)
        elif freq == "MONTHLY":
            parts["BYMONTHDAY"] = str(dtstart.day)
        elif freq == "WEEKLY":
            parts["BYDAY"] = _WEEKDAYS[dtstart.weekday()]
    if freq != "HOURLY":
        parts.setdefault("BYHOUR", str(dtstart.hour))
    parts.setdefault("BYMINUTE", str(dtstart.minute))
    parts.setdefault("BYSECOND", str(dtstart.second))
    return parts


def _restarted(
    parts: dict[str, str], dtstart: datetime, target: datetime
) -> tuple[dict[str, str], datetime]:
    """The rule restarted a whole number of INTERVAL periods after dtstart, at or before
    `target`, producing from there exactly what the original produces."""
    if target <= dtstart:
        return parts, dtstart
    freq, interval = parts["FREQ"], int(parts.get("INTERVAL", "1"))
    if freq in ("HOURLY", "DAILY", "WEEKLY"):
        # Whole hours, days or weeks keep the minute, the time of day and the weekday
        # dateutil takes from dtstart, and the week boundaries (WKST).
        unit = {"HOURLY": timedelta(hours=1), "DAILY": timedelta(days=1)}.get(
            freq, timedelta(weeks=1)
        )
        step = unit * interval
        return parts, dtstart + ((target - dtstart) // step) * step
    if freq == "MONTHLY":
        months = (target.year - dtstart.year) * 12 + target.month - dtstart.month
        moved = (months // interval) * interval
        if moved == 0:
            return parts, dtstart
        index = dtstart.year * 12 + dtstart.month - 1 + moved
        return _pinned(parts, dtstart), datetime(index // 12, index % 12 + 1, 1)
    moved = ((target.year - dtstart.year) // interval) * interval
    if moved == 0:
        return parts, dtstart
    return _pinned(parts, dtstart), datetime(dtstart.year + moved, 1, 1)


def _rule(parts: dict[str, str], dtstart: datetime, count: int | None) -> rrule:
    text = ";".join(f"{key}={value}" for key, value in parts.items())
    rule = rrulestr(f"RRULE:{text}", dtstart=dtstart)
    return rule.replace(count=count) if count is not None else rule


def _ever_happens(parts: dict[str, str], dtstart: datetime) -> bool:
    """Whether the rule has an occurrence in the calendar's last century (restarted
    there, phase kept). The Gregorian calendar repeats every 400 years and a possible
    rule's gaps are a few decades at most, while dateutil walking a rule that never
    matches only stops at year 9999: from here that is one century of periods."""
    moved_parts, start = _restarted(parts, dtstart, _LAST_CENTURY)
    return next(iter(_rule(moved_parts, start, None)), None) is not None


def build_rule(text: str, *, dtstart: datetime, count: int | None = None) -> rrule:
    """The dateutil rule for RRULE text from dtstart (naive local); INVALID_RRULE when it
    does not parse, can never happen, or repeats more often than hourly."""
    body = _rule_text(text)
    try:
        rule = rrulestr(f"RRULE:{body}", dtstart=dtstart)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise ValidationFailed(
            f"The recurrence rule is not valid RFC 5545: {exc}.",
            code="INVALID_RRULE",
            details={"rrule": [str(exc) or "Not a valid RRULE."]},
        ) from None
    if not isinstance(rule, rrule):
        raise ValidationFailed("Give one RRULE.", code="INVALID_RRULE", details={"rrule": []})
    if count is not None:
        rule = rule.replace(count=count)
    if not _ever_happens(_parts(body), dtstart):
        raise ValidationFailed(
            "The recurrence rule never happens.",
            code="INVALID_RRULE",
            details={"rrule": ["Never happens."]},
        )
    bounded = rule.replace(count=None, until=dtstart + _POSSIBLE_WITHIN)
    probe = []
    for local in bounded:
        probe.append(local)
        if len(probe) >= _PROBE:
            break
    if not probe:
        raise ValidationFailed(
            "The recurrence rule has no occurrence in the five years after dtstart.",
            code="INVALID_RRULE",
            details={"rrule": ["Never happens."]},
        )
    for earlier, later in zip(probe, probe[1:], strict=False):
        if later - earlier < MIN_INTERVAL:
            raise ValidationFailed(
                "A series repeats at most once an hour.",
                code="INVALID_RRULE",
                details={"rrule": ["Occurrences must be at least an hour apart."]},
            )
    return rule


def expand(
    text: str,
    *,
    dtstart: datetime,
    count: int | None,
    zone: zoneinfo.ZoneInfo,
    after: datetime,
    through: datetime,
    until: datetime | None = None,
    limit: int | None = None,
    partial: bool = False,
) -> Expansion:
    """Occurrences of the rule (RRULE text from naive local `dtstart`) whose UTC instant
    is in (after, through] and not after `until`, in time order, at most `limit`.

    Within MAX_ITERATIONS candidates and MAX_SECONDS: past either, RuleTooCostly, or
    with `partial` what was found so far (``complete`` False)."""
    end = min(through, until) if until else through
    # Wall-clock bounds with a day of margin either side for the zone's offset.
    lo = after.astimezone(zone).replace(tzinfo=None) - timedelta(days=1)
    hi = end.astimezone(zone).replace(tzinfo=None) + timedelta(days=1)
    parts, start = _parts(_rule_text(text)), dtstart
    if count is None:
        parts, start = _restarted(parts, dtstart, lo)
    found: list[Occurrence] = []
    last_utc: datetime | None = None
    deadline = clock.monotonic() + MAX_SECONDS
    for steps, local in enumerate(_rule(parts, start, count), start=1):
        if steps > MAX_ITERATIONS or clock.monotonic() > deadline:
            if partial:
                return Expansion(found, complete=False)
            raise RuleTooCostly(
                "The recurrence rule takes too long to expand; give a later dtstart or "
                "a simpler rule.",
                details={"rrule": ["Too costly to expand."]},
            )
        if local < lo:
            continue
        if local > hi:
            break
        utc = local_to_utc(local, zone)
        if utc <= after or utc > end or utc == last_utc:
            continue
        found.append(Occurrence(local=local, utc=utc))
        last_utc = utc
        if limit is not None and len(found) >= limit:
            break
    return Expansion(found, complete=True)
