"""Materializing a series: its occurrences become real publications, and those not yet
started can be withdrawn.

Every active series is expanded over its horizon (60 days by default) into scheduled
publications through the create pipeline (one batch a run), one ``reference_key`` per
occurrence (``series-<id>-<local wall-clock ISO>``) and one SeriesOccurrence row, so a
re-run (or two runs at once) creates nothing twice.

Missed occurrences (the system was down, or the publication could not be created in time):
one missed by at most the series' ``late_window_minutes`` is published late, at once;
an older one is skipped. A materialized publication that has not started by its time plus
the window is cancelled by the next run (skipped), so a long outage does not send
yesterday's post; a worker that reaches it first publishes it late.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from apps.common.errors import DomainError
from apps.publications.models import Publication
from apps.publishing.services import publication_cancel, publication_update
from apps.publishing.services.checks import reference_key_exists
from apps.publishing.services.create_pipeline import Outcome, OutcomeStatus, create_publications
from apps.series import recurrence
from apps.series.constants import MAX_OCCURRENCES_PER_RUN, ORGANIZATION_RUN_SECONDS
from apps.series.models import Series, SeriesOccurrence
from apps.series.rules import series_occurrences

logger = logging.getLogger(__name__)

Occ = SeriesOccurrence.Status


def reference_key(series: Series, occurrence: recurrence.Occurrence) -> str:
    return f"series-{series.pk}-{occurrence.local_iso}"


def withdraw_future(series: Series, *, now: datetime, status: str) -> int:
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


@dataclass
class MaterializeResult:
    created: list[int] = field(default_factory=list)  # publication ids
    late: int = 0
    skipped: int = 0
    failed: int = 0
    expired: int = 0  # materialized, not started in time: cancelled and skipped

    def __bool__(self) -> bool:
        return bool(self.created or self.skipped or self.failed or self.expired)


@dataclass(frozen=True)
class _Plan:
    """What one run will do, worked out before the row lock is taken."""

    seen_update: datetime  # the series' updated_at the plan was made from
    after: datetime
    horizon: datetime
    found: list[recurrence.Occurrence]
    complete: bool  # every occurrence up to the horizon is in `found`
    ends: bool  # and the series has none after the horizon


def _plan(series: Series, *, now: datetime) -> _Plan:
    """Expand the series' next occurrences (the costly part) without holding its lock."""
    horizon = now + timedelta(days=series.horizon_days)
    after = series.materialized_through or series.created_at
    expansion = series_occurrences(
        series, after=after, through=horizon, limit=MAX_OCCURRENCES_PER_RUN, partial=True
    )
    found = expansion.occurrences
    complete = expansion.complete and len(found) < MAX_OCCURRENCES_PER_RUN
    ends = complete and bool(series.count or series.until) and not _has_more(series, horizon)
    return _Plan(series.updated_at, after, horizon, found, complete, ends)


def series_materialize(*, series: Series, now: datetime | None = None) -> MaterializeResult:
    """Turn the series' occurrences up to its horizon into scheduled publications, apply
    the missed-occurrence policy, and move the cursor. Idempotent: what was handled is
    not handled again. `now` is the current time (a parameter for callers that already
    read it); publications are scheduled against the real clock.

    The rule is expanded before the row lock is taken; if the series changed in between
    (an edit, or another run), this run does nothing: the edit queued its own run.
    At most MAX_OCCURRENCES_PER_RUN occurrences, within the expansion budget, per run;
    the cursor stops after the last one handled and the next run goes on from there.
    """
    now = now or timezone.now()
    current = Series.objects.select_related("workspace").filter(pk=series.pk).first()
    if current is None or current.status != Series.Status.ACTIVE:
        return MaterializeResult()
    plan = _plan(current, now=now)
    with transaction.atomic():
        return _apply(current, plan, now=now)


def _apply(series: Series, plan: _Plan, *, now: datetime) -> MaterializeResult:
    result = MaterializeResult()
    series = Series.objects.locked(series)
    if series.status != Series.Status.ACTIVE or series.updated_at != plan.seen_update:
        return result
    window = timedelta(minutes=series.late_window_minutes)
    _expire_unstarted(series, now=now, window=window, result=result)
    # The failed ones tried again first, then the new ones, in one batch.
    retries = _failed_to_retry(series, now=now, window=window)
    found: list[tuple[recurrence.Occurrence, SeriesOccurrence | None]] = [
        (o, None) for o in plan.found
    ]
    _materialize(series, retries + found, now=now, window=window, result=result)
    if plan.complete:
        series.materialized_through = max(plan.after, plan.horizon)
    elif plan.found:
        series.materialized_through = max(plan.after, plan.found[-1].utc)
    else:
        logger.warning(
            "Series %s: no occurrence within the expansion budget; trying again next run.",
            series.pk,
            extra={"series_id": series.pk, "workspace_id": series.workspace_id},
        )
    if plan.ends:
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


def _has_more(series: Series, after: datetime) -> bool:
    far = after + timedelta(days=5 * 366)
    expansion = series_occurrences(series, after=after, through=far, limit=1, partial=True)
    # Out of budget is not "ended": only a complete, empty answer ends the series.
    return bool(expansion.occurrences) or not expansion.complete


# An occurrence on its way to a publication: (its row, whether it is late, whether a retry).
_Pending = tuple[SeriesOccurrence, bool, bool]


def _materialize(
    series: Series,
    occurrences: list[tuple[recurrence.Occurrence, SeriesOccurrence | None]],
    *,
    now: datetime,
    window: timedelta,
    result: MaterializeResult,
) -> None:
    """Make the publications of these occurrences (each with its row when it has one) in
    one batch through the create pipeline: its rules (approval, quota, caps, the gate)
    hold for a series' posts as for any other. An occurrence missed by more than the
    window is skipped; one whose key is already used links the publication holding it
    (made by an earlier run whose occurrence row was lost) unless it was cancelled.
    A failure is counted once, when the occurrence first fails (not when a retry of it
    fails again)."""
    pending, items = _pending_items(series, occurrences, now=now, window=window, result=result)
    if not pending:
        return
    outcomes = create_publications(
        workspace=series.workspace,
        author=series.created_by,
        items=items,
        existing_keys_answer=True,
        all_or_nothing=False,
    )
    for (row, late, retry), outcome in zip(pending, outcomes, strict=True):
        _record_outcome(row, outcome, late=late, retry=retry, result=result)


def _pending_items(
    series: Series,
    occurrences: list[tuple[recurrence.Occurrence, SeriesOccurrence | None]],
    *,
    now: datetime,
    window: timedelta,
    result: MaterializeResult,
) -> tuple[list[_Pending], list[dict]]:
    """The occurrences still to make, each with its pipeline item: those another run
    already recorded are left out, and those missed by more than the window are saved
    as skipped here."""
    known = set(
        series.occurrences.current()
        .filter(local_start__in=[o.local_iso for o, row in occurrences if row is None])
        .values_list("local_start", flat=True)
    )
    pending: list[_Pending] = []
    items = []
    for occurrence, row in occurrences:
        retry = row is not None
        if row is None:
            if occurrence.local_iso in known:
                continue  # handled by an earlier or concurrent run
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
            continue
        pending.append((row, late, retry))
        items.append(
            {
                "segments": series.template.get("segments"),
                "destinations": series.template.get("destinations"),
                "scheduled_at": now if late else occurrence.utc,
                "timezone": series.timezone,
                "status": Publication.Status.SCHEDULED,
                "reference_key": reference_key(series, occurrence),
            }
        )
    return pending, items


def _record_outcome(
    row: SeriesOccurrence,
    outcome: Outcome,
    *,
    late: bool,
    retry: bool,
    result: MaterializeResult,
) -> None:
    """Save what the pipeline did with one occurrence on its row: materialized (a new
    publication, or the live one already holding its key) or failed, and count it."""
    publication = outcome.publication
    if outcome.status == OutcomeStatus.CREATED and publication is not None:
        row.publication, row.status, row.is_late, row.error = (
            publication,
            Occ.MATERIALIZED,
            late,
            None,
        )
        result.created.append(publication.pk)
        result.late += late
    elif outcome.status == OutcomeStatus.EXISTS and publication is not None:
        if publication.status != Publication.Status.CANCELLED:
            row.publication, row.status, row.error = publication, Occ.MATERIALIZED, None
        else:
            key = outcome.reference_key or ""
            row.status, row.error = (
                Occ.FAILED,
                _error(reference_key_exists(key, publication.pk)),
            )
            result.failed += not retry
    else:
        assert outcome.error is not None, "an outcome neither created nor found is an error"
        row.status, row.error = Occ.FAILED, _error(outcome.error)
        result.failed += not retry
    row.save()


def _error(exc: DomainError) -> dict:
    return {"code": exc.code, "message": exc.message, "details": exc.details}


def _failed_to_retry(
    series: Series, *, now: datetime, window: timedelta
) -> list[tuple[recurrence.Occurrence, SeriesOccurrence | None]]:
    """Occurrences whose publication could not be made (a quota, an account removed),
    with their rows: tried again while they are not past their window."""
    failed = series.occurrences.filter(status=Occ.FAILED, scheduled_at__gte=now - window)
    return [
        (
            recurrence.Occurrence(
                local=recurrence.parse_local(row.local_start, field="local_start"),
                utc=row.scheduled_at,
            ),
            row,
        )
        for row in failed.order_by("scheduled_at")
    ]


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
        assert row.publication is not None  # filtered on its status
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
    publications were created. The periodic job does this per organization
    (``organization_materialize``); this is for commands and tests."""
    created = 0
    for pk in list(Series.objects.active().order_by("pk").values_list("pk", flat=True)):
        created += _materialize_logged(pk, now=now)
    return created


def _materialize_logged(pk: int, *, now: datetime | None) -> int:
    try:
        return len(series_materialize(series=Series(pk=pk), now=now).created)
    except Exception:
        logger.exception("Materializing series %s failed.", pk, extra={"series_id": pk})
        return 0


@dataclass(frozen=True)
class OrganizationRun:
    created: int
    resume_after: int | None  # the last series done when time ran out; None: all done


def organization_materialize(
    *,
    organization_id: int,
    after_series_id: int = 0,
    budget_s: float | None = None,
    now: datetime | None = None,
) -> OrganizationRun:
    """Materialize the organization's active series from `after_series_id` on, in id
    order, until the wall-clock budget is spent (at least one series per run, so a run
    always moves on). Another organization's series are never touched here, so one
    organization's large series cannot make another's late."""
    deadline = time.monotonic() + (ORGANIZATION_RUN_SECONDS if budget_s is None else budget_s)
    created = 0
    pks = list(
        Series.objects.active()
        .filter(workspace__organization_id=organization_id, pk__gt=after_series_id)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for index, pk in enumerate(pks):
        created += _materialize_logged(pk, now=now)
        if index + 1 < len(pks) and time.monotonic() > deadline:
            return OrganizationRun(created, resume_after=pk)
    return OrganizationRun(created, resume_after=None)


def organizations_with_active_series() -> list[int]:
    return list(
        Series.objects.active()
        .order_by()
        .values_list("workspace__organization_id", flat=True)
        .distinct()
    )
