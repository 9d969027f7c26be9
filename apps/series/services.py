"""Writes of recurring series: create, edit, pause, resume, end, delete.

Editing: future occurrences not yet materialized always follow the edit. Already
materialized future ones are left as they are, or, with ``apply_to_materialized``,
replaced: their publications are cancelled (never one that started) and made again from
the edited series. Pausing stops materializing (``cancel_future`` also withdraws what is
already scheduled; occurrences that fall during the pause are not made up). Ending stops
for good (``cancel_future`` cancels the future publications). Turning occurrences into
publications is ``apps.series.occurrences``.

Approval: a series schedules its posts by itself, so where posts need an admin's approval
(``apps.approvals.rule``) only an approver creates a series, changes what or when it posts,
or resumes it. Pausing, ending and deleting only take posts away: anyone who may edit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User, Workspace
from apps.approvals.rule import ApprovalRequired, needs_approval
from apps.common.errors import Conflict, ValidationFailed
from apps.jobs.services import job_enqueue
from apps.series import recurrence
from apps.series.constants import MATERIALIZE_ONE_JOB
from apps.series.models import (
    DEFAULT_HORIZON_DAYS,
    DEFAULT_LATE_WINDOW_MINUTES,
    Series,
    SeriesOccurrence,
)
from apps.series.occurrences import withdraw_future
from apps.series.rules import clean_schedule
from apps.series.template import clean_template

Occ = SeriesOccurrence.Status

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
# What a series posts and when: the changes an approver makes where approval is required.
_POSTING_FIELDS = _SCHEDULE_FIELDS | {"template"}
MAX_LATE_WINDOW_MINUTES = 7 * 24 * 60


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


def _check_may_schedule(workspace: Workspace, actor: User | None) -> None:
    if needs_approval(workspace, actor):
        raise ApprovalRequired(
            "This workspace needs an admin's approval before posts are scheduled, and a "
            "series schedules its posts by itself: an admin creates, changes or resumes it.",
            details={"workspace": workspace.slug},
        )


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
    accounts or media not in the workspace; ApprovalRequired (APPROVAL_REQUIRED) when the
    creator's posts need approval.
    """
    _check_may_schedule(workspace, created_by)
    schedule = clean_schedule(
        rrule=rrule,
        dtstart=dtstart,
        timezone_name=timezone or workspace.default_timezone,
        count=count,
        until=until,
    )
    series = Series(
        workspace=workspace,
        name=(name or "").strip(),
        template=clean_template(workspace, template),
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
def series_update(
    *,
    series: Series,
    apply_to_materialized: bool = False,
    actor: User | None = None,
    **changes: Any,
) -> Series:
    """Edit the series. Occurrences not yet materialized follow the edit; materialized
    future ones are left, or replaced when ``apply_to_materialized`` (their publications
    cancelled, unless they started, and made again from the edited series).

    changes: name, template, rrule, dtstart, timezone, count, until, late_window_minutes,
    horizon_days. actor: the person editing (changing what or when it posts needs an
    approver where approval is required). Errors as series_create, plus Conflict
    SERIES_ENDED.
    """
    unknown = sorted(set(changes) - UPDATABLE)
    if unknown:
        raise ValidationFailed(
            f"Unknown fields: {', '.join(unknown)}.",
            details={name: ["Unknown field."] for name in unknown},
        )
    if _POSTING_FIELDS & set(changes):
        _check_may_schedule(series.workspace, actor)
    series = Series.objects.locked(series)
    if series.status == Series.Status.ENDED:
        raise Conflict("The series has ended.", code="SERIES_ENDED", details={"id": series.pk})
    if "name" in changes:
        series.name = (changes["name"] or "").strip()
    if "template" in changes:
        series.template = clean_template(series.workspace, changes["template"])
    if _SCHEDULE_FIELDS & set(changes):
        schedule = clean_schedule(
            rrule=changes.get("rrule", series.rrule),
            dtstart=changes.get("dtstart", series.dtstart),
            timezone_name=changes.get("timezone", series.timezone),
            count=changes.get("count", series.count),
            until=changes.get("until", series.until),
            # A series' own start ages; only a new one must be recent.
            check_dtstart_age="dtstart" in changes
            and recurrence.parse_local(changes["dtstart"], field="dtstart")
            != recurrence.parse_local(series.dtstart, field="dtstart"),
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
        withdraw_future(series, now=now, status=Occ.SUPERSEDED)
        series.materialized_through = now
    series.save()
    if series.status == Series.Status.ACTIVE:
        _enqueue_materialize(series)
    return series


@transaction.atomic
def series_pause(*, series: Series, cancel_future: bool = False) -> Series:
    """Stop materializing. Publications already made still go out, unless
    ``cancel_future`` withdraws those that have not started."""
    series = Series.objects.locked(series)
    if series.status != Series.Status.ACTIVE:
        raise Conflict(
            f"Only an active series can be paused; this one is {series.status}.",
            code="SERIES_NOT_ACTIVE",
            details={"status": series.status},
        )
    now = _now()
    if cancel_future:
        withdraw_future(series, now=now, status=Occ.SUPERSEDED)
        series.materialized_through = now
    series.status = Series.Status.PAUSED
    series.paused_at = now
    series.save()
    return series


@transaction.atomic
def series_resume(*, series: Series, actor: User | None = None) -> Series:
    """Materialize again from now on; occurrences that fell during the pause are skipped.
    actor: the person resuming (an approver where approval is required)."""
    _check_may_schedule(series.workspace, actor)
    series = Series.objects.locked(series)
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
    series = Series.objects.locked(series)
    if series.status == Series.Status.ENDED:
        return series
    now = _now()
    if cancel_future:
        withdraw_future(series, now=now, status=Occ.CANCELLED)
    series.status = Series.Status.ENDED
    series.ended_at = now
    series.save()
    return series


@transaction.atomic
def series_delete(*, series: Series) -> None:
    """Delete the series and its occurrence log; its future publications that have not
    started are cancelled, the others (and everything already published) stay."""
    series = Series.objects.locked(series)
    withdraw_future(series, now=_now(), status=Occ.CANCELLED)
    series.delete()
