"""Creating, editing, rescheduling and cancelling publications.

Every client (web, API, admin, commands, the series materializer) writes publications
through these functions. Each runs in one transaction and, for edits, under the
publication's row lock: the caller names the revision it edited, a stale one is refused
with REVISION_CONFLICT, and a successful edit bumps the revision in the same transaction.

Lock order, everywhere: the publication row, then the organization row (quotas), then
rendition rows. The publish pipeline follows the same order.

Scheduling is all-or-nothing: a publication is scheduled only if every rendition that
becomes due passes the capability catalog, is not too far in the past, and fits its
account's daily cap. Drafts may be saved with problems (the composer shows them from
``apps.publications.selectors.publication_problems``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone as django_timezone

from apps.accounts.models import SocialAccount, User, Workspace
from apps.common.errors import Conflict, ValidationFailed
from apps.publications import inputs, quotas
from apps.publications.inputs import DestinationInput, Errors, SegmentInput
from apps.publications.models import Publication, PublicationSegment
from apps.publications.scheduling import ScheduleError, check_not_in_past, get_zone
from apps.publications.scheduling import resolve_schedule as _resolve_schedule
from apps.publications.services import content as _content
from apps.publications.services.status import publication_refresh_status
from apps.renditions import delivery
from apps.renditions.models import Rendition
from apps.renditions.selectors import rendition_problems

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
    }
)
TARGET_STATUSES = (P.DRAFT, P.SCHEDULED)


class _Errors:
    """Field errors gathered across a request and raised once. When every error came from
    checks sharing one specific code (SCHEDULE_IN_PAST...), that code is kept; otherwise
    the code is VALIDATION_ERROR."""

    def __init__(self) -> None:
        self.details: Errors = {}
        self._coded_paths: set[str] = set()
        self._codes: set[str] = set()

    def absorb(self, exc: ValidationFailed) -> None:
        for path, messages in exc.details.items():
            self.details.setdefault(path, []).extend(messages)
            self._coded_paths.add(path)
        self._codes.add(exc.code)

    def raise_if_any(self, message: str = "The publication is not valid.") -> None:
        if not self.details:
            return
        code = None
        if len(self._codes) == 1 and set(self.details) <= self._coded_paths:
            code = next(iter(self._codes))
        raise ValidationFailed(message, code=code, details=self.details)


def _parse_status(value: Any, errors: _Errors) -> str | None:
    if value not in TARGET_STATUSES:
        errors.details["status"] = ["Must be draft or scheduled."]
        return None
    return value


def _resolve_time(
    *,
    scheduled_at: Any,
    local_time: Any,
    timezone: str | None,
    default_zone: str,
    now: datetime,
    errors: _Errors,
    prefix: str = "",
) -> tuple[datetime | None, str | None]:
    """(UTC instant or None, zone) for an optional schedule; errors are collected."""
    try:
        if scheduled_at is None and local_time is None:
            zone = timezone or default_zone
            get_zone(zone, field=f"{prefix}.timezone" if prefix else "timezone")
            return None, zone
        return _resolve_schedule(
            scheduled_at=scheduled_at,
            local_time=local_time,
            timezone=timezone or default_zone,
            now=now,
            field_prefix=prefix,
        )
    except ScheduleError as exc:
        errors.absorb(exc)
        return None, None


def _destination_times(
    destinations: list[DestinationInput], *, default_zone: str, now: datetime, errors: _Errors
) -> dict[str, datetime | None]:
    """Each destination's own schedule (None: it follows the publication), by path."""
    times: dict[str, datetime | None] = {}
    for dest in destinations:
        if not dest.has_own_schedule:
            if dest.timezone is not None:
                try:
                    get_zone(dest.timezone, field=f"{dest.path}.timezone")
                except ScheduleError as exc:
                    errors.absorb(exc)
            times[dest.path] = None
            continue
        times[dest.path], _zone = _resolve_time(
            scheduled_at=dest.scheduled_at,
            local_time=dest.local_time,
            timezone=dest.timezone,
            default_zone=default_zone,
            now=now,
            errors=errors,
            prefix=dest.path,
        )
    return times


def _check_reference_key(
    workspace: Workspace, key: str | None, *, exclude_pk: int | None = None
) -> None:
    if key is None:
        return
    existing = Publication.objects.for_workspace(workspace).filter(reference_key=key)
    if exclude_pk is not None:
        existing = existing.exclude(pk=exclude_pk)
    found = existing.values_list("pk", flat=True).first()
    if found is not None:
        raise _reference_key_exists(key, found)


def _reference_key_exists(key: str, publication_id: int | None) -> Conflict:
    return Conflict(
        f"A publication with reference_key '{key}' already exists in this workspace.",
        code="REFERENCE_KEY_EXISTS",
        details={"reference_key": key, "publication_id": publication_id},
    )


def _save_publication(publication: Publication) -> None:
    """full_clean and save; a reference_key taken by a concurrent writer is a Conflict."""
    publication.full_clean(exclude=["workspace", "author"], validate_constraints=False)
    try:
        with transaction.atomic():
            publication.save()
    except IntegrityError as exc:
        if "publication_reference_key_unique" not in str(exc):
            raise
        found = (
            Publication.objects.for_workspace(publication.workspace)
            .filter(reference_key=publication.reference_key)
            .values_list("pk", flat=True)
            .first()
        )
        raise _reference_key_exists(publication.reference_key, found) from None


def _time_path(rendition: Rendition, path: str) -> str:
    return f"{path}.scheduled_at" if rendition.scheduled_at is not None else "scheduled_at"


def _schedule(
    renditions: list[tuple[Rendition, str]],
    *,
    now: datetime,
    newly: set[int],
    moved: set[int],
) -> None:
    """The scheduling gate, then the transitions and delivery hooks.

    renditions: every rendition that is or becomes scheduled, with its field path
    ("destinations.N"); newly: those to move from draft to scheduled; moved: already
    scheduled ones whose effective time changed. Every problem of every one is reported
    at once (ValidationFailed); then daily caps (QuotaExceeded); only then is anything
    marked scheduled.
    """
    errors = _Errors()
    for rendition, path in renditions:
        for problem in rendition_problems(rendition):
            errors.details.setdefault(f"{path}.{problem.path}", []).append(problem.message)
        if rendition.social_account.status == SocialAccount.Status.DISABLED:
            errors.details.setdefault(f"{path}.account", []).append("This account is disabled.")
        if rendition.pk in newly | moved:
            try:
                check_not_in_past(
                    rendition.effective_scheduled_at,
                    now=now,
                    field=_time_path(rendition, path),
                )
            except ScheduleError as exc:
                errors.absorb(exc)
    errors.raise_if_any("The publication cannot be scheduled as it is.")

    due = [r for r, _path in renditions if r.pk in newly | moved]
    quotas.check_daily_caps(renditions=due, paths={r.pk: path for r, path in renditions})
    for rendition in due:
        if rendition.pk in newly:
            rendition.mark_scheduled()
        delivery.rendition_schedule_delivery(rendition)


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
) -> Publication:
    """Create a publication and one rendition per destination account.

    segments: [{"text": ..., "media": [{"id": media_id, "alt_text": ...}]}], in thread
    order. destinations: [{"account": social_account_id, "segments": optional override,
    "settings": {...}, "scheduled_at" or "local_time" (+ "timezone"): optional own time}].
    The time is an ISO instant (scheduled_at) or local_time + timezone (the workspace's
    zone when omitted); status "scheduled" without a time means now.

    Errors: ValidationFailed (details by field path: "segments.0.text",
    "destinations.1.segments.0.text"...; code SCHEDULE_IN_PAST / INVALID_TIMEZONE /
    MISSING_UTC_OFFSET when that is the only problem), NotFound for accounts or media not
    in the workspace, Conflict REFERENCE_KEY_EXISTS, QuotaExceeded MONTHLY_QUOTA_EXCEEDED
    or DAILY_CAP_EXCEEDED.
    """
    now = django_timezone.now()
    errors = _Errors()
    target = _parse_status(status, errors)
    seg_inputs = inputs.parse_segments(segments, path="segments", errors=errors.details)
    dest_inputs = inputs.parse_destinations(destinations, errors=errors.details)
    key = inputs.parse_reference_key(reference_key, errors=errors.details)
    if target == P.SCHEDULED and not dest_inputs and "destinations" not in errors.details:
        errors.details["destinations"] = ["Choose at least one destination to schedule."]
    pub_time, zone = _resolve_time(
        scheduled_at=scheduled_at,
        local_time=local_time,
        timezone=timezone,
        default_zone=workspace.default_timezone,
        now=now,
        errors=errors,
    )
    dest_times = _destination_times(
        dest_inputs, default_zone=zone or workspace.default_timezone, now=now, errors=errors
    )
    errors.raise_if_any()

    accounts, media = _content.resolve_references(
        workspace=workspace, segments=seg_inputs, destinations=dest_inputs
    )
    organization = quotas.lock_organization(workspace)
    _check_reference_key(workspace, key)
    quotas.check_monthly_quota(organization=organization, now=now)

    if target == P.SCHEDULED and pub_time is None:
        pub_time = now  # scheduled without a time: publish now
    publication = Publication(
        workspace=workspace,
        author=author,
        status=P.DRAFT,
        scheduled_at=pub_time,
        timezone=zone,
        reference_key=key,
    )
    _save_publication(publication)
    sources = _content.write_source_segments(publication, seg_inputs, media)
    source = _content.input_content(seg_inputs, media)
    renditions = []
    for dest in dest_inputs:
        content = _content.input_content(dest.segments, media) if dest.segments else source
        rendition = _content.create_rendition(
            publication=publication,
            account=accounts[dest.account_id],
            destination=dest,
            content=content,
            sources=sources,
            scheduled_at=dest_times[dest.path],
        )
        renditions.append((rendition, dest.path))

    if target == P.SCHEDULED:
        _schedule(renditions, now=now, newly={r.pk for r, _ in renditions}, moved=set())
    return publication_refresh_status(publication)


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


def _bump(publication: Publication) -> None:
    publication.revision += 1
    _save_publication(publication)


def _locked_rendition(rendition: Rendition, field: str, what: str) -> Conflict:
    account = rendition.social_account
    return Conflict(
        f"The {account.platform} destination @{account.handle} is {rendition.status}; {what}",
        code="RENDITION_LOCKED",
        details={
            "field": field,
            "rendition": rendition.pk,
            "account": account.pk,
            "status": rendition.status,
        },
    )


def _unschedule(rendition: Rendition, *, remove: bool) -> None:
    """Take a rendition off the schedule: back to draft, or removed from the publication
    (draft and scheduled ones are deleted, failed ones cancelled to keep their history)."""
    if remove and rendition.status == R.FAILED:
        rendition.mark_cancelled()
    elif rendition.status == R.SCHEDULED:
        rendition.mark_draft()
    delivery.rendition_cancel_delivery(rendition)
    if remove and rendition.status == R.DRAFT:
        rendition.delete()


def _apply_destinations(
    publication: Publication,
    renditions: list[Rendition],
    destinations: list[DestinationInput],
    *,
    accounts: dict[int, SocialAccount],
    media: dict,
    times: dict[str, datetime | None],
    sources: list[PublicationSegment],
) -> tuple[list[tuple[Rendition, str]], set[int]]:
    """Reconcile the renditions with a new destinations list (each entry read as at
    creation). Returns ([(rendition, path)] in the new order, ids of new renditions).
    Renditions that already went out (or are in flight, or cancelled) may be listed
    unchanged but not changed or removed."""
    by_account = {r.social_account_id: r for r in renditions}
    source = _content.source_content(publication)
    result: list[tuple[Rendition, str]] = []
    created: set[int] = set()
    for dest in destinations:
        rendition = by_account.pop(dest.account_id, None)
        own_time = times[dest.path]
        content = _content.input_content(dest.segments, media) if dest.segments else source
        if rendition is None:
            rendition = _content.create_rendition(
                publication=publication,
                account=accounts[dest.account_id],
                destination=dest,
                content=content,
                sources=sources,
                scheduled_at=own_time,
            )
            created.add(rendition.pk)
            result.append((rendition, dest.path))
            continue
        overrides = dest.segments is not None
        if overrides:
            content_changed = not rendition.overrides_content or (
                content != _content.rendition_content(rendition)
            )
        else:
            # Following the source: the segments step already rewrote it if it may change;
            # a rendition that went out keeps what it published.
            content_changed = rendition.overrides_content
        changed = (
            content_changed
            or dest.settings != rendition.settings
            or own_time != rendition.scheduled_at
        )
        if changed and not rendition.is_content_editable:
            raise _locked_rendition(rendition, dest.path, "it can no longer be changed.")
        if changed:
            rendition.settings = dest.settings
            rendition.scheduled_at = own_time
            rendition.overrides_content = overrides
            rendition.full_clean(
                exclude=["publication", "workspace", "social_account"],
                validate_unique=False,
                validate_constraints=False,
            )
            rendition.save(update_fields=["settings", "scheduled_at", "overrides_content"])
            if content_changed:
                _content.write_rendition_content(rendition, content, sources)
        result.append((rendition, dest.path))

    for rendition in by_account.values():
        if rendition.status == R.CANCELLED:
            continue
        if not rendition.is_content_editable:
            raise _locked_rendition(rendition, "destinations", "it cannot be removed.")
        _unschedule(rendition, remove=True)
    return result, created


@transaction.atomic
def publication_update(
    *, publication: Publication, expected_revision: int, **changes: Any
) -> Publication:
    """Edit a publication made at expected_revision; returns it at the next revision.

    changes (each optional): segments (replace the source segments; renditions that follow
    the source and have not gone out are rewritten), destinations (replaces the list, each
    entry read as at creation: new accounts get renditions, missing ones are removed or
    cancelled, renditions that went out may only be listed unchanged), scheduled_at /
    local_time / timezone (as in publication_reschedule), status ("scheduled" schedules the
    drafts, "draft" unschedules, refused once anything started), reference_key.

    Errors: as publication_create, plus Conflict REVISION_CONFLICT (details with
    current_revision), PUBLICATION_CANCELLED, RENDITION_LOCKED, PUBLICATION_STARTED.
    """
    unknown = sorted(set(changes) - UPDATABLE)
    if unknown:
        raise ValidationFailed(
            f"Unknown fields: {', '.join(unknown)}.",
            details={name: ["Unknown field."] for name in unknown},
        )
    publication = _lock_for_edit(publication, expected_revision)
    now = django_timezone.now()
    errors = _Errors()
    target = _parse_status(changes["status"], errors) if "status" in changes else None
    seg_inputs: list[SegmentInput] | None = None
    if "segments" in changes:
        seg_inputs = inputs.parse_segments(
            changes["segments"], path="segments", errors=errors.details
        )
    dest_inputs: list[DestinationInput] | None = None
    if "destinations" in changes:
        dest_inputs = inputs.parse_destinations(changes["destinations"], errors=errors.details)
    if "reference_key" in changes:
        key = inputs.parse_reference_key(changes["reference_key"], errors=errors.details)
    schedule_given = bool({"scheduled_at", "local_time", "timezone"} & set(changes))
    if schedule_given:
        new_time, zone = _resolve_time(
            scheduled_at=changes.get("scheduled_at"),
            local_time=changes.get("local_time"),
            timezone=changes.get("timezone"),
            default_zone=publication.timezone,
            now=now,
            errors=errors,
        )
    dest_times = _destination_times(
        dest_inputs or [], default_zone=publication.timezone, now=now, errors=errors
    )
    errors.raise_if_any()

    renditions = _renditions(publication)
    started = [r for r in renditions if r.status not in Rendition.NOT_STARTED | {R.CANCELLED}]
    if target == P.DRAFT and started:
        raise Conflict(
            "Some destinations already went out or are in flight; the publication can no "
            "longer go back to draft. Cancel what is left instead.",
            code="PUBLICATION_STARTED",
            details={"renditions": [r.pk for r in started]},
        )
    before = {r.pk: (r.status, r.effective_scheduled_at) for r in renditions}
    accounts, media = _content.resolve_references(
        workspace=publication.workspace, segments=seg_inputs or [], destinations=dest_inputs or []
    )
    quotas.lock_organization(publication.workspace)

    if "reference_key" in changes:
        _check_reference_key(publication.workspace, key, exclude_pk=publication.pk)
        publication.reference_key = key
    if schedule_given:
        if "scheduled_at" in changes or "local_time" in changes:
            publication.scheduled_at = new_time
        publication.timezone = zone

    sources = list(publication.segments.order_by("position"))
    if seg_inputs is not None:
        sources = _content.write_source_segments(publication, seg_inputs, media)
        source = _content.source_content(publication)
        for rendition in renditions:
            if not rendition.overrides_content and rendition.is_content_editable:
                _content.write_rendition_content(rendition, source, sources)

    created: set[int] = set()
    if dest_inputs is not None:
        with_paths, created = _apply_destinations(
            publication,
            renditions,
            dest_inputs,
            accounts=accounts,
            media=media,
            times=dest_times,
            sources=sources,
        )
    else:
        with_paths = [(r, f"destinations.{i}") for i, r in enumerate(renditions)]

    # Statuses: an explicit target wins; otherwise new destinations join the publication's
    # current intent (a draft stays a draft; anything else is due).
    intent = target or (P.DRAFT if publication.status == P.DRAFT else P.SCHEDULED)
    if intent == P.DRAFT:
        for rendition, _path in with_paths:
            if rendition.status == R.SCHEDULED:
                _unschedule(rendition, remove=False)
        newly: set[int] = set()
    else:
        newly = {r.pk for r, _ in with_paths if r.status == R.DRAFT}
        if target != P.SCHEDULED:
            newly &= created
        if newly and publication.scheduled_at is None:
            publication.scheduled_at = now

    if target == P.SCHEDULED and not with_paths:
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
    _schedule(due, now=now, newly=newly, moved=moved)
    _bump(publication)
    return publication_refresh_status(publication)


@transaction.atomic
def publication_reschedule(
    *,
    publication: Publication,
    expected_revision: int,
    scheduled_at: str | datetime | None = None,
    local_time: str | datetime | None = None,
    timezone: str | None = None,
) -> Publication:
    """Move the publication's time (an ISO instant, or local_time in timezone, by default
    the publication's own zone). Scheduled renditions that follow it become due at the new
    time (daily caps are checked against the new day); renditions with their own time, and
    failed ones waiting for a retry, keep theirs.

    Errors: ValidationFailed (SCHEDULE_REQUIRED, SCHEDULE_IN_PAST, INVALID_TIMEZONE...),
    Conflict REVISION_CONFLICT / PUBLICATION_CANCELLED / NOTHING_TO_RESCHEDULE,
    QuotaExceeded DAILY_CAP_EXCEEDED.
    """
    publication = _lock_for_edit(publication, expected_revision)
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
    _schedule(due, now=now, newly=set(), moved=moved)
    _bump(publication)
    return publication_refresh_status(publication)


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
        delivery.rendition_cancel_delivery(rendition)
    if not renditions:
        publication.status = P.CANCELLED
    if cancellable or not renditions:
        _bump(publication)
    return publication_refresh_status(publication)
