"""Recycling evergreen posts into free posting slots.

Each look at an active evergreen post (``evergreen_recycle``) works out its next turn:

1. when: ``every_days`` after its last turn (the source's time, or the last re-share's
   slot; a skipped turn counts), and on each destination not before ``min_gap_days`` after
   the post last went out there; a turn is made at most FILL_AHEAD before its slot, and
   never while the previous re-share has not gone out yet;
2. where: the destinations of the source still live; one where the platform refuses a post
   identical to one it already has (the catalog's ``duplicate_content_rejected``; within
   the adapter's ``duplicate_window`` where it has one, LinkedIn's day) and the text would
   repeat one sent there before is left out, and said so (``repeat_outlook``);
3. the slot: the earliest posting slot free for every destination left (the queue's own
   ``next_common_slot``, under the organization's lock, so two writers never take one
   slot), passed over where an account's previous post is this same post: never twice in
   a row on one account (an account that posts nothing else waits, and says so);
4. the write: one item through the create pipeline (its approval rule, quota and daily
   caps hold), with the reference key ``evergreen-<id>-<n>``; when the post's author needs
   an admin's approval, the copy is a draft at its slot, submitted for review.

A look that makes nothing saves why (``note``) and when to look again. Two recyclers never
make one turn twice: the post's row is taken with SKIP LOCKED, the turn's number and slot
are unique per post, and its reference key is unique in the workspace.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.db import transaction
from django.db.models import Q
from django.utils import timezone as django_timezone

from apps.accounts.models import Organization, SocialAccount
from apps.approvals.rule import needs_approval
from apps.common.errors import DomainError
from apps.planning.models import EvergreenPost, EvergreenShare
from apps.planning.selectors import EVERGREEN_KEY_PREFIX
from apps.planning.services import _as_destination
from apps.planning.slots import next_common_slot
from apps.providers.base import get_adapter
from apps.providers.catalog import UnknownPlatform, get_capabilities
from apps.publications.models import Publication
from apps.publishing import quotas
from apps.publishing.services.create_pipeline import OutcomeStatus, create_publications
from apps.publishing.services.reviews import review_submit
from apps.renditions.models import Rendition

logger = logging.getLogger(__name__)

P = Publication.Status
R = Rendition.Status
E = EvergreenPost.Status
S = EvergreenShare.Status

FILL_AHEAD = timedelta(days=7)  # a turn takes a slot at most this far ahead
RECHECK = timedelta(hours=1)  # no free slot, or refused: look again after this
SWEEP_BATCH = 200  # evergreen posts one sweep looks at (the rest at the next)
_MINUTE = timedelta(minutes=1)


def reference_key(evergreen: EvergreenPost, number: int) -> str:
    return f"{EVERGREEN_KEY_PREFIX}{evergreen.pk}-{number}"


@dataclass(frozen=True)
class DestinationOutlook:
    """What the next turn does on one destination of the source."""

    rendition: Rendition
    text: str  # the first part's text it would get
    refused: bool  # the platform would refuse it as a repeat: left out
    caution: str  # the platform's partial duplicate rule, shown as is ("" when none)

    @property
    def account(self) -> SocialAccount:
        return self.rendition.social_account


@dataclass
class Lineage:
    """The post's turns so far: the source and its re-shares."""

    shares: list[EvergreenShare]
    last_turn: datetime | None  # the source's time, or the latest share's slot
    last_out: dict[int, datetime] = field(default_factory=dict)  # per account
    # Per account, each first-part text it got from this post and when it last went out.
    sent: dict[int, dict[str, datetime]] = field(default_factory=dict)
    publication_ids: set[int] = field(default_factory=set)

    @property
    def next_number(self) -> int:
        return max((s.number for s in self.shares), default=0) + 1

    def pending(self, now: datetime) -> EvergreenShare | None:
        """The made re-share that has not gone out yet, if any."""
        for share in self.shares:
            publication = share.publication
            if (
                share.status == S.MADE
                and publication is not None
                and publication.status in (P.DRAFT, P.SCHEDULED)
                and share.slot_at > now
            ):
                return share
        return None


def _live_renditions(publication: Publication) -> list[Rendition]:
    return list(
        publication.renditions.exclude(status=R.CANCELLED)
        .select_related("social_account__workspace")
        .prefetch_related("segments")
        .order_by("pk")
    )


def _own_text(rendition: Rendition, fallback: str) -> str:
    """The first part's text the rendition sends: its own when it overrides the post's."""
    if not rendition.overrides_content:
        return fallback
    segments = sorted(rendition.segments.all(), key=lambda s: s.position)
    return segments[0].text if segments else ""


def _first_text(publication: Publication) -> str:
    first = publication.segments.order_by("position").first()
    return first.text if first is not None else ""


def lineage(evergreen: EvergreenPost) -> Lineage:
    """The source and its re-shares: the last turn, and per account when the post last went
    out (or will) and the texts it was given there."""
    shares = list(evergreen.shares.select_related("publication").order_by("number"))
    made = {s.publication_id: s for s in shares if s.status == S.MADE and s.publication_id}
    ids = {evergreen.source_id, *made}
    rows = (
        Rendition.objects.with_effective_scheduled_at()
        .filter(publication_id__in=ids)
        .filter(quotas.COUNTS_TOWARD_DAILY_CAP | Q(status=R.PUBLISHED))
        .prefetch_related("segments")
    )
    result = Lineage(shares=shares, last_turn=None, publication_ids=ids)
    source_text = _first_text(evergreen.source)
    for row in rows:
        share = made.get(row.publication_id)
        text = _own_text(row, share.text if share is not None else source_text)
        out_at = row.published_at or row.effective_at
        if out_at is not None:
            texts = result.sent.setdefault(row.social_account_id, {})
            texts[text] = max(out_at, texts.get(text, out_at))
            previous = result.last_out.get(row.social_account_id)
            result.last_out[row.social_account_id] = max(out_at, previous or out_at)
            if share is None:  # the source's own time starts the cadence
                result.last_turn = max(out_at, result.last_turn or out_at)
    counted = [s.slot_at for s in shares if s.status in (S.MADE, S.SKIPPED)]
    if counted:
        result.last_turn = max([*counted, *([result.last_turn] if result.last_turn else [])])
    return result


def _duplicate_rule(platform: str) -> bool | str:
    """The catalog's word on identical posts: True (refused), False, or a partial rule."""
    try:
        rule = get_capabilities(platform).raw.get("duplicate_content_rejected", False)
    except UnknownPlatform:
        return False
    return rule if isinstance(rule, str) else bool(rule)


# Platforms that refuse an identical post only right after the same one (Facebook's "(#506)
# Duplicate status message" is for consecutive statuses, docs/platforms/facebook.md): a
# turn never follows its own post on an account, so a repeat is taken there.
REFUSED_ONLY_RIGHT_AFTER = frozenset({"facebook"})


def _duplicate_window(platform: str) -> timedelta | None:
    """How long the platform may refuse an identical post, where its adapter knows: twice
    the adapter's window, the shortest the refusal lasts (LinkedIn's is said to last 24 to
    48 hours, docs/platforms/linkedin.md); None: for as long as it holds the first one."""
    try:
        window = get_adapter(platform).duplicate_window
    except LookupError:
        return None
    return None if window is None else 2 * window


def repeat_outlook(
    history: Lineage, renditions: list[Rendition], text: str, *, at: datetime
) -> list[DestinationOutlook]:
    """Per destination of the source, the text a turn at ``at`` would send there and
    whether the platform would refuse it as a repeat of one it already has from this post
    (within the platform's window, where it has one)."""
    outlook = []
    for rendition in renditions:
        sent_text = _own_text(rendition, text)
        rule = _duplicate_rule(rendition.platform)
        if rendition.platform in REFUSED_ONLY_RIGHT_AFTER:
            rule = False
        last = history.sent.get(rendition.social_account_id, {}).get(sent_text)
        window = _duplicate_window(rendition.platform)
        repeated = last is not None and (window is None or at - last < window)
        outlook.append(
            DestinationOutlook(
                rendition=rendition,
                text=sent_text,
                refused=rule is True and repeated,
                caution=rule if isinstance(rule, str) and repeated else "",
            )
        )
    return outlook


def _cadence_at(row: EvergreenPost, history: Lineage, now: datetime) -> datetime:
    """The earliest a turn may go out by the cadence alone."""
    if history.last_turn is None:
        return now
    return max(now, history.last_turn + timedelta(days=row.every_days))


def turn_text(evergreen: EvergreenPost, number: int) -> str:
    """The first part's text of turn ``number``: the texts taken in turn."""
    texts = evergreen.texts(_first_text(evergreen.source))
    return texts[number % len(texts)]


@dataclass(frozen=True)
class Look:
    """What one look did: ``share`` made (or skipped), else ``note`` says why not."""

    share: EvergreenShare | None = None
    note: dict = field(default_factory=dict)
    next_check_at: datetime | None = None


def _note(code: str, message: str, *, again: datetime | None) -> Look:
    return Look(note={"code": code, "message": message}, next_check_at=again)


def evergreen_recycle(
    *, evergreen: EvergreenPost, now: datetime | None = None, due_only: bool = False
) -> Look:
    """Look at one evergreen post now: make its next turn if one is due and a slot is free
    (see the module docstring), else save why not and when to look again.

    A post whose row another recycler holds is passed over (SKIP LOCKED): ``Look`` with
    note code BUSY, nothing saved. ``due_only``: pass over a post whose next look is not
    due (a sweep racing another that just looked at it)."""
    now = now or django_timezone.now()
    with transaction.atomic():
        rows = EvergreenPost.objects.select_for_update(skip_locked=True, of=("self",))
        if due_only:
            rows = rows.filter(next_check_at__lte=now)
        row = rows.select_related("workspace", "source", "created_by").filter(pk=evergreen.pk)
        locked = row.first()
        if locked is None:
            return _note("BUSY", "Another recycler is looking at it.", again=None)
        if locked.status != E.ACTIVE:
            return Look()
        look = _look(locked, now)
        _save_look(locked, look, now)
        return look


def _end(row: EvergreenPost, now: datetime, message: str) -> Look:
    row.status, row.ended_at = E.ENDED, now
    return _note("ENDED", message, again=None)


def _local_day_after_end(row: EvergreenPost, instant: datetime) -> bool:
    if row.ends_on is None:
        return False
    return instant.astimezone(ZoneInfo(row.workspace.default_timezone)).date() > row.ends_on


def _look(row: EvergreenPost, now: datetime) -> Look:
    if row.is_over_limit:
        return _end(row, now, f"It was shared again {row.shares_made} times, its limit.")
    if _local_day_after_end(row, now):
        return _end(row, now, f"Its end date, {row.ends_on:%Y-%m-%d}, has passed.")
    history = lineage(row)
    pending = history.pending(now)
    if pending is not None:
        return _note(
            "WAITING",
            f"Its re-share of {pending.slot_at:%Y-%m-%d %H:%M} UTC has not gone out yet.",
            again=pending.slot_at,
        )
    renditions = _live_renditions(row.source)
    if not renditions:
        return _note("NO_DESTINATIONS", "The post has no destination left.", again=now + FILL_AHEAD)
    number = history.next_number
    text = turn_text(row, number)
    outlook = repeat_outlook(history, renditions, text, at=_cadence_at(row, history, now))
    usable = [o for o in outlook if o.account.status != SocialAccount.Status.DISABLED]
    if not usable:
        return _note(
            "NO_DESTINATIONS", "Every destination's account is disabled.", again=now + FILL_AHEAD
        )
    kept = [o for o in usable if not o.refused]
    after = _earliest(row, history, kept, now)
    if after > now + FILL_AHEAD:
        return _note(
            "NOT_YET", f"Next turn from {after:%Y-%m-%d %H:%M} UTC.", again=after - FILL_AHEAD
        )
    if not kept:
        share = _skipped_turn(
            row, number, after, text, outlook, "Every destination would refuse the repeat."
        )
        return Look(share=share, next_check_at=now)
    found = _slot(row, [o.account for o in kept], own=history.publication_ids, after=after, now=now)
    if isinstance(found, Look):
        return found
    slot, zone = found
    if _local_day_after_end(row, slot):
        return _end(row, now, f"Its next slot falls after its end date, {row.ends_on:%Y-%m-%d}.")
    return _make(row, number=number, slot=slot, zone=zone, text=text, outlook=outlook, now=now)


def _earliest(
    row: EvergreenPost, history: Lineage, kept: list[DestinationOutlook], now: datetime
) -> datetime:
    """The first instant the turn may take: the cadence after the last turn, and the gap
    after the last time on each destination kept."""
    after = _cadence_at(row, history, now)
    gap = timedelta(days=row.min_gap_days)
    for item in kept:
        last = history.last_out.get(item.account.pk)
        if last is not None:
            after = max(after, last + gap)
    return after


def _skipped_turn(
    row: EvergreenPost,
    number: int,
    slot: datetime,
    text: str,
    outlook: list[DestinationOutlook],
    why: str,
) -> EvergreenShare:
    return EvergreenShare.objects.create(
        evergreen=row,
        workspace_id=row.workspace_id,
        number=number,
        slot_at=slot,
        text=text,
        status=S.SKIPPED,
        reason={"code": "REPEAT_REFUSED", "message": why},
        left_out=_left_out(outlook),
    )


def _left_out(outlook: list[DestinationOutlook]) -> list[dict]:
    return [
        {
            "account": o.account.pk,
            "handle": o.account.handle,
            "platform": o.rendition.platform,
            "reason": "repeat_refused" if o.refused else "disabled",
        }
        for o in outlook
        if o.refused or o.account.status == SocialAccount.Status.DISABLED
    ]


def _slot(
    row: EvergreenPost,
    accounts: list[SocialAccount],
    *,
    own: set[int],
    after: datetime,
    now: datetime,
) -> tuple[datetime, str] | Look:
    """The earliest slot from ``after`` free for every account, within FILL_AHEAD, not held
    by a re-share waiting for approval, and where no account's previous post is this same
    post (``own``: its publications), so it never goes out twice in a row on an account.
    Under the organization's lock, as every "add to queue" chooses its slot."""
    quotas.lock_organization(row.workspace)
    held = _held_by_drafts(row, accounts, now)
    start = max(now, after - timedelta(seconds=1))  # a slot exactly at ``after`` counts
    follows: SocialAccount | None = None
    while True:
        try:
            slot, zone = next_common_slot(accounts, after=start)
        except DomainError as exc:
            return _note(exc.code, exc.message, again=now + RECHECK)
        if slot > now + FILL_AHEAD:
            return _no_slot(accounts, follows, now)
        start = slot
        if any((a.pk, slot) in held for a in accounts):
            continue
        follows = _follows_itself(accounts, slot, own)
        if follows is None:
            return slot, zone


def _no_slot(accounts: list[SocialAccount], follows: SocialAccount | None, now: datetime) -> Look:
    if follows is not None:
        return _note(
            "FOLLOWS_ITSELF",
            f"Its last post on @{follows.handle} before each free slot of the next "
            f"{FILL_AHEAD.days} days is this same post; it waits until another post goes out "
            "there (never twice in a row on one account).",
            again=now + RECHECK,
        )
    handles = ", ".join(f"@{a.handle}" for a in accounts)
    return _note(
        "NO_FREE_SLOT",
        f"No posting slot of {handles} is free in the next {FILL_AHEAD.days} days.",
        again=now + RECHECK,
    )


def _follows_itself(
    accounts: list[SocialAccount], slot: datetime, own: set[int]
) -> SocialAccount | None:
    """The first account whose post just before the slot (gone out or to go) is this same
    post (its source or a re-share)."""
    for account in accounts:
        previous = (
            Rendition.objects.with_effective_scheduled_at()
            .filter(quotas.COUNTS_TOWARD_DAILY_CAP | Q(status=R.PUBLISHED))
            .filter(social_account=account, effective_at__lt=slot)
            .order_by("-effective_at", "-pk")
            .values_list("publication_id", flat=True)
            .first()
        )
        if previous in own:
            return account
    return None


def _held_by_drafts(
    row: EvergreenPost, accounts: list[SocialAccount], now: datetime
) -> set[tuple[int, datetime]]:
    """(account, slot) of re-shares waiting for approval: a draft holds no slot in the
    queue, but its turn was made for that slot."""
    waiting = EvergreenShare.objects.for_workspace(row.workspace_id).filter(
        status=S.MADE, publication__status=P.DRAFT, slot_at__gt=now
    )
    slots = dict(waiting.values_list("publication_id", "slot_at"))
    if not slots:
        return set()
    rows = (
        Rendition.objects.filter(publication_id__in=slots, social_account__in=accounts)
        .exclude(status=R.CANCELLED)
        .values_list("publication_id", "social_account_id")
    )
    return {(account_id, slots[publication_id]) for publication_id, account_id in rows}


def _item(
    row: EvergreenPost,
    *,
    number: int,
    slot: datetime,
    zone: str,
    text: str,
    kept: list[Rendition],
    status: str,
) -> dict:
    """The turn as the create pipeline takes an item: the source's parts and media, its
    first part's text the turn's, its destinations kept with their settings and texts."""
    segments = [
        {
            "text": segment.text,
            "media": [
                {"id": link.media_id, "alt_text": link.alt_text}
                for link in sorted(segment.media_links.all(), key=lambda m: m.position)
            ],
        }
        for segment in row.source.segments.order_by("position").prefetch_related("media_links")
    ]
    if segments:
        segments[0]["text"] = text
    return {
        "segments": segments or [{"text": text}],
        "destinations": [_as_destination(rendition) for rendition in kept],
        "scheduled_at": slot,
        "timezone": zone,
        "status": status,
        "reference_key": reference_key(row, number),
        "first_comment": row.source.first_comment,
    }


def _make(
    row: EvergreenPost,
    *,
    number: int,
    slot: datetime,
    zone: str,
    text: str,
    outlook: list[DestinationOutlook],
    now: datetime,
) -> Look:
    """Create the turn's publication through the create pipeline (a draft submitted for
    review when its author's posts need approval) and record the turn."""
    kept = [o.rendition for o in outlook if o.account.pk not in _left_out_ids(outlook)]
    review = needs_approval(row.workspace, row.created_by)
    item = _item(
        row,
        number=number,
        slot=slot,
        zone=zone,
        text=text,
        kept=kept,
        status=P.DRAFT if review else P.SCHEDULED,
    )
    [outcome] = create_publications(
        workspace=row.workspace,
        author=row.created_by,
        items=[item],
        existing_keys_answer=True,
        all_or_nothing=False,
    )
    if outcome.status == OutcomeStatus.ERROR or outcome.publication is None:
        error = outcome.error
        code, message = (error.code, error.message) if error else ("REFUSED", "Refused.")
        return _note(code, message, again=now + RECHECK)
    publication = outcome.publication
    if review and outcome.status == OutcomeStatus.CREATED:
        review_submit(
            publication=publication,
            expected_revision=publication.revision,
            actor=row.created_by,
            note=f"Evergreen re-share {number}.",
        )
    share = EvergreenShare.objects.create(
        evergreen=row,
        workspace_id=row.workspace_id,
        number=number,
        slot_at=slot,
        publication=publication,
        text=text,
        left_out=_left_out(outlook),
    )
    return Look(share=share, next_check_at=slot)


def _left_out_ids(outlook: list[DestinationOutlook]) -> set[int]:
    return {entry["account"] for entry in _left_out(outlook)}


def _save_look(row: EvergreenPost, look: Look, now: datetime) -> None:
    row.note = look.note
    if look.share is not None and look.share.status == S.MADE:
        row.shares_made += 1
        if row.is_over_limit:
            row.note = _end(row, now, f"Its last re-share ({row.shares_made}) is made.").note
    row.next_check_at = look.next_check_at
    row.save(
        update_fields=["shares_made", "status", "ended_at", "note", "next_check_at", "updated_at"]
    )


def evergreen_recycle_due(
    *, now: datetime | None = None, limit: int = SWEEP_BATCH, budget_s: float = 0.0
) -> int:
    """Look at the active evergreen posts of active organizations whose next look is due,
    soonest first, each in its own transaction (one that raises is looked at again after
    RECHECK, the others go on): batches of ``limit`` until none is left or ``budget_s`` of
    wall-clock time is spent (one batch with the default). Returns how many re-shares were
    made."""
    now = now or django_timezone.now()
    deadline = time.monotonic() + budget_s
    seen: set[int] = set()
    made = 0
    while True:
        due = (
            EvergreenPost.objects.due(now)
            .filter(workspace__organization__state=Organization.State.ACTIVE)
            .exclude(pk__in=seen)
            .order_by("next_check_at", "pk")
        )
        batch = list(due.values_list("pk", flat=True)[:limit])
        for pk in batch:
            seen.add(pk)
            made += _recycle_logged(pk, now)
        if len(batch) < limit or time.monotonic() >= deadline:
            return made


def _recycle_logged(pk: int, now: datetime) -> int:
    try:
        look = evergreen_recycle(evergreen=EvergreenPost(pk=pk), now=now, due_only=True)
    except Exception:
        # Pushed forward first, so one post that keeps failing cannot hold the sweep.
        EvergreenPost.objects.filter(pk=pk).update(next_check_at=now + RECHECK)
        logger.exception("Recycling evergreen post %s failed.", pk, extra={"evergreen": pk})
        return 0
    return int(look.share is not None and look.share.status == S.MADE)


@dataclass(frozen=True)
class NextTurn:
    """The next turn as it would be made now: its number, first-part text, and per
    destination whether the platform would take the repeat."""

    number: int
    text: str
    destinations: list[DestinationOutlook]


def next_turn(evergreen: EvergreenPost, now: datetime | None = None) -> NextTurn:
    history = lineage(evergreen)
    number = history.next_number
    text = turn_text(evergreen, number)
    renditions = _live_renditions(evergreen.source)
    at = _cadence_at(evergreen, history, now or django_timezone.now())
    return NextTurn(number, text, repeat_outlook(history, renditions, text, at=at))
