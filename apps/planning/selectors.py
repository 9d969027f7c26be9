"""Reading the queue: each account's upcoming posts in time order, which of them sit in a
slot, and the next slots still free."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Prefetch

from apps.accounts.models import SocialAccount, Workspace
from apps.planning.slots import WeeklySlots, slot_instants, weekly_slots
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
    next free slots. Read from the partial index rendition_queue (account, effective
    time): the first `limit` entries, whatever the account's history or other tenants."""
    slots = weekly_slots(account)
    renditions = list(
        Rendition.objects.with_effective_scheduled_at()
        .filter(
            social_account=account,
            status=Rendition.Status.SCHEDULED,
            effective_at__gte=now,
        )
        # The publications by id, not joined: a join lets the planner hash the whole
        # publications table when it misjudges how few rows the LIMIT keeps.
        .select_related("social_account")
        .prefetch_related(
            "publication",
            Prefetch(
                "publication__segments",
                queryset=PublicationSegment.objects.order_by("position"),
            ),
        )
        .order_by("effective_at", "pk")[: limit + 1]
    )
    more = len(renditions) > limit
    renditions = renditions[:limit]
    last = max([r.effective_at for r in renditions], default=now)
    until = max(last, now) + FREE_SLOTS_WINDOW
    instants = list(slot_instants(slots, after=now, until=until))
    slot_set = set(instants)
    taken = {r.effective_at.replace(second=0, microsecond=0) for r in renditions}
    queue = AccountQueue(account=account, slots=slots, more=more)
    queue.posts = [
        QueuedPost(rendition=r, at=r.effective_at, is_slot=r.effective_at in slot_set)
        for r in renditions
    ]
    movable = [post for post in queue.posts if post.can_move]
    for before, after in zip(movable, movable[1:], strict=False):
        before.down, after.up = after, before
    queue.free_slots = [at for at in instants if at not in taken][:FREE_SLOTS_SHOWN]
    return queue


def workspace_queues(workspace: Workspace, *, now: datetime) -> list[AccountQueue]:
    """The queue of every account of the workspace that is not disabled."""
    accounts = (
        SocialAccount.objects.for_workspace(workspace)
        .exclude(status=SocialAccount.Status.DISABLED)
        .select_related("workspace")
        .order_by("platform", "handle")
    )
    return [account_queue(account, now=now) for account in accounts]
