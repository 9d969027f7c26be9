"""Reading the queue: each account's upcoming posts in time order, which of them sit in a
slot, and the next slots still free."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Prefetch, prefetch_related_objects

from apps.accounts.models import SocialAccount, Workspace
from apps.planning.slots import WeeklySlots, slot_instants, weekly_slots_of
from apps.publications.models import PublicationSegment
from apps.renditions.models import Rendition

FREE_SLOTS_SHOWN = 5
# Posts a queue shows per account: each is a row of controls, so the page's cost follows
# this, not the length of the queue (the rest is in the posts list).
POSTS_SHOWN = 30
FREE_SLOTS_WINDOW = timedelta(days=28)
EVERGREEN_KEY_PREFIX = "evergreen-"  # apps.planning.recycling.reference_key


@dataclass
class QueuedPost:
    rendition: Rendition
    at: datetime
    is_slot: bool  # sits in one of the account's slots (else a time picked by hand)
    up: QueuedPost | None = None  # the movable neighbours it can swap with
    down: QueuedPost | None = None

    @property
    def publication(self):
        return self.rendition.publication

    @property
    def can_move(self) -> bool:
        """It follows its post's time, so a swap through the post's time moves it."""
        return self.rendition.scheduled_at is None

    @property
    def is_evergreen(self) -> bool:
        """A turn of an evergreen post (its reference key says so: no query)."""
        key = self.rendition.publication.reference_key or ""
        return key.startswith(EVERGREEN_KEY_PREFIX)

    @property
    def text(self) -> str:
        segments = list(self.rendition.publication.segments.all())
        return segments[0].text if segments else ""


@dataclass
class AccountQueue:
    account: SocialAccount
    slots: WeeklySlots
    posts: list[QueuedPost] = field(default_factory=list)
    free_slots: list[datetime] = field(default_factory=list)
    more: bool = False  # posts follow the ones shown


def account_queue(
    account: SocialAccount, *, now: datetime, limit: int = POSTS_SHOWN
) -> AccountQueue:
    """The account's scheduled posts from now on (at most limit), in time order, and its
    next free slots."""
    return account_queues([account], now=now, limit=limit)[0]


def workspace_queues(workspace: Workspace, *, now: datetime) -> list[AccountQueue]:
    """The queue of every account of the workspace that is not disabled."""
    accounts = list(
        SocialAccount.objects.for_workspace(workspace)
        .exclude(status=SocialAccount.Status.DISABLED)
        .select_related("workspace")
        .order_by("platform", "handle")
    )
    return account_queues(accounts, now=now)


def account_queues(
    accounts: Sequence[SocialAccount], *, now: datetime, limit: int = POSTS_SHOWN
) -> list[AccountQueue]:
    """`account_queue` of each account (of one workspace), in five queries whatever their
    number: their slots (two), their next posts, those posts and their texts."""
    if not accounts:
        return []
    slots = weekly_slots_of(accounts)
    upcoming = _upcoming(accounts, now=now, limit=limit)
    return [
        _account_queue(account, slots[account.pk], upcoming[account.pk], now=now, limit=limit)
        for account in accounts
    ]


def _upcoming(
    accounts: Sequence[SocialAccount], *, now: datetime, limit: int
) -> dict[int, list[Rendition]]:
    """The first `limit` + 1 scheduled renditions of each account from now on, in time
    order. Each account's are read from the partial index rendition_queue (account,
    effective time), its first entries whatever its history or other tenants, all in one
    statement (a UNION ALL of one bounded read per account)."""
    base = Rendition.objects.with_effective_scheduled_at().filter(
        status=Rendition.Status.SCHEDULED, effective_at__gte=now
    )
    parts = [
        base.filter(social_account=account).order_by("effective_at", "pk")[: limit + 1]
        for account in accounts
    ]
    rows = list(parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0])
    # The publications by id, not joined: a join lets the planner hash the whole
    # publications table when it misjudges how few rows the LIMIT keeps.
    prefetch_related_objects(
        rows,
        "publication",
        Prefetch("publication__segments", queryset=PublicationSegment.objects.order_by("position")),
    )
    by_account: dict[int, list[Rendition]] = {account.pk: [] for account in accounts}
    by_id = {account.pk: account for account in accounts}
    for rendition in sorted(rows, key=lambda r: (r.effective_at, r.pk)):
        rendition.social_account = by_id[rendition.social_account_id]
        by_account[rendition.social_account_id].append(rendition)
    return by_account


def _account_queue(
    account: SocialAccount,
    slots: WeeklySlots,
    renditions: list[Rendition],
    *,
    now: datetime,
    limit: int,
) -> AccountQueue:
    more = len(renditions) > limit
    timed = [(r, _at(r)) for r in renditions[:limit]]
    last = max([at for _, at in timed], default=now)
    until = max(last, now) + FREE_SLOTS_WINDOW
    instants = list(slot_instants(slots, after=now, until=until))
    slot_set = set(instants)
    taken = {at.replace(second=0, microsecond=0) for _, at in timed}
    queue = AccountQueue(account=account, slots=slots, more=more)
    queue.posts = [QueuedPost(rendition=r, at=at, is_slot=at in slot_set) for r, at in timed]
    movable = [post for post in queue.posts if post.can_move]
    for before, after in zip(movable, movable[1:], strict=False):
        before.down, after.up = after, before
    queue.free_slots = [at for at in instants if at not in taken][:FREE_SLOTS_SHOWN]
    return queue


def _at(rendition: Rendition) -> datetime:
    """Its effective time, which every rendition the queue reads has (it is filtered on)."""
    at = rendition.effective_at
    assert at is not None
    return at
