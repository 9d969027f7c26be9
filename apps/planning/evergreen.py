"""Evergreen posts: marking posts (one, or a library of them) to be shared again, their
settings, and pause, resume, skip and stop. The re-shares themselves are made by
``apps.planning.recycling``.

Each change takes the evergreen post's row lock first (the recycler takes it too), so a
change and a look never cross: a paused or stopped post makes no turn after the change
commits, and the re-share it had waiting (made, not gone out) is withdrawn, its
publication cancelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.db import transaction
from django.utils import timezone as django_timezone

from apps.accounts.models import User, Workspace
from apps.common.errors import Conflict, NotFound, ValidationFailed
from apps.planning.models import MAX_EVERGREEN_DAYS, EvergreenPost, EvergreenShare
from apps.planning.recycling import lineage
from apps.publications.models import Publication
from apps.publishing.services import publication_cancel

E = EvergreenPost.Status
S = EvergreenShare.Status
P = Publication.Status

MAX_VARIATIONS = 20
MAX_VARIATION_LENGTH = 5000


@dataclass(frozen=True)
class EvergreenSettings:
    """What a team sets: the cadence, the gap per account, when to stop, other texts."""

    every_days: int = 28
    min_gap_days: int = 7
    max_shares: int | None = None
    ends_on: date | None = None
    variations: tuple[str, ...] = ()


def _checked(settings: EvergreenSettings) -> EvergreenSettings:
    """The settings with blank variations dropped; ValidationFailed by field otherwise."""
    errors: dict[str, list[str]] = {}
    if not 1 <= settings.every_days <= MAX_EVERGREEN_DAYS:
        errors["every_days"] = [f"From 1 to {MAX_EVERGREEN_DAYS} days."]
    if not 0 <= settings.min_gap_days <= MAX_EVERGREEN_DAYS:
        errors["min_gap_days"] = [f"From 0 to {MAX_EVERGREEN_DAYS} days."]
    if settings.max_shares is not None and settings.max_shares < 1:
        errors["max_shares"] = ["At least 1, or blank for no limit."]
    variations = tuple(text.strip() for text in settings.variations if text.strip())
    if len(variations) > MAX_VARIATIONS:
        errors["variations"] = [f"At most {MAX_VARIATIONS} variations."]
    elif any(len(text) > MAX_VARIATION_LENGTH for text in variations):
        errors["variations"] = [f"A variation is at most {MAX_VARIATION_LENGTH} characters."]
    if errors:
        raise ValidationFailed("The evergreen settings are not valid.", details=errors)
    return EvergreenSettings(
        every_days=settings.every_days,
        min_gap_days=settings.min_gap_days,
        max_shares=settings.max_shares,
        ends_on=settings.ends_on,
        variations=variations,
    )


def _apply(row: EvergreenPost, settings: EvergreenSettings) -> None:
    row.every_days = settings.every_days
    row.min_gap_days = settings.min_gap_days
    row.max_shares = settings.max_shares
    row.ends_on = settings.ends_on
    row.variations = list(settings.variations)


@transaction.atomic
def evergreen_mark(
    *,
    workspace: Workspace,
    publications: Sequence[Publication],
    actor: User | None,
    settings: EvergreenSettings,
) -> list[EvergreenPost]:
    """Mark each post evergreen with these settings (a library at once); its re-shares are
    made in ``actor``'s name, so through approval when their posts need it. A post already
    evergreen keeps its own settings and is returned as it is.

    Errors: NotFound (a post of another workspace), ValidationFailed (the settings; a
    cancelled post, which has nothing left to share)."""
    clean = _checked(settings)
    if any(p.workspace_id != workspace.pk for p in publications):
        raise NotFound("No such post in this workspace.")
    cancelled = [p.pk for p in publications if p.status == P.CANCELLED]
    if cancelled:
        raise ValidationFailed(
            "A cancelled post cannot be evergreen.", details={"publications": cancelled}
        )
    existing = {
        row.source_id: row
        for row in EvergreenPost.objects.for_workspace(workspace).filter(
            source__in=[p.pk for p in publications]
        )
    }
    now = django_timezone.now()
    marked = []
    for publication in publications:
        row = existing.get(publication.pk)
        if row is None:
            row = EvergreenPost(
                workspace=workspace, source=publication, created_by=actor, next_check_at=now
            )
            _apply(row, clean)
            row.save()
            existing[publication.pk] = row
        marked.append(row)
    return marked


def _locked(evergreen: EvergreenPost) -> EvergreenPost:
    return (
        EvergreenPost.objects.select_for_update(of=("self",))
        .select_related("workspace", "source")
        .get(pk=evergreen.pk)
    )


@transaction.atomic
def evergreen_update(*, evergreen: EvergreenPost, settings: EvergreenSettings) -> EvergreenPost:
    """New settings, looked at again at once (a re-share already waiting keeps its slot).
    Errors: ValidationFailed; Conflict EVERGREEN_ENDED once stopped."""
    clean = _checked(settings)
    row = _locked(evergreen)
    if row.status == E.ENDED:
        raise Conflict("This evergreen post has ended.", code="EVERGREEN_ENDED")
    _apply(row, clean)
    row.next_check_at = django_timezone.now()
    row.note = {}
    row.save()
    return row


def _withdraw_waiting(row: EvergreenPost, status: str) -> EvergreenShare | None:
    """The re-share made and not gone out yet: its publication cancelled, the turn marked
    ``status`` (it no longer counts toward the limit)."""
    waiting = lineage(row).pending(django_timezone.now())
    if waiting is None or waiting.publication is None:
        return None
    publication_cancel(publication=waiting.publication)
    waiting.status = status
    waiting.save(update_fields=["status", "updated_at"])
    row.shares_made = max(0, row.shares_made - 1)
    return waiting


@transaction.atomic
def evergreen_pause(*, evergreen: EvergreenPost) -> EvergreenPost:
    """No more turns until resumed; the re-share waiting is withdrawn."""
    row = _locked(evergreen)
    if row.status != E.ACTIVE:
        raise Conflict(f"This evergreen post is {row.status}.", code="NOT_ACTIVE")
    _withdraw_waiting(row, S.WITHDRAWN)
    row.status, row.paused_at = E.PAUSED, django_timezone.now()
    row.save()
    return row


@transaction.atomic
def evergreen_resume(*, evergreen: EvergreenPost) -> EvergreenPost:
    """Turns again, from now (the turns missed while paused are not made up)."""
    row = _locked(evergreen)
    if row.status != E.PAUSED:
        raise Conflict(f"This evergreen post is {row.status}.", code="NOT_PAUSED")
    row.status, row.paused_at = E.ACTIVE, None
    row.next_check_at, row.note = django_timezone.now(), {}
    row.save()
    return row


@transaction.atomic
def evergreen_stop(*, evergreen: EvergreenPost) -> EvergreenPost:
    """For good: no more turns, the re-share waiting withdrawn. Its past re-shares stay."""
    row = _locked(evergreen)
    if row.status == E.ENDED:
        return row
    _withdraw_waiting(row, S.WITHDRAWN)
    row.status, row.ended_at = E.ENDED, django_timezone.now()
    row.note = {"code": "STOPPED", "message": "Stopped by a person."}
    row.save()
    return row


@transaction.atomic
def evergreen_skip(*, evergreen: EvergreenPost, now: datetime | None = None) -> EvergreenShare:
    """Skip the next turn: the re-share waiting is cancelled, or, when none is made yet, the
    turn due next is recorded skipped. The cadence goes on from the skipped turn.
    Errors: Conflict NOT_ACTIVE."""
    now = now or django_timezone.now()
    row = _locked(evergreen)
    if row.status != E.ACTIVE:
        raise Conflict(f"This evergreen post is {row.status}.", code="NOT_ACTIVE")
    skipped = _withdraw_waiting(row, S.SKIPPED)
    if skipped is None:
        history = lineage(row)
        due = now
        if history.last_turn is not None:
            due = max(now, history.last_turn + timedelta(days=row.every_days))
        skipped = EvergreenShare.objects.create(
            evergreen=row,
            workspace_id=row.workspace_id,
            number=history.next_number,
            slot_at=due,
            status=S.SKIPPED,
            reason={"code": "SKIPPED", "message": "Skipped by a person."},
        )
    row.next_check_at, row.note = now, {}
    row.save()
    return skipped
