"""Writes of recurring series: create, edit, pause, resume, end, delete, and the
materializer that turns occurrences into real publications.

Materializing: every active series is expanded over its horizon (60 days by default) into
scheduled publications through ``publication_create``, one ``reference_key`` per
occurrence (``series-<id>-<local wall-clock ISO>``) and one SeriesOccurrence row, so a
re-run (or two runs at once) creates nothing twice.

Missed occurrences (the system was down, or the publication could not be created in time):
one missed by at most the series' ``late_window_minutes`` is published late, at once;
an older one is skipped. A materialized publication that has not started by its time plus
the window is cancelled by the next run (skipped), so a long outage does not send
yesterday's post; a worker that reaches it first publishes it late.

Editing: future occurrences not yet materialized always follow the edit. Already
materialized future ones are left as they are, or, with ``apply_to_materialized``,
replaced: their publications are cancelled (never one that started) and made again from
the edited series. Pausing stops materializing (``cancel_future`` also withdraws what is
already scheduled; occurrences that fall during the pause are not made up). Ending stops
for good (``cancel_future`` cancels the future publications).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import SocialAccount, User, Workspace
from apps.common.errors import Conflict, DomainError, NotFound, ValidationFailed
from apps.jobs.services import job_enqueue
from apps.publications import inputs
from apps.publications.models import MediaAsset, Publication
from apps.publications.scheduling import get_zone
from apps.publishing.services import (
    publication_cancel,
    publication_create,
    publication_update,
)
from apps.series import recurrence
from apps.series.constants import MATERIALIZE_ONE_JOB, MAX_OCCURRENCES_PER_RUN
from apps.series.models import (
    DEFAULT_HORIZON_DAYS,
    DEFAULT_LATE_WINDOW_MINUTES,
    Series,
    SeriesOccurrence,
)

logger = logging.getLogger(__name__)

Occ = SeriesOccurrence.Status
_UNSET: Any = object()
UPDATABLE = frozenset(
    {
        "name",
        "template",
        "rrule",
        "dtstart",
        "timezone",
        "count",
        "until",
        "late_window_minutes",
        "horizon_days",
    }
)
_SCHEDULE_FIELDS = frozenset({"rrule", "dtstart", "timezone", "count", "until"})
MAX_LATE_WINDOW_MINUTES = 7 * 24 * 60


def reference_key(series: Series, occurrence: recurrence.Occurrence) -> str:
    return f"series-{series.pk}-{occurrence.local_iso}"


# --- reading input -----------------------------------------------------------------------------


def _clean_template(workspace: Workspace, template: Any) -> dict:
    """{"segments": [...], "destinations": [...]} as publication_create reads them, every
    account and media in the workspace; destinations carry no time of their own (each
    occurrence gives it)."""
    if not isinstance(template, dict):
        raise ValidationFailed(
            "template must be an object {segments, destinations}.",
            details={"template": ["Must be an object {segments, destinations}."]},
        )
    errors: dict[str, list[str]] = {}
    for key in sorted(set(template) - {"segments", "destinations"}):
        errors[f"template.{key}"] = ["Unknown field."]
    segments = inputs.parse_segments(template.get("segments"), path="segments", errors=errors)
    destinations = inputs.parse_destinations(template.get("destinations"), errors=errors)
    if not destinations and "destinations" not in errors:
        errors["destinations"] = ["Choose at least one destination."]
    for dest in destinations:
        if dest.has_own_schedule or dest.timezone:
            errors[f"{dest.path}.scheduled_at"] = ["Each occurrence sets the time."]
    if errors:
        raise ValidationFailed(
            "The series template is not valid.",
            details={
                (k if k.startswith("template.") else f"template.{k}"): v for k, v in errors.items()
            },
        )
    media_ids = {ref.media_id for seg in segments for ref in seg.media}
    for dest in destinations:
        media_ids |= {ref.media_id for seg in dest.segments or [] for ref in seg.media}
    found_media = set(
        MediaAsset.objects.for_workspace(workspace)
        .filter(pk__in=media_ids)
        .values_list("pk", flat=True)
    )
    account_ids = {dest.account_id for dest in destinations}
    found_accounts = set(
        SocialAccount.objects.for_workspace(workspace)
        .filter(pk__in=account_ids)
        .values_list("pk", flat=True)
    )
    missing = {}
    if media_ids - found_media:
        missing["template.segments"] = ["Some media do not exist in this workspace."]
    for dest in destinations:
        if dest.account_id not in found_accounts:
            missing[f"template.{dest.path}.account"] = ["No such account in this workspace."]
    if missing:
        raise NotFound("Some referenced accounts or media do not exist.", details=missing)
    return {"segments": template.get("segments"), "destinations": template.get("destinations")}


@dataclass
class _Schedule:
    rrule: str
    dtstart: str
    timezone: str
    count: int | None
    until: datetime | None


def _clean_schedule(
    *, rrule: Any, dtstart: Any, timezone_name: Any, count: Any, until: Any
) -> _Schedule:
    zone_name = timezone_name if isinstance(timezone_name, str) else None
    get_zone(zone_name)
    start = recurrence.parse_local(dtstart, field="dtstart")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValidationFailed(
            "count must be a positive whole number.", details={"count": ["At least 1."]}
        )
    until_utc = recurrence.parse_until(until, zone_name)
    if count is not None and until_utc is not None:
        raise ValidationFailed(
            "Give count or until, not both.", details={"until": ["Give count or until."]}
        )
    recurrence.build_rule(rrule, dtstart=start, count=count)
    text = rrule.strip()
    text = text[len("RRULE:") :] if text.upper().startswith("RRULE:") else text
    return _Schedule(
        rrule=text.upper(),
        dtstart=recurrence.format_local(start),
        timezone=zone_name,
        count=count,
        until=until_utc,
    )


def _check_numbers(series: Series) -> None:
    if not 0 <= series.late_window_minutes <= MAX_LATE_WINDOW_MINUTES:
        raise ValidationFailed(
            f"late_window_minutes must be between 0 and {MAX_LATE_WINDOW_MINUTES}.",
            details={"late_window_minutes": [f"Between 0 and {MAX_LATE_WINDOW_MINUTES}."]},
        )
    try:
        series.full_clean(exclude=["workspace", "created_by", "template"])
    except ValidationError as exc:
        raise ValidationFailed("The series is not valid.", details=exc.message_dict) from exc


def _int_or_error(value: Any, field_name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationFailed(
            f"{field_name} must be a whole number.", details={field_name: ["A whole number."]}
        )
    return value


# --- the rule of one series ------------------------------------------------------------------


def series_rule(series: Series):
    return recurrence.build_rule(
        series.rrule,
        dtstart=recurrence.parse_local(series.dtstart, field="dtstart"),
        count=series.count,
    )


def series_occurrences(
    series: Series,
    *,
    after: datetime,
    through: datetime,
    limit: int | None = None,
) -> list[recurrence.Occurrence]:
    """The series' occurrences in (after, through], by its rule, zone, count and until."""
    return recurrence.expand(
        series_rule(series),
        zone=get_zone(series.timezone),
        after=after,
        through=through,
        until=series.until,
        limit=limit,
    )


@dataclass(frozen=True)
class PreviewItem:
    local: str  # wall-clock, in the series' zone
    scheduled_at: datetime  # UTC
    status: str | None  # the occurrence's status when already handled
    publication_id: int | None


def series_preview(
    *, series: Series, limit: int = 10, now: datetime | None = None
) -> list[PreviewItem]:
    """The next `limit` occurrences after now, with local and UTC times, and what became
    of each one already materialized."""
    now = now or timezone.now()
    limit = max(1, min(int(limit), 100))
    found = series_occurrences(
        series, after=now, through=now + timedelta(days=5 * 366), limit=limit
    )
    handled = {
        occ.local_start: occ
        for occ in series.occurrences.current().filter(local_start__in=[o.local_iso for o in found])
    }
    return [
        PreviewItem(
            local=o.local_iso,
            scheduled_at=o.utc,
            status=handled[o.local_iso].status if o.local_iso in handled else None,
            publication_id=handled[o.local_iso].publication_id if o.local_iso in handled else None,
        )
        for o in found
    ]


def schedule_preview(
    *,
    rrule: str,
    dtstart: str,
    timezone_name: str,
    count: int | None = None,
    until: Any = None,
    limit: int = 10,
    now: datetime | None = None,
) -> list[recurrence.Occurrence]:
    """The next occurrences of a schedule that is not saved yet (the composer's preview)."""
    now = now or timezone.now()
    schedule = _clean_schedule(
        rrule=rrule, dtstart=dtstart, timezone_name=timezone_name, count=count, until=until
    )
    rule = recurrence.build_rule(
        schedule.rrule,
        dtstart=recurrence.parse_local(schedule.dtstart, field="dtstart"),
        count=schedule.count,
    )
    return recurrence.expand(
        rule,
        zone=get_zone(schedule.timezone),
        after=now,
        through=now + timedelta(days=5 * 366),
        until=schedule.until,
        limit=max(1, min(int(limit), 100)),
    )


# --- lifecycle --------------------------------------------------------------------------------


def _enqueue_materialize(series: Series) -> None:
    """Materialize soon, in a job (a long horizon makes many publications)."""
    job_enqueue(
        type=MATERIALIZE_ONE_JOB,
        payload={"series_id": series.pk},
        organization=None,
        workspace=series.workspace,
        dedupe_key=f"series-materialize:{series.pk}",
    )


@transaction.atomic
def series_create(
    *,
    workspace: Workspace,
    name: str,
    template: dict,
    rrule: str,
    dtstart: str | datetime,
    timezone: str | None = None,
    count: int | None = None,
    until: str | datetime | None = None,
    late_window_minutes: int = DEFAULT_LATE_WINDOW_MINUTES,
    horizon_days: int = DEFAULT_HORIZON_DAYS,
    created_by: User | None = None,
) -> Series:
    """Create an active series (timezone: the workspace's by default). Its occurrences
    from now on become publications (by a job, shortly); earlier ones are not made up.

    Errors: ValidationFailed (INVALID_RRULE, INVALID_DATETIME, LOCAL_TIME_HAS_OFFSET,
    INVALID_TIMEZONE, details by field, "template.segments.0.text"...), NotFound for
    accounts or media not in the workspace.
    """
    schedule = _clean_schedule(
        rrule=rrule,
        dtstart=dtstart,
        timezone_name=timezone or workspace.default_timezone,
        count=count,
        until=until,
    )
    series = Series(
        workspace=workspace,
        name=(name or "").strip(),
        template=_clean_template(workspace, template),
        rrule=schedule.rrule,
        dtstart=schedule.dtstart,
        timezone=schedule.timezone,
        count=schedule.count,
        until=schedule.until,
        late_window_minutes=_int_or_error(late_window_minutes, "late_window_minutes"),
        horizon_days=_int_or_error(horizon_days, "horizon_days"),
        created_by=created_by,
    )
    _check_numbers(series)
    series.materialized_through = _now()
    series.save()
    _enqueue_materialize(series)
    return series


def _now() -> datetime:
    # series_create's `timezone` argument shadows django.utils.timezone there.
    return timezone.now()


@transaction.atomic
def series_update(*, series: Series, apply_to_materialized: bool = False, **changes: Any) -> Series:
    """Edit the series. Occurrences not yet materialized follow the edit; materialized
    future ones are left, or replaced when ``apply_to_materialized`` (their publications
    cancelled, unless they started, and made again from the edited series).

    changes: name, template, rrule, dtstart, timezone, count, until, late_window_minutes,
    horizon_days. Errors as series_create, plus Conflict SERIES_ENDED.
    """
    unknown = sorted(set(changes) - UPDATABLE)
    if unknown:
        raise ValidationFailed(
            f"Unknown fields: {', '.join(unknown)}.",
            details={name: ["Unknown field."] for name in unknown},
        )
    series = _lock(series)
    if series.status == Series.Status.ENDED:
        raise Conflict("The series has ended.", code="SERIES_ENDED", details={"id": series.pk})
    if "name" in changes:
        series.name = (changes["name"] or "").strip()
    if "template" in changes:
        series.template = _clean_template(series.workspace, changes["template"])
    if _SCHEDULE_FIELDS & set(changes):
        schedule = _clean_schedule(
            rrule=changes.get("rrule", series.rrule),
            dtstart=changes.get("dtstart", series.dtstart),
            timezone_name=changes.get("timezone", series.timezone),
            count=changes.get("count", series.count),
            until=changes.get("until", series.until),
        )
        series.rrule, series.dtstart, series.timezone = (
            schedule.rrule,
            schedule.dtstart,
            schedule.timezone,
        )
        series.count, series.until = schedule.count, schedule.until
    if "late_window_minutes" in changes:
        series.late_window_minutes = _int_or_error(
            changes["late_window_minutes"], "late_window_minutes"
        )
    if "horizon_days" in changes:
        series.horizon_days = _int_or_error(changes["horizon_days"], "horizon_days")
    _check_numbers(series)
    now = _now()
    if apply_to_materialized and ({"template"} | _SCHEDULE_FIELDS) & set(changes):
        _withdraw_future(series, now=now, status=Occ.SUPERSEDED)
        series.materialized_through = now
    series.save()
    if series.status == Series.Status.ACTIVE:
        _enqueue_materialize(series)
    return series


@transaction.atomic
def series_pause(*, series: Series, cancel_future: bool = False) -> Series:
    """Stop materializing. Publications already made still go out, unless
    ``cancel_future`` withdraws those that have not started."""
    series = _lock(series)
    if series.status != Series.Status.ACTIVE:
        raise Conflict(
            f"Only an active series can be paused; this one is {series.status}.",
            code="SERIES_NOT_ACTIVE",
            details={"status": series.status},
        )
    now = _now()
    if cancel_future:
        _withdraw_future(series, now=now, status=Occ.SUPERSEDED)
        series.materialized_through = now
    series.status = Series.Status.PAUSED
    series.paused_at = now
    series.save()
    return series


@transaction.atomic
def series_resume(*, series: Series) -> Series:
    """Materialize again from now on; occurrences that fell during the pause are skipped."""
    series = _lock(series)
    if series.status != Series.Status.PAUSED:
        raise Conflict(
            f"Only a paused series can be resumed; this one is {series.status}.",
            code="SERIES_NOT_PAUSED",
            details={"status": series.status},
        )
    now = _now()
    series.status = Series.Status.ACTIVE
    series.paused_at = None
    series.materialized_through = max(series.materialized_through or now, now)
    series.save()
    _enqueue_materialize(series)
    return series


@transaction.atomic
def series_end(*, series: Series, cancel_future: bool = False) -> Series:
    """End the series for good; ``cancel_future`` cancels its future publications that
    have not started. Ending an ended series changes nothing."""
    series = _lock(series)
    if series.status == Series.Status.ENDED:
        return series
    now = _now()
    if cancel_future:
        _withdraw_future(series, now=now, status=Occ.CANCELLED)
    series.status = Series.Status.ENDED
    series.ended_at = now
    series.save()
    return series


@transaction.atomic
def series_delete(*, series: Series) -> None:
    """Delete the series and its occurrence log; its future publications that have not
    started are cancelled, the others (and everything already published) stay."""
    series = _lock(series)
    _withdraw_future(series, now=_now(), status=Occ.CANCELLED)
    series.delete()


def _lock(series: Series) -> Series:
    return Series.objects.select_for_update().select_related("workspace").get(pk=series.pk)


def _withdraw_future(series: Series, *, now: datetime, status: str) -> int:
    """Cancel the publications of future materialized occurrences that have not started,
    and mark those occurrences `status`. A superseded occurrence gives its reference key
    back, so the series can materialize the same wall-clock time again."""
    withdrawn = 0
    future = (
        series.occurrences.filter(status=Occ.MATERIALIZED, scheduled_at__gt=now)
        .select_related("publication")
        .order_by("scheduled_at")
    )
    for occurrence in future:
        publication = occurrence.publication
        if publication is not None:
            if publication.status not in (Publication.Status.SCHEDULED, Publication.Status.DRAFT):
                continue  # it started (or was cancelled by a person): leave it
            if status == Occ.SUPERSEDED:
                _release_reference_key(publication)
            publication_cancel(publication=publication)
        occurrence.status = status
        occurrence.save(update_fields=["status", "updated_at"])
        withdrawn += 1
    return withdrawn


def _release_reference_key(publication: Publication) -> None:
    try:
        with transaction.atomic():
            current = Publication.objects.get(pk=publication.pk)
            publication_update(
                publication=current, expected_revision=current.revision, reference_key=None
            )
    except DomainError:
        logger.warning(
            "Could not release the reference key of publication %s.",
            publication.pk,
            extra={"publication_id": publication.pk},
        )


# --- materializing -------------------------------------------------------------------------


@dataclass
class MaterializeResult:
    created: list[int] = field(default_factory=list)  # publication ids
    late: int = 0
    skipped: int = 0
    failed: int = 0
    expired: int = 0  # materialized, not started in time: cancelled and skipped

    def __bool__(self) -> bool:
        return bool(self.created or self.skipped or self.failed or self.expired)


@transaction.atomic
def series_materialize(*, series: Series, now: datetime | None = None) -> MaterializeResult:
    """Turn the series' occurrences up to its horizon into scheduled publications, apply
    the missed-occurrence policy, and move the cursor. Idempotent: what was handled is
    not handled again. `now` is the current time (a parameter for callers that already
    read it); publications are scheduled against the real clock.
    """
    now = now or _now()
    result = MaterializeResult()
    series = _lock(series)
    if series.status != Series.Status.ACTIVE:
        return result
    window = timedelta(minutes=series.late_window_minutes)
    _expire_unstarted(series, now=now, window=window, result=result)
    _retry_failed(series, now=now, window=window, result=result)

    horizon = now + timedelta(days=series.horizon_days)
    after = series.materialized_through or series.created_at
    found = series_occurrences(series, after=after, through=horizon, limit=MAX_OCCURRENCES_PER_RUN)
    for occurrence in found:
        _materialize_one(series, occurrence, now=now, window=window, result=result)
    capped = len(found) >= MAX_OCCURRENCES_PER_RUN
    series.materialized_through = max(after, found[-1].utc if capped else horizon)
    if not capped and (series.count or series.until) and not _has_more(series):
        series.status = Series.Status.ENDED
        series.ended_at = now
    series.save(update_fields=["materialized_through", "status", "ended_at", "updated_at"])
    if result:
        logger.info(
            "series materialized: %d created, %d late, %d skipped, %d failed, %d expired",
            len(result.created),
            result.late,
            result.skipped,
            result.failed,
            result.expired,
            extra={"series_id": series.pk, "workspace_id": series.workspace_id},
        )
    return result


def _has_more(series: Series) -> bool:
    far = series.materialized_through + timedelta(days=5 * 366)
    return bool(series_occurrences(series, after=series.materialized_through, through=far, limit=1))


def _materialize_one(
    series: Series,
    occurrence: recurrence.Occurrence,
    *,
    now: datetime,
    window: timedelta,
    result: MaterializeResult,
    row: SeriesOccurrence | None = None,
) -> None:
    if row is None:
        existing = series.occurrences.current().filter(local_start=occurrence.local_iso).first()
        if existing is not None:
            return  # handled by an earlier or concurrent run
        row = SeriesOccurrence(
            series=series,
            workspace_id=series.workspace_id,
            local_start=occurrence.local_iso,
            scheduled_at=occurrence.utc,
        )
    late = occurrence.utc < now
    if late and now - occurrence.utc > window:
        row.status = Occ.SKIPPED
        row.error = {
            "code": "MISSED",
            "message": f"Missed by more than {series.late_window_minutes} minutes.",
        }
        row.save()
        result.skipped += 1
        return
    key = reference_key(series, occurrence)
    try:
        with transaction.atomic():
            publication = publication_create(
                workspace=series.workspace,
                author=series.created_by,
                segments=series.template.get("segments"),
                destinations=series.template.get("destinations"),
                scheduled_at=now if late else occurrence.utc,
                timezone=series.timezone,
                status=Publication.Status.SCHEDULED,
                reference_key=key,
            )
        row.publication, row.status, row.is_late, row.error = (
            publication,
            Occ.MATERIALIZED,
            late,
            None,
        )
        result.created.append(publication.pk)
        result.late += late
    except Conflict as exc:
        existing_id = (
            exc.details.get("publication_id") if exc.code == "REFERENCE_KEY_EXISTS" else None
        )
        existing = Publication.objects.filter(pk=existing_id).first() if existing_id else None
        if existing is not None and existing.status != Publication.Status.CANCELLED:
            # Made by an earlier run whose occurrence row was lost: link it.
            row.publication, row.status, row.error = existing, Occ.MATERIALIZED, None
        else:
            row.status, row.error = Occ.FAILED, _error(exc)
            result.failed += 1
    except DomainError as exc:
        row.status, row.error = Occ.FAILED, _error(exc)
        result.failed += 1
    row.save()


def _error(exc: DomainError) -> dict:
    return {"code": exc.code, "message": exc.message, "details": exc.details}


def _retry_failed(
    series: Series, *, now: datetime, window: timedelta, result: MaterializeResult
) -> None:
    """Occurrences whose publication could not be made (a quota, an account removed) are
    tried again while they are not past their window."""
    failed = series.occurrences.filter(status=Occ.FAILED, scheduled_at__gte=now - window)
    for row in failed.order_by("scheduled_at"):
        local = recurrence.parse_local(row.local_start, field="local_start")
        occurrence = recurrence.Occurrence(local=local, utc=row.scheduled_at)
        before = result.failed
        _materialize_one(series, occurrence, now=now, window=window, result=result, row=row)
        if result.failed > before:
            result.failed = before  # still failing: counted once, when it first failed


def _expire_unstarted(
    series: Series, *, now: datetime, window: timedelta, result: MaterializeResult
) -> None:
    """A materialized occurrence whose publication has not started by its time plus the
    late window (the workers were down) is skipped, its publication cancelled."""
    stale = series.occurrences.filter(
        status=Occ.MATERIALIZED,
        scheduled_at__lt=now - window,
        publication__status=Publication.Status.SCHEDULED,
    ).select_related("publication")
    for row in stale:
        publication_cancel(publication=row.publication)
        row.status = Occ.SKIPPED
        row.error = {
            "code": "MISSED",
            "message": "Not published within the late window; the publication was cancelled.",
        }
        row.save(update_fields=["status", "error", "updated_at"])
        result.expired += 1


def series_materialize_due(*, now: datetime | None = None) -> int:
    """Materialize every active series, each in its own transaction (one that fails is
    logged and retried next time, without holding the others back). Returns how many
    publications were created."""
    created = 0
    for pk in list(Series.objects.active().order_by("pk").values_list("pk", flat=True)):
        try:
            created += len(series_materialize(series=Series(pk=pk), now=now).created)
        except Exception:
            logger.exception("Materializing series %s failed.", pk, extra={"series_id": pk})
    return created
