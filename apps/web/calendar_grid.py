"""The calendar's grids in a display zone: the days of a month, the hour rows of a week
and the days of an agenda, with the cards placed on them.

Every range is cut at local midnights, and the week's hours are walked in UTC, so a day
with a daylight-saving change has the hours it really has: 23 on a spring-forward day
(its skipped hour is a gap in the grid), 25 on a fall-back day (the repeated hour is two
rows, told apart by their zone abbreviation).
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Protocol

MONTH, WEEK, AGENDA = "month", "week", "agenda"
VIEWS = (MONTH, WEEK, AGENDA)
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
AGENDA_DAYS = 14
COMPOSE_HOUR = 9  # an empty day clicked in the month starts a post at 09:00


class Placed(Protocol):
    local: datetime  # aware, in the display zone


def local_midnight(day: date, zone: zoneinfo.ZoneInfo) -> datetime:
    """The instant a local day starts (a DST change at midnight moves it, never skips it)."""
    start = datetime.combine(day, time.min).replace(tzinfo=zone, fold=0)
    # A gap at midnight: the first instant of the day is the end of the gap.
    return start.astimezone(UTC).astimezone(zone)


def shift_month(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


@dataclass
class Range:
    """What one calendar page covers: days [start, end), the ones that belong to it
    [first, after), where prev/next lead, and its title."""

    view: str
    start: date
    end: date
    first: date
    after: date
    previous: date
    following: date
    title: str

    @property
    def last(self) -> date:
        return self.end - timedelta(days=1)

    def days(self) -> list[date]:
        return [self.start + timedelta(days=i) for i in range((self.end - self.start).days)]

    def bounds(self, zone: zoneinfo.ZoneInfo) -> tuple[datetime, datetime]:
        return local_midnight(self.start, zone), local_midnight(self.end, zone)


def page_range(view: str, anchor: date) -> Range:
    if view == MONTH:
        first = anchor.replace(day=1)
        after = shift_month(first, 1)
        start = first - timedelta(days=first.weekday())
        end = after + timedelta(days=(7 - after.weekday()) % 7)
        return Range(
            view, start, end, first, after, shift_month(first, -1), after, f"{first:%B %Y}"
        )
    if view == WEEK:
        start = anchor - timedelta(days=anchor.weekday())
        end = start + timedelta(days=7)
        title = f"Week of {start.day} {start:%b %Y}"
        return Range(view, start, end, start, end, start - timedelta(days=7), end, title)
    end = anchor + timedelta(days=AGENDA_DAYS)
    last = end - timedelta(days=1)
    title = f"{anchor.day} {anchor:%b} – {last.day} {last:%b %Y}"
    return Range(view, anchor, end, anchor, end, anchor - timedelta(days=AGENDA_DAYS), end, title)


@dataclass
class Slot:
    """One local hour of one day in the week grid: a drop target and a place to compose."""

    start: datetime  # aware, local
    column: int
    row: int
    is_past: bool  # it ended: nothing can be composed or dropped there
    items: list = field(default_factory=list)
    count: int = 0  # posts in the hour; items holds the first few of them

    @property
    def more(self) -> int:
        return max(self.count - len(self.items), 0)

    @property
    def fold(self) -> int:
        return self.start.fold

    @property
    def compose_at(self) -> str:
        return self.start.strftime("%Y-%m-%dT%H:%M")

    @property
    def drop_date(self) -> str:
        return self.start.strftime("%Y-%m-%d")

    @property
    def day_label(self) -> str:
        """As the `date` filter's "l j F" (a week has 168 slots: the filter cost shows)."""
        return f"{self.start:%A} {self.start.day} {self.start:%B}"


@dataclass
class Day:
    date: date
    in_range: bool
    is_today: bool
    is_past: bool
    compose_at: str | None  # the composer's prefilled time; None for a day gone by
    relative: str = ""  # "Today", "Tomorrow"
    items: list = field(default_factory=list)
    hours: int = 24
    count: int = 0  # posts on the day; items holds the ones shown

    @property
    def more(self) -> int:
        return max(self.count - len(self.items), 0)


@dataclass
class HourRow:
    hour: int
    fold: int
    label: str
    repeated: bool  # the second pass of an hour a fall-back repeats
    cells: list[Slot | None]  # one per weekday; None where the day has no such hour


def _compose_at(day: date, now: datetime) -> str | None:
    """When a post composed from an empty day starts: 09:00, or on today once 09:00 is
    near, the next full hour (none when that is tomorrow)."""
    today = now.date()
    if day < today:
        return None
    start = datetime.combine(day, time(COMPOSE_HOUR))
    if day == today and now.replace(tzinfo=None) >= start - timedelta(minutes=15):
        start = now.replace(tzinfo=None, minute=0, second=0, microsecond=0) + timedelta(hours=1)
        if start.date() != day:
            return None
    return start.strftime("%Y-%m-%dT%H:%M")


def build_days(page: Range, cards: Sequence[Placed], *, now: datetime) -> list[Day]:
    """The page's days with their cards (in time order), in the zone `now` is in."""
    today = now.date()
    days = {
        d: Day(
            date=d,
            in_range=page.first <= d < page.after,
            is_today=d == today,
            is_past=d < today,
            compose_at=_compose_at(d, now),
            relative={0: "Today", 1: "Tomorrow"}.get((d - today).days, ""),
        )
        for d in page.days()
    }
    for card in cards:
        day = days.get(card.local.date())
        if day is not None:
            day.items.append(card)
    return list(days.values())


def day_hours(day: date, zone: zoneinfo.ZoneInfo) -> list[datetime]:
    """The local starts of a day's hours, walked in UTC from one midnight to the next."""
    start = local_midnight(day, zone).astimezone(UTC)
    end = local_midnight(day + timedelta(days=1), zone).astimezone(UTC)
    hours: list[datetime] = []
    cursor = start
    while cursor < end:
        local = cursor.astimezone(zone)
        if local.minute == 0 or not hours:  # zones with half-hour shifts keep whole hours
            hours.append(local)
        cursor += timedelta(hours=1)
    return hours


def build_week(days: list[Day], *, now: datetime) -> list[HourRow]:
    """The week's hour rows. A row exists for every (hour, fold) any of its days has; a
    day without it (the gap of a spring-forward, or a day without the fall-back's second
    pass) gets None in that row. Cards go to the slot of their local hour."""
    zone = now.tzinfo
    assert isinstance(zone, zoneinfo.ZoneInfo)
    per_day = [day_hours(day.date, zone) for day in days]
    present = {(h.hour, h.fold) for hours in per_day for h in hours}
    rows = []
    for row_index, (hour, fold) in enumerate(sorted(present)):
        label = f"{hour:02d}:00"
        repeated = (hour, 1 - fold) in present
        if repeated:
            sample = next(h for hours in per_day for h in hours if (h.hour, h.fold) == (hour, fold))
            label = f"{label} {sample.tzname()}"
        cells: list[Slot | None] = []
        for column, hours in enumerate(per_day):
            start = next((h for h in hours if (h.hour, h.fold) == (hour, fold)), None)
            if start is None:
                cells.append(None)
                continue
            is_past = start.astimezone(UTC) + timedelta(hours=1) <= now
            cells.append(Slot(start, column, row_index, is_past))
        rows.append(HourRow(hour, fold, label, repeated and fold == 1, cells))
    for day, hours in zip(days, per_day, strict=True):
        day.hours = len(hours)
    by_key = {
        (slot.start.date(), slot.start.hour, slot.fold): slot
        for row in rows
        for slot in row.cells
        if slot is not None
    }
    for day in days:
        for card in day.items:
            local = card.local
            slot = by_key.get((local.date(), local.hour, local.fold)) or by_key.get(
                (local.date(), local.hour, 0)
            )
            if slot is not None:
                slot.items.append(card)
    return rows


def day_cells(days: list[date], zone: zoneinfo.ZoneInfo) -> list[tuple[datetime, datetime]]:
    """Each day's [start, end) instants."""
    return [(local_midnight(d, zone), local_midnight(d + timedelta(days=1), zone)) for d in days]


def hour_cells(days: list[date], zone: zoneinfo.ZoneInfo) -> list[tuple[datetime, datetime]]:
    """Each local hour's [start, end) instants, as the week grid has them (a skipped hour
    has none, a repeated one two)."""
    cells = []
    for d in days:
        starts = day_hours(d, zone) + [local_midnight(d + timedelta(days=1), zone)]
        pairs = zip(starts, starts[1:], strict=False)
        cells += [(a.astimezone(UTC), b.astimezone(UTC)) for a, b in pairs]
    return cells


def place_counts(
    days: list[Day], rows: list[HourRow], counts: dict[datetime, int], zone: zoneinfo.ZoneInfo
) -> None:
    """Add each counted instant's posts to its local day and, in the week, to its hour."""
    by_date = {day.date: day for day in days}
    by_key = {
        (slot.start.date(), slot.start.hour, slot.fold): slot
        for row in rows
        for slot in row.cells
        if slot is not None
    }
    for instant, n in counts.items():
        local = instant.astimezone(zone)
        day = by_date.get(local.date())
        if day is not None:
            day.count += n
        slot = by_key.get((local.date(), local.hour, local.fold)) or by_key.get(
            (local.date(), local.hour, 0)
        )
        if slot is not None:
            slot.count += n
