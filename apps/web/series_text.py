"""Recurrence rules as people read them, and the weekday-and-time picker's rule.

"FREQ=WEEKLY;BYDAY=MO,TH" from 09:00 in Europe/Paris reads "Every Monday and Thursday at
09:00 (Europe/Paris)". Rules beyond the simple shapes below are shown as written.
"""

from __future__ import annotations

from apps.planning.models import WEEKDAY_NAMES

RRULE_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")  # index = date.weekday()


def weekly_rule(weekdays: list[int]) -> str:
    """The RRULE of the picker: every chosen weekday (0 is Monday), at dtstart's time."""
    return "FREQ=WEEKLY;BYDAY=" + ",".join(RRULE_DAYS[day] for day in sorted(set(weekdays)))


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _parts(rrule: str) -> dict[str, str] | None:
    parts = {}
    for item in rrule.strip().removeprefix("RRULE:").split(";"):
        key, sep, value = item.partition("=")
        if not sep:
            return None
        parts[key.strip().upper()] = value.strip().upper()
    return parts


def describe_rule(rrule: str, dtstart: str, timezone: str, count: int | None = None) -> str:
    """The rule as a sentence, with its time of day and zone."""
    at = dtstart[11:16] if len(dtstart) >= 16 else ""
    when = f" at {at}" if at else ""
    tail = f" ({timezone})" + (f", {count} times" if count else "")
    parts = _parts(rrule) or {}
    freq = parts.pop("FREQ", "")
    interval = parts.pop("INTERVAL", "1")
    parts.pop("WKST", None)
    if interval != "1":
        return f"Repeats {rrule}{when}{tail}"
    if freq == "DAILY" and not parts:
        return f"Every day{when}{tail}"
    if freq == "WEEKLY" and set(parts) <= {"BYDAY"}:
        days = parts.get("BYDAY", "").split(",") if parts.get("BYDAY") else []
        if days and all(day in RRULE_DAYS for day in days):
            indexes = sorted({RRULE_DAYS.index(day) for day in days})
            if indexes == [0, 1, 2, 3, 4]:
                return f"Every weekday (Monday to Friday){when}{tail}"
            if len(indexes) == 7:
                return f"Every day{when}{tail}"
            return f"Every {_join([WEEKDAY_NAMES[i] for i in indexes])}{when}{tail}"
        if not days:
            return f"Every week{when}{tail}"
    if freq == "MONTHLY" and set(parts) == {"BYMONTHDAY"} and parts["BYMONTHDAY"].isdigit():
        return f"On day {parts['BYMONTHDAY']} of every month{when}{tail}"
    return f"Repeats {rrule}{when}{tail}"
