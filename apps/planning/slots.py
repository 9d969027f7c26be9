"""Weekly posting slots turned into instants, and the next slot free for a set of accounts.

A slot is free for an account when none of the account's posts that will or did go out
(the renditions a daily cap counts: scheduled, publishing, waiting, published, failed with
a retry pending or an unknown outcome) is due in that minute. A slot on a UTC day where the
account already has its platform's daily cap of posts is passed over.

A post with several destinations has one time (the publication's), so it takes the
earliest instant that is a free slot of every destination at once. Destinations with
different slots may have no instant in common: that is a NO_COMMON_SLOT refusal.

Daylight saving, read with the rules of ``apps.publications.scheduling``:

- a slot in a spring-forward gap moves forward by the gap (02:30 on a day Europe/Warsaw
  skips 02:00-03:00 is 03:30 that day); when that lands on another slot's instant the
  two are the same slot that day;
- a slot in a fall-back overlap happens once, at its first occurrence (02:30 CEST, not
  again at 02:30 CET).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db.models import Q

from apps.accounts.models import SocialAccount
from apps.common.errors import Conflict, ValidationFailed
from apps.planning.models import WEEKDAY_NAMES, EvergreenShare, QueueSchedule, QueueSlot
from apps.providers.catalog import UnknownPlatform, get_capabilities
from apps.publications.models import Publication
from apps.publications.scheduling import local_to_utc
from apps.publishing.quotas import COUNTS_TOWARD_DAILY_CAP
from apps.renditions.models import Rendition

# How far ahead a free slot is looked for (a queue full for a year is a full queue).
HORIZON = timedelta(days=366)


@dataclass(frozen=True)
class WeeklySlots:
    """The slots an account posts at: its own set, else its workspace's default."""

    zone_name: str
    times: tuple[tuple[int, time], ...]  # (weekday, wall-clock time), in week order
    is_own: bool  # the account's own set (False: the workspace default, or none at all)

    def describe(self) -> str:
        """ "Monday 09:00, 12:30 · Thursday 09:00 (Europe/Paris)", for messages and pages."""
        if not self.times:
            return "no slots"
        days: dict[int, list[str]] = {}
        for weekday, at in self.times:
            days.setdefault(weekday, []).append(f"{at:%H:%M}")
        text = " · ".join(f"{WEEKDAY_NAMES[day]} {', '.join(ts)}" for day, ts in days.items())
        return f"{text} ({self.zone_name})"


def weekly_slots(account: SocialAccount) -> WeeklySlots:
    """The account's own slots when it has its own set, else the workspace's default set."""
    own = QueueSchedule.objects.filter(social_account=account).first()
    schedule = own or (
        QueueSchedule.objects.filter(
            workspace_id=account.workspace_id, social_account__isnull=True
        ).first()
    )
    if schedule is None:
        return WeeklySlots(account.workspace.default_timezone, (), is_own=False)
    times = tuple(schedule.slots.order_by("weekday", "time").values_list("weekday", "time"))
    return WeeklySlots(schedule.zone_name, times, is_own=own is not None)


def weekly_slots_of(accounts: Sequence[SocialAccount]) -> dict[int, WeeklySlots]:
    """`weekly_slots` of each account (of one workspace), by account id, in two queries
    whatever their number: the schedules (each account's own and the default), then
    their slots."""
    if not accounts:
        return {}
    workspace_id = accounts[0].workspace_id
    schedules = list(
        QueueSchedule.objects.filter(workspace_id=workspace_id).filter(
            Q(social_account__isnull=True) | Q(social_account__in=[a.pk for a in accounts])
        )
    )
    times: dict[int, list[tuple[int, time]]] = {s.pk: [] for s in schedules}
    for schedule_id, weekday, at in (
        QueueSlot.objects.filter(workspace_id=workspace_id, schedule__in=[s.pk for s in schedules])
        .order_by("weekday", "time")
        .values_list("schedule_id", "weekday", "time")
    ):
        times[schedule_id].append((weekday, at))
    own = {s.social_account_id: s for s in schedules if s.social_account_id is not None}
    default = next((s for s in schedules if s.social_account_id is None), None)
    found: dict[int, WeeklySlots] = {}
    for account in accounts:
        schedule = own.get(account.pk) or default
        if schedule is None:
            found[account.pk] = WeeklySlots(account.workspace.default_timezone, (), is_own=False)
            continue
        zone = schedule.timezone or account.workspace.default_timezone
        found[account.pk] = WeeklySlots(zone, tuple(times[schedule.pk]), is_own=account.pk in own)
    return found


def slot_instants(slots: WeeklySlots, *, after: datetime, until: datetime) -> Iterator[datetime]:
    """The UTC instants of the slots strictly after ``after`` and before ``until``, in
    order, under the daylight-saving rules of the module docstring."""
    if not slots.times:
        return
    zone = ZoneInfo(slots.zone_name)
    day = after.astimezone(zone).date() - timedelta(days=1)  # a gap-moved slot of the eve
    by_weekday: dict[int, list[time]] = {}
    for weekday, at in slots.times:
        by_weekday.setdefault(weekday, []).append(at)
    while True:
        instants = sorted(
            {
                local_to_utc(datetime.combine(day, at), zone)
                for at in by_weekday.get(day.weekday(), ())
            }
        )
        for instant in instants:
            if instant >= until:
                return
            if instant > after:
                yield instant
        if datetime.combine(day, time.min, tzinfo=zone) > until:
            return
        day += timedelta(days=1)


def _daily_cap(platform: str) -> int | None:
    try:
        return get_capabilities(platform).daily_cap
    except UnknownPlatform:
        return None


class _Occupancy:
    """What the accounts already have between two instants: the minutes they post in and
    their number of posts per UTC day (one query for all accounts)."""

    def __init__(
        self,
        accounts: Sequence[SocialAccount],
        *,
        start: datetime,
        end: datetime,
        exclude_publication_id: int | None,
    ) -> None:
        rows = (
            Rendition.objects.with_effective_scheduled_at()
            .filter(COUNTS_TOWARD_DAILY_CAP)
            .filter(
                social_account__in=[a.pk for a in accounts],
                effective_at__gte=start,
                effective_at__lt=end,
            )
        )
        if exclude_publication_id is not None:
            rows = rows.exclude(publication_id=exclude_publication_id)
        self.minutes: set[tuple[int, datetime]] = set()
        self.per_day: Counter[tuple[int, date]] = Counter()
        for account_id, at in rows.values_list("social_account_id", "effective_at"):
            at = at.astimezone(UTC)
            self.minutes.add((account_id, at.replace(second=0, microsecond=0)))
            self.per_day[(account_id, at.date())] += 1
        for account_id, at in _held_by_evergreen_drafts(
            accounts, start=start, end=end, exclude_publication_id=exclude_publication_id
        ):
            self.minutes.add((account_id, at.astimezone(UTC).replace(second=0, microsecond=0)))

    def is_free(self, account: SocialAccount, instant: datetime, cap: int | None) -> bool:
        if (account.pk, instant.replace(second=0, microsecond=0)) in self.minutes:
            return False
        return cap is None or self.per_day[(account.pk, instant.astimezone(UTC).date())] < cap


def _held_by_evergreen_drafts(
    accounts: Sequence[SocialAccount],
    *,
    start: datetime,
    end: datetime,
    exclude_publication_id: int | None,
) -> list[tuple[int, datetime]]:
    """(account, slot) of evergreen re-shares waiting for approval: a draft counts toward
    no cap, but its turn was made for that slot and goes out there once approved, so no
    other post of the queue takes it meanwhile."""
    rows = Rendition.objects.filter(
        social_account__in=[a.pk for a in accounts],
        publication__status=Publication.Status.DRAFT,
        publication__evergreen_shares__status=EvergreenShare.Status.MADE,
        publication__evergreen_shares__slot_at__gte=start,
        publication__evergreen_shares__slot_at__lt=end,
    ).exclude(status=Rendition.Status.CANCELLED)
    if exclude_publication_id is not None:
        rows = rows.exclude(publication_id=exclude_publication_id)
    return list(rows.values_list("social_account_id", "publication__evergreen_shares__slot_at"))


def next_common_slot(
    accounts: Sequence[SocialAccount],
    *,
    after: datetime,
    exclude_publication_id: int | None = None,
) -> tuple[datetime, str]:
    """(UTC instant, zone name) of the earliest slot free for every account; the zone is
    the first account's slot zone (to show the time back as chosen).

    ``exclude_publication_id``: a publication being (re)queued does not occupy its own slot.
    Errors: ValidationFailed NO_DESTINATIONS, NO_QUEUE_SLOTS (an account has no slots, its
    own or its workspace's); Conflict NO_COMMON_SLOT (the accounts' slots never meet),
    QUEUE_FULL (every slot within HORIZON is taken or over a daily cap).
    """
    if not accounts:
        raise ValidationFailed(
            "Choose at least one destination to add to the queue.",
            code="NO_DESTINATIONS",
            details={"destinations": ["Choose at least one destination to add to the queue."]},
        )
    until = after + HORIZON
    weekly = [weekly_slots(account) for account in accounts]
    for account, slots in zip(accounts, weekly, strict=True):
        if not slots.times:
            raise ValidationFailed(
                f"@{account.handle} has no posting slots, so nothing can be added to its "
                "queue. Add slots on the Queue page (for the workspace or this account), "
                "or pick a date and time.",
                code="NO_QUEUE_SLOTS",
                details={"account": account.pk, "handle": account.handle},
            )
    others = [set(slot_instants(slots, after=after, until=until)) for slots in weekly[1:]]
    occupancy = _Occupancy(
        accounts,
        start=after - timedelta(days=1),
        end=until + timedelta(days=1),
        exclude_publication_id=exclude_publication_id,
    )
    caps = [_daily_cap(account.platform) for account in accounts]
    common = 0
    for instant in slot_instants(weekly[0], after=after, until=until):
        if not all(instant in instants for instants in others):
            continue
        common += 1
        if all(
            occupancy.is_free(account, instant, cap)
            for account, cap in zip(accounts, caps, strict=True)
        ):
            return instant, weekly[0].zone_name
    handles = ", ".join(f"@{a.handle}" for a in accounts)
    if common == 0:
        raise Conflict(
            f"{handles} have no posting slot in common, so one post cannot go to all of "
            "them from the queue. Give them the same slots, or add the post to each "
            "account's queue separately.",
            code="NO_COMMON_SLOT",
            details={"accounts": [a.pk for a in accounts]},
        )
    raise Conflict(
        f"Every posting slot of {handles} in the next {HORIZON.days} days is taken or over "
        "the platform's daily cap. Add slots, or pick a date and time.",
        code="QUEUE_FULL",
        details={"accounts": [a.pk for a in accounts]},
    )
