"""Creating, editing, rescheduling and cancelling publications.

Every client (web, API, admin, commands, the series materializer) writes publications
through these functions; a create is the create pipeline's batch of one
(``create_pipeline``). Each runs in one transaction and, for edits, under the
publication's row lock: the caller names the revision it edited, a stale one is refused
with REVISION_CONFLICT, and a successful edit bumps the revision in the same transaction.

Lock order, everywhere: the publication row, then the organization row (quotas), then
rendition rows (``apps.publishing.locks``). Delivery follows the same order.

Scheduling is all-or-nothing: a publication is scheduled only if every rendition that
becomes due passes the capability catalog, is not too far in the past, and fits its
account's daily cap. Drafts may be saved with problems (the composer shows them from
``apps.publishing.selectors.publication_problems``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone as django_timezone

from apps.accounts.models import User, Workspace
from apps.approvals.rule import check_may_schedule
from apps.common.errors import Conflict, ValidationFailed
from apps.publications import inputs
from apps.publications.inputs import DestinationInput, SegmentInput
from apps.publications.models import Publication
from apps.publications.scheduling import resolve_schedule as _resolve_schedule
from apps.publishing import quotas
from apps.publishing.delivery import enqueue
from apps.publishing.services import content as _content
from apps.publishing.services.approval import (
    approval_watch,
    check_approval_kept,
    client_approval_check,
)
from apps.publishing.services.checks import (
    FieldErrors,
    check_content_size,
    check_first_comment,
    check_reference_key,
    destination_times,
    input_texts,
    parse_status,
    resolve_time,
    save_publication,
    schedule_renditions,
)
from apps.publishing.services.create_pipeline import create_publications
from apps.publishing.services.edits import (
    apply_destinations,
    apply_intent,
    apply_segments,
)
from apps.publishing.services.status import publication_refresh_status
from apps.renditions.models import Rendition, RenditionSegment

R = Rendition.Status
P = Publication.Status

UPDATABLE = frozenset(
    {
        "segments",
        "destinations",
        "scheduled_at",
        "local_time",
        "timezone",
        "status",
        "reference_key",
        "first_comment",
    }
)


@transaction.atomic
def publication_create(
    *,
    workspace: Workspace,
    author: User | None,
    segments: list[dict],
    destinations: list[dict],
    scheduled_at: str | datetime | None = None,
    local_time: str | datetime | None = None,
    timezone: str | None = None,
    status: str = P.DRAFT,
    reference_key: str | None = None,
    first_comment: str | None = None,
    keep_rows: bool = False,
) -> Publication:
    """Create a publication and one rendition per destination account: the create
    pipeline (``create_pipeline``) with a batch of one, taken all or nothing.

    segments: [{"text": ..., "media": [{"id": media_id, "alt_text": ...}]}], in thread
    order. destinations: [{"account": social_account_id, "segments": optional override,
    "settings": {...}, "scheduled_at" or "local_time" (+ "timezone"): optional own time}].
    The time is an ISO instant (scheduled_at) or local_time + timezone (the workspace's
    zone when omitted); status "scheduled" without a time means now. first_comment: posted
    under each destination's post once it is live, where the platform takes comments.

    Errors: ValidationFailed (details by field path: "segments.0.text",
    "destinations.1.segments.0.text"...; code SCHEDULE_IN_PAST / INVALID_TIMEZONE /
    MISSING_UTC_OFFSET when that is the only problem), ApprovalRequired APPROVAL_REQUIRED
    when the author's posts need approval first (`apps.approvals.rule`), NotFound for
    accounts or media not in the workspace, Conflict REFERENCE_KEY_EXISTS (details with
    the publication_id holding it), QuotaExceeded MONTHLY_QUOTA_EXCEEDED or
    DAILY_CAP_EXCEEDED, ValidationFailed PUBLICATION_TOO_LARGE / FIRST_COMMENT_TOO_LONG.

    keep_rows: the publication comes back with its segments and renditions (and theirs)
    cached as written, to show them without reading them back; only for a caller that
    shows it at once (a later ``.all()`` on it would not see later changes).
    """
    [outcome] = create_publications(
        workspace=workspace,
        author=author,
        items=[
            {
                "segments": segments,
                "destinations": destinations,
                "scheduled_at": scheduled_at,
                "local_time": local_time,
                "timezone": timezone,
                "status": status,
                "reference_key": reference_key,
                "first_comment": first_comment,
            }
        ],
        existing_keys_answer=False,
        all_or_nothing=True,
        keep_rows=keep_rows,
    )
    assert outcome.publication is not None, "all or nothing: a refusal was raised"
    return outcome.publication


def _lock_for_edit(publication: Publication, expected_revision: Any) -> Publication:
    """The publication, locked, if expected_revision is current; REVISION_CONFLICT if not."""
    if isinstance(expected_revision, bool) or not isinstance(expected_revision, int):
        raise ValidationFailed(
            "expected_revision must be the revision the edit was made against.",
            details={"revision": ["An integer is required."]},
        )
    locked = Publication.objects.select_for_update().get(pk=publication.pk)
    if locked.revision != expected_revision:
        raise Conflict(
            f"The publication changed since revision {expected_revision}; it is now at "
            f"revision {locked.revision}. Reload it and apply the edit again.",
            code="REVISION_CONFLICT",
            details={"current_revision": locked.revision, "expected_revision": expected_revision},
        )
    if locked.status == P.CANCELLED:
        raise Conflict(
            "The publication is cancelled and can no longer change.",
            code="PUBLICATION_CANCELLED",
            details={"publication_id": locked.pk},
        )
    return locked


def _renditions(publication: Publication) -> list[Rendition]:
    return list(publication.renditions.select_related("social_account").order_by("pk"))


def _texts_after_edit(
    publication: Publication,
    renditions: list[Rendition],
    segments: list[SegmentInput] | None,
    destinations: list[DestinationInput] | None,
) -> Iterator[str]:
    """Every text the publication will hold once the edit applies: the new segments (else
    the current ones) and the destinations' own texts (the new list's, else the current
    overriding renditions')."""
    if segments is not None:
        yield from (seg.text for seg in segments)
    else:
        yield from publication.segments.values_list("text", flat=True)
    if destinations is not None:
        yield from input_texts([], destinations)
    else:
        overriding = [r.pk for r in renditions if r.overrides_content]
        if overriding:
            own = RenditionSegment.objects.filter(rendition_id__in=overriding)
            yield from (text or "" for text in own.values_list("own_text", flat=True))


def _bump(publication: Publication) -> None:
    publication.revision += 1
    save_publication(publication)


@dataclass
class _Edit:
    """An edit's parsed changes: None where a change was not asked for."""

    target: str | None = None
    segments: list[SegmentInput] | None = None
    destinations: list[DestinationInput] | None = None
    destination_times: Any = None
    reference_key: str | None = None
    first_comment: str = ""
    scheduled_at: datetime | None = None
    zone: str | None = None
    fields: frozenset[str] = frozenset()

    def asks(self, *names: str) -> bool:
        return bool(self.fields.intersection(names))


@transaction.atomic
def publication_update(
    *,
    publication: Publication,
    expected_revision: int,
    actor: User | None = None,
    **changes: Any,
) -> Publication:
    """Edit a publication made at expected_revision; returns it at the next revision.

    changes (each optional): segments (replace the source segments; renditions that follow
    the source and have not gone out are rewritten), destinations (replaces the list, each
    entry read as at creation: new accounts get renditions, missing ones are removed or
    cancelled, renditions that went out may only be listed unchanged), scheduled_at /
    local_time / timezone (as in publication_reschedule), status ("scheduled" schedules the
    drafts, "draft" unschedules, refused once anything started), reference_key,
    first_comment (for the posts still to go out: one already live keeps the comment it got).

    actor: the person making the edit; scheduling is refused (APPROVAL_REQUIRED) when their
    posts need approval first (``apps.approvals.rule``), and so is any change of theirs to
    what a post past draft says, where and when (``apps.publishing.services.approval``).
    None for work without a person.

    Errors: as publication_create, plus Conflict REVISION_CONFLICT (details with
    current_revision), PUBLICATION_CANCELLED, RENDITION_LOCKED, PUBLICATION_STARTED,
    ApprovalRequired APPROVAL_REQUIRED.
    """
    unknown = sorted(set(changes) - UPDATABLE)
    if unknown:
        raise ValidationFailed(
            f"Unknown fields: {', '.join(unknown)}.",
            details={name: ["Unknown field."] for name in unknown},
        )
    publication = _lock_for_edit(publication, expected_revision)
    watch = approval_watch(publication, actor)
    now = django_timezone.now()
    edit = _parse_edit(publication, changes, actor=actor, now=now)
    renditions = _renditions(publication)
    before = {r.pk: (r.status, r.effective_scheduled_at) for r in renditions}
    accounts, media = _check_edit(publication, renditions, edit)
    quotas.lock_organization(publication.workspace)
    _apply_fields(publication, edit)

    sources = list(publication.segments.order_by("position"))
    if edit.segments is not None:
        sources = apply_segments(publication, renditions, edit.segments, media)
    created: set[int] = set()
    if edit.destinations is not None:
        with_paths, created = apply_destinations(
            publication,
            renditions,
            edit.destinations,
            accounts=accounts,
            media=media,
            times=edit.destination_times,
            sources=sources,
        )
    else:
        with_paths = [(r, f"destinations.{i}") for i, r in enumerate(renditions)]
    _schedule_edited(publication, with_paths, edit, created=created, before=before, now=now)
    _bump(publication)
    publication = publication_refresh_status(publication)
    check_approval_kept(publication, watch)
    return client_approval_check(publication, actor)


def _parse_edit(
    publication: Publication, changes: dict[str, Any], *, actor: User | None, now: datetime
) -> _Edit:
    """The changes read and checked on their own; every field's error raised at once. A
    draft scheduled by someone whose posts need approval is refused before anything else."""
    errors = FieldErrors()
    edit = _Edit(fields=frozenset(changes))
    if "status" in changes:
        edit.target = parse_status(changes["status"], errors)
    if edit.target == P.SCHEDULED and publication.status == P.DRAFT:
        check_may_schedule(publication.workspace, actor)
    if "segments" in changes:
        edit.segments = inputs.parse_segments(
            changes["segments"], path="segments", errors=errors.details
        )
    if "destinations" in changes:
        edit.destinations = inputs.parse_destinations(
            changes["destinations"], errors=errors.details
        )
    if "reference_key" in changes:
        edit.reference_key = inputs.parse_reference_key(
            changes["reference_key"], errors=errors.details
        )
    if "first_comment" in changes:
        edit.first_comment = inputs.parse_first_comment(
            changes["first_comment"], errors=errors.details
        )
    if edit.asks("scheduled_at", "local_time", "timezone"):
        edit.scheduled_at, edit.zone = resolve_time(
            scheduled_at=changes.get("scheduled_at"),
            local_time=changes.get("local_time"),
            timezone=changes.get("timezone"),
            default_zone=publication.timezone,
            now=now,
            errors=errors,
        )
    edit.destination_times = destination_times(
        edit.destinations or [], default_zone=publication.timezone, now=now, errors=errors
    )
    errors.raise_if_any()
    return edit


def _check_edit(
    publication: Publication, renditions: list[Rendition], edit: _Edit
) -> tuple[dict, dict]:
    """The checks that need the stored publication: content size, a return to draft after
    something went out, the accounts and media named, the first comment's destinations.
    Returns the accounts and media the edit names."""
    check_content_size(_texts_after_edit(publication, renditions, edit.segments, edit.destinations))
    started = [r for r in renditions if r.status not in Rendition.NOT_STARTED | {R.CANCELLED}]
    if edit.target == P.DRAFT and started:
        raise Conflict(
            "Some destinations already went out or are in flight; the publication can no "
            "longer go back to draft. Cancel what is left instead.",
            code="PUBLICATION_STARTED",
            details={"renditions": [r.pk for r in started]},
        )
    accounts, media = _content.resolve_references(
        workspace=publication.workspace,
        segments=edit.segments or [],
        destinations=edit.destinations or [],
    )
    if edit.asks("first_comment") or edit.destinations is not None:
        # New destinations are checked against the comment the publication keeps.
        check_first_comment(
            edit.first_comment if edit.asks("first_comment") else publication.first_comment,
            accounts.values()
            if edit.destinations is not None
            else [r.social_account for r in renditions],
        )
    return accounts, media


def _apply_fields(publication: Publication, edit: _Edit) -> None:
    """The publication's own fields: first comment, reference key, time and zone."""
    if edit.asks("first_comment"):
        publication.first_comment = edit.first_comment
    if edit.asks("reference_key"):
        check_reference_key(publication.workspace, edit.reference_key, exclude_pk=publication.pk)
        publication.reference_key = edit.reference_key
    if edit.asks("scheduled_at", "local_time", "timezone"):
        if edit.asks("scheduled_at", "local_time"):
            publication.scheduled_at = edit.scheduled_at
        assert edit.zone is not None, "resolve_time leaves the zone out only with an error"
        publication.timezone = edit.zone


def _schedule_edited(
    publication: Publication,
    with_paths: list[tuple[Rendition, str]],
    edit: _Edit,
    *,
    created: set[int],
    before: dict[int, tuple[str, datetime | None]],
    now: datetime,
) -> None:
    """Apply the asked status, then (re)schedule what is due: renditions scheduled now and
    those whose time moved."""
    newly = apply_intent(publication, with_paths, target=edit.target, created=created, now=now)
    if edit.target == P.SCHEDULED and not with_paths:
        raise ValidationFailed(
            "Choose at least one destination to schedule.",
            details={"destinations": ["Choose at least one destination to schedule."]},
        )
    due = [(r, path) for r, path in with_paths if r.status == R.SCHEDULED or r.pk in newly]
    moved = {
        r.pk
        for r, _ in due
        if r.status == R.SCHEDULED and before.get(r.pk, (None, None))[1] != r.effective_scheduled_at
    }
    if due and publication.scheduled_at is None:
        raise ValidationFailed(
            "A scheduled publication needs a time.",
            details={"scheduled_at": ["Required while destinations are scheduled."]},
        )
    schedule_renditions(due, now=now, newly=newly, moved=moved)


@transaction.atomic
def publication_reschedule(
    *,
    publication: Publication,
    expected_revision: int,
    scheduled_at: str | datetime | None = None,
    local_time: str | datetime | None = None,
    timezone: str | None = None,
    actor: User | None = None,
) -> Publication:
    """Move the publication's time (an ISO instant, or local_time in timezone, by default
    the publication's own zone). Scheduled renditions that follow it become due at the new
    time (daily caps are checked against the new day); renditions with their own time, and
    failed ones waiting for a retry, keep theirs. actor: the person moving it (a move by
    someone whose posts need approval is refused, ``apps.publishing.services.approval``);
    None for work without a person.

    Errors: ValidationFailed (SCHEDULE_REQUIRED, SCHEDULE_IN_PAST, INVALID_TIMEZONE...),
    Conflict REVISION_CONFLICT / PUBLICATION_CANCELLED / NOTHING_TO_RESCHEDULE,
    QuotaExceeded DAILY_CAP_EXCEEDED, ApprovalRequired APPROVAL_REQUIRED.
    """
    publication = _lock_for_edit(publication, expected_revision)
    watch = approval_watch(publication, actor)
    now = django_timezone.now()
    new_time, zone = _resolve_schedule(
        scheduled_at=scheduled_at,
        local_time=local_time,
        timezone=timezone or publication.timezone,
        now=now,
    )
    renditions = _renditions(publication)
    if renditions and not any(r.status in Rendition.NOT_STARTED for r in renditions):
        raise Conflict(
            "Nothing is left to reschedule: every destination already went out, is in "
            "flight, failed or was cancelled.",
            code="NOTHING_TO_RESCHEDULE",
            details={"publication_id": publication.pk},
        )
    before = {r.pk: r.effective_scheduled_at for r in renditions}
    quotas.lock_organization(publication.workspace)
    publication.scheduled_at = new_time
    publication.timezone = zone
    due = [(r, f"destinations.{i}") for i, r in enumerate(renditions) if r.status == R.SCHEDULED]
    moved = {r.pk for r, _ in due if before[r.pk] != r.effective_scheduled_at}
    schedule_renditions(due, now=now, newly=set(), moved=moved)
    _bump(publication)
    publication = publication_refresh_status(publication)
    check_approval_kept(publication, watch)
    return client_approval_check(publication, actor)


@transaction.atomic
def publication_cancel(*, publication: Publication) -> Publication:
    """Cancel every destination that has not gone out: drafts, scheduled ones and clean
    failures. Published destinations stay on their platforms; ones in flight finish; an
    ambiguous failure stays for a person to resolve (the post may exist). Cancelling a
    cancelled publication changes nothing."""
    publication = Publication.objects.select_for_update().get(pk=publication.pk)
    if publication.status == P.CANCELLED:
        return publication
    renditions = _renditions(publication)
    cancellable = [
        r
        for r in renditions
        if r.status in Rendition.NOT_STARTED or (r.status == R.FAILED and not r.ambiguous)
    ]
    for rendition in cancellable:
        rendition.mark_cancelled()
        enqueue.rendition_cancel_delivery(rendition)
    if not renditions:
        publication.status = P.CANCELLED
    if cancellable or not renditions:
        _bump(publication)
    return publication_refresh_status(publication)
