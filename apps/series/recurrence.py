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
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

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
    parts = {}
    for part in filter(None, body.split(";")):
        key, _, value = part.partition("=")
        parts[key.strip().upper()] = value.strip().upper()
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
    return body


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
    rule: rrule,
    *,
    zone: zoneinfo.ZoneInfo,
    after: datetime,
    through: datetime,
    until: datetime | None = None,
    limit: int | None = None,
) -> list[Occurrence]:
    """Occurrences whose UTC instant is in (after, through] and not after `until`, in
    time order, at most `limit`."""
    end = min(through, until) if until else through
    # Wall-clock bounds with a day of margin either side for the zone's offset.
    lo = after.astimezone(zone).replace(tzinfo=None) - timedelta(days=1)
    hi = end.astimezone(zone).replace(tzinfo=None) + timedelta(days=1)
    found: list[Occurrence] = []
    last_utc: datetime | None = None
    for local in _iter_after(rule, lo):
        if local > hi:
            break
        utc = local_to_utc(local, zone)
        if utc <= after or utc > end or utc == last_utc:
            continue
        found.append(Occurrence(local=local, utc=utc))
        last_utc = utc
        if limit is not None and len(found) >= limit:
            break
    return found


def _iter_after(rule: rrule, lo: datetime) -> Iterator[datetime]:
    return rule.xafter(lo, inc=True)
