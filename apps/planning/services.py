"""Writing posting slots, and putting posts into the queue, moving and removing them.

The queue writes nothing of its own on a post: adding to the queue is scheduling the post
at its next free slot, reordering swaps two posts' times, removing turns it back into a
draft, all through the publishing services (revision-checked, the same gates and daily
caps as any schedule).

Lock order (the publishing services' order): the publications being changed, by id, then
the organization row. Holding the organization row while a slot is chosen serializes two
"add to queue" for the same organization, so both cannot take the same slot.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, time, timedelta

from django.db import transaction
from django.utils import timezone as django_timezone

from apps.accounts.models import SocialAccount, User, Workspace
from apps.approvals.rule import check_may_schedule
from apps.common.errors import Conflict, NotFound, ValidationFailed
from apps.planning.models import QueueSchedule, QueueSlot
from apps.planning.slots import next_common_slot
from apps.publications.inputs import parse_id
from apps.publications.models import Publication
from apps.publications.scheduling import get_zone
from apps.publishing import quotas
from apps.publishing.services import (
    publication_create,
    publication_reschedule,
    publication_update,
)
from apps.renditions.models import Rendition

P = Publication.Status
MAX_SLOTS = 7 * 24  # a slot an hour, every day of the week
_MINUTE = timedelta(minutes=1)


def _clean_slots(slots: Iterable[tuple[int, time]]) -> list[tuple[int, time]]:
    """Sorted, without duplicates, to the minute; a weekday out of 0..6 is refused."""
    clean: set[tuple[int, time]] = set()
    for index, (weekday, at) in enumerate(slots):
        if isinstance(weekday, bool) or not isinstance(weekday, int) or not 0 <= weekday <= 6:
            raise ValidationFailed(
                "A weekday is 0 (Monday) to 6 (Sunday).",
                details={f"slots.{index}.weekday": ["Must be a weekday, Monday to Sunday."]},
            )
        clean.add((weekday, at.replace(second=0, microsecond=0, tzinfo=None)))
    if len(clean) > MAX_SLOTS:
        raise ValidationFailed(
            f"At most {MAX_SLOTS} slots a week.",
            details={"slots": [f"At most {MAX_SLOTS} slots a week."]},
        )
    return sorted(clean)


@transaction.atomic
def queue_slots_replace(
    *,
    workspace: Workspace,
    account: SocialAccount | None = None,
    slots: Iterable[tuple[int, time]],
    timezone: str = "",
) -> QueueSchedule:
    """Make the workspace's default slots (account None) or the account's own slots
    exactly ``slots`` ((weekday 0-6, wall-clock time)) in ``timezone`` (blank: the
    workspace's zone). An account given its own set, even an empty one, no longer uses
    the default. Posts already queued keep their times.

    Errors: ValidationFailed (a weekday out of range, too many slots), INVALID_TIMEZONE,
    NotFound for an account of another workspace."""
    if account is not None and account.workspace_id != workspace.pk:
        raise NotFound("No such account in this workspace.", details={"account": account.pk})
    clean = _clean_slots(slots)
    if timezone:
        get_zone(timezone)
    schedule, _created = QueueSchedule.objects.select_for_update().get_or_create(
        workspace=workspace, social_account=account, defaults={"timezone": timezone}
    )
    if schedule.timezone != timezone:
        schedule.timezone = timezone
        schedule.full_clean(exclude=["workspace", "social_account"], validate_constraints=False)
        schedule.save(update_fields=["timezone", "updated_at"])
    schedule.slots.all().delete()
    QueueSlot.objects.bulk_create(
        QueueSlot(schedule=schedule, workspace=workspace, weekday=weekday, time=at)
        for weekday, at in clean
    )
    return schedule


@transaction.atomic
def queue_slots_reset(*, account: SocialAccount) -> None:
    """The account drops its own slots and follows the workspace's default again."""
    QueueSchedule.objects.filter(social_account=account).delete()


def _destination_accounts(workspace: Workspace, destinations: list[dict]) -> list[SocialAccount]:
    """The accounts the destinations name, from this workspace only (NotFound otherwise,
    like the publication services)."""
    ids = [parse_id(d.get("account")) if isinstance(d, dict) else None for d in destinations]
    found = {
        a.pk: a
        for a in SocialAccount.objects.for_workspace(workspace)
        .select_related("workspace")
        .filter(pk__in=[i for i in ids if i is not None])
    }
    missing = {
        f"destinations.{n}.account": ["No such account in this workspace."]
        for n, account_id in enumerate(ids)
        if account_id not in found
    }
    if missing:
        raise NotFound("Some destinations are not accounts of this workspace.", details=missing)
    return [found[i] for i in ids if i is not None]


@transaction.atomic
def queued_publication_create(
    *,
    workspace: Workspace,
    author: User | None,
    segments: list[dict],
    destinations: list[dict],
    first_comment: str | None = None,
    now: datetime | None = None,
) -> Publication:
    """Create a publication scheduled at the earliest slot free for every destination.

    Errors: as ``next_common_slot`` (NO_DESTINATIONS, NO_QUEUE_SLOTS, NO_COMMON_SLOT,
    QUEUE_FULL) and as ``publication_create``."""
    now = now or django_timezone.now()
    accounts = _destination_accounts(workspace, destinations)
    quotas.lock_organization(workspace)
    at, zone = next_common_slot(accounts, after=now)
    return publication_create(
        workspace=workspace,
        author=author,
        segments=segments,
        destinations=_without_own_times(destinations),
        scheduled_at=at,
        timezone=zone,
        status=P.SCHEDULED,
        first_comment=first_comment,
    )


def _without_own_times(destinations: list[dict]) -> list[dict]:
    """The destinations following the post's time (a queued post has one time)."""
    own = ("scheduled_at", "local_time", "timezone")
    return [{k: v for k, v in d.items() if k not in own} for d in destinations]


def _live_renditions(publication: Publication) -> list[Rendition]:
    return list(
        publication.renditions.exclude(status=Rendition.Status.CANCELLED)
        .select_related("social_account__workspace")
        .order_by("pk")
    )


def _as_destination(rendition: Rendition) -> dict:
    """The rendition as a destination entry that follows the publication's time."""
    entry: dict = {"account": rendition.social_account_id, "settings": rendition.settings}
    if rendition.overrides_content:
        entry["segments"] = [
            {
                "text": segment.text,
                "media": [{"id": m.media_id, "alt_text": m.alt_text} for m in segment.media.all()],
            }
            for segment in rendition.segments.order_by("position").prefetch_related("media")
        ]
    return entry


def _not_queueable(publication: Publication, why: str) -> Conflict:
    return Conflict(
        f"This post cannot go into the queue: {why}",
        code="NOT_QUEUEABLE",
        details={"publication_id": publication.pk, "status": publication.status},
    )


@transaction.atomic
def publication_queue(
    *,
    publication: Publication,
    expected_revision: int,
    segments: list[dict] | None = None,
    destinations: list[dict] | None = None,
    first_comment: str | None = None,
    now: datetime | None = None,
    actor: User | None = None,
) -> Publication:
    """Schedule a draft (or move a scheduled post) to the earliest slot free for every
    destination; its own slot does not count as taken. With segments, destinations or a
    first comment (the composer's edit), those replace the post's in the same revision. Destinations
    with a time of their own are brought back to the post's time.

    Errors: Conflict NOT_QUEUEABLE (cancelled, or a destination already went out or is in
    flight), the errors of ``next_common_slot``, and those of ``publication_update``
    (REVISION_CONFLICT, DAILY_CAP_EXCEEDED, APPROVAL_REQUIRED for an actor whose posts need
    approval...)."""
    now = now or django_timezone.now()
    locked = Publication.objects.select_for_update().get(pk=publication.pk)
    if locked.status == P.DRAFT:
        check_may_schedule(locked.workspace, actor)  # before looking for a slot
    if locked.status not in (P.DRAFT, P.SCHEDULED):
        raise _not_queueable(locked, f"it is {locked.status}.")
    renditions = _live_renditions(locked)
    if any(r.status not in Rendition.NOT_STARTED for r in renditions):
        raise _not_queueable(locked, "some destinations already went out or are in flight.")
    changes: dict = {"status": P.SCHEDULED}
    if segments is not None:
        changes["segments"] = segments
    if first_comment is not None:
        changes["first_comment"] = first_comment
    if destinations is not None:
        accounts = _destination_accounts(locked.workspace, destinations)
        changes["destinations"] = _without_own_times(destinations)
    else:
        accounts = [r.social_account for r in renditions]
        if any(r.scheduled_at is not None for r in renditions):
            changes["destinations"] = [_as_destination(r) for r in renditions]
    quotas.lock_organization(locked.workspace)
    at, zone = next_common_slot(accounts, after=now, exclude_publication_id=locked.pk)
    changes.update(scheduled_at=at, timezone=zone)
    return publication_update(
        publication=locked, expected_revision=expected_revision, actor=actor, **changes
    )


@transaction.atomic
def queue_remove(*, publication: Publication, expected_revision: int) -> Publication:
    """Take the post off the queue: back to a draft without a time, every destination
    unscheduled. Errors: those of ``publication_update`` (REVISION_CONFLICT,
    PUBLICATION_STARTED...)."""
    return publication_update(
        publication=publication,
        expected_revision=expected_revision,
        status=P.DRAFT,
        scheduled_at=None,
    )


def _slot_taken(rendition: Rendition, at: datetime) -> Conflict:
    account = rendition.social_account
    return Conflict(
        f"The post also goes to @{account.handle}, which already has a post at "
        f"{at:%Y-%m-%d %H:%M} UTC; the two cannot swap.",
        code="SLOT_TAKEN",
        details={"account": account.pk, "at": at.isoformat()},
    )


def _movable(rendition: Rendition, publication: Publication) -> datetime:
    """The time the rendition's post has in the queue, if it can move with it."""
    if rendition.status != Rendition.Status.SCHEDULED or publication.scheduled_at is None:
        raise _not_queueable(publication, "it is not scheduled any more.")
    if rendition.scheduled_at is not None:
        raise Conflict(
            f"The destination @{rendition.social_account.handle} has a time of its own; "
            "change it from the post's page.",
            code="OWN_TIME",
            details={"rendition": rendition.pk},
        )
    return publication.scheduled_at


@transaction.atomic
def queue_swap(
    *,
    first: Rendition,
    first_revision: int,
    second: Rendition,
    second_revision: int,
    actor: User | None = None,
) -> tuple[Publication, Publication]:
    """Swap the times of two queued posts of one account (each named by its rendition and
    the publication revision it was shown at), through ``publication_reschedule``. Their
    other destinations move with them, so a swap that would put two posts of one account
    in the same minute is refused.

    Errors: ValidationFailed (not the same account, the same post), Conflict
    REVISION_CONFLICT, NOT_QUEUEABLE, OWN_TIME, SLOT_TAKEN, DAILY_CAP_EXCEEDED, and
    APPROVAL_REQUIRED for an actor whose posts need approval (a swap moves two times)."""
    if first.social_account_id != second.social_account_id:
        raise ValidationFailed(
            "Only posts of the same account's queue can swap.",
            details={"rendition": ["Not in the same queue."]},
        )
    if first.publication_id == second.publication_id:
        raise ValidationFailed(
            "A post cannot swap with itself.", details={"rendition": ["The same post."]}
        )
    # Lock both publications in id order, before the organization row (the services' order).
    locked = {
        p.pk: p
        for p in Publication.objects.select_for_update()
        .filter(pk__in=[first.publication_id, second.publication_id])
        .order_by("pk")
    }
    one, two = locked[first.publication_id], locked[second.publication_id]
    for publication, revision in ((one, first_revision), (two, second_revision)):
        if publication.revision != revision:
            raise Conflict(
                f"The post changed since revision {revision}; it is now at revision "
                f"{publication.revision}. Reload the queue and move it again.",
                code="REVISION_CONFLICT",
                details={
                    "publication_id": publication.pk,
                    "current_revision": publication.revision,
                    "expected_revision": revision,
                },
            )
    first = Rendition.objects.select_related("social_account").get(pk=first.pk)
    second = Rendition.objects.select_related("social_account").get(pk=second.pk)
    at_one, at_two = _movable(first, one), _movable(second, two)
    _check_others_free(one, moving_to=at_two, pair={one.pk, two.pk})
    _check_others_free(two, moving_to=at_one, pair={one.pk, two.pk})
    one = publication_reschedule(
        publication=one, expected_revision=first_revision, scheduled_at=at_two, actor=actor
    )
    two = publication_reschedule(
        publication=two, expected_revision=second_revision, scheduled_at=at_one, actor=actor
    )
    return one, two


def _check_others_free(publication: Publication, *, moving_to: datetime, pair: set[int]) -> None:
    """Refuse the move when one of the post's destinations already posts in that minute
    (another post than the two swapping)."""
    minute = moving_to.replace(second=0, microsecond=0)
    for rendition in _live_renditions(publication):
        busy = (
            Rendition.objects.with_effective_scheduled_at()
            .filter(quotas.COUNTS_TOWARD_DAILY_CAP)
            .filter(
                social_account_id=rendition.social_account_id,
                effective_at__gte=minute,
                effective_at__lt=minute + _MINUTE,
            )
            .exclude(publication_id__in=pair)
            .exists()
        )
        if busy:
            raise _slot_taken(rendition, moving_to)
