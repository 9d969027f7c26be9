"""The calendar (month, week with an hour grid, agenda; in the user's display zone),
moving a post on it.

A move (dragged, or carried with the keyboard) is a POST to `calendar_move`, which
answers JSON for calendar.js: it reads the same form as the quick reschedule and calls
the same service, so the revision check and every refusal are the reschedule's own.
"""

from __future__ import annotations

import zoneinfo
from datetime import date, datetime, time

from django import forms
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import Action
from apps.common.envelope import envelope
from apps.common.errors import DomainError
from apps.publications.models import Publication
from apps.publications.scheduling import is_ambiguous
from apps.publishing.services import publication_reschedule
from apps.web.access import WorkspaceRequest, permits, workspace_view
from apps.web.calendar_cards import (
    CARDS_PER_AGENDA_DAY,
    CARDS_PER_DAY,
    CARDS_PER_HOUR,
    cards_between,
    counts_between,
    first_in_cells,
)
from apps.web.calendar_grid import (
    AGENDA,
    MONTH,
    VIEWS,
    WEEK,
    WEEKDAYS,
    build_days,
    build_week,
    day_cells,
    hour_cells,
    page_range,
    place_counts,
)
from apps.web.forms.workspace import RescheduleForm
from apps.web.portal_posts import SENT_BACK_TO_CLIENT


def _local_midnight(day: date, zone: zoneinfo.ZoneInfo) -> datetime:
    """The instant a local day starts (a DST change at midnight moves it, never skips it)."""
    return datetime.combine(day, time.min).replace(tzinfo=zone, fold=0)


def _anchor(value: str | None, today: date) -> date:
    try:
        return date.fromisoformat(value) if value else today
    except ValueError:
        return today


@workspace_view(Action.VIEW)
@require_GET
def calendar(request: WorkspaceRequest) -> HttpResponse:
    zone = zoneinfo.ZoneInfo(request.user.display_timezone)
    now = timezone.now().astimezone(zone)
    today = now.date()
    view = request.GET.get("view")
    view = view if view in VIEWS else MONTH
    anchor = _anchor(request.GET.get("date"), today)
    page = page_range(view, anchor)
    start, end = page.bounds(zone)
    can_edit = permits(request, request.workspace, Action.EDIT)
    # A bounded number of cards per cell (day, or hour of the week), and every cell's count.
    if view == WEEK:
        cells, per_cell = hour_cells(page.days(), zone), CARDS_PER_HOUR
    else:
        per_cell = CARDS_PER_DAY if view == MONTH else CARDS_PER_AGENDA_DAY
        cells = day_cells(page.days(), zone)
    cards = cards_between(
        request.workspace,
        start,
        end,
        zone,
        can_move=permits(request, request.workspace, Action.PUBLISH),
        ids=first_in_cells(request.workspace, cells, per_cell),
    )
    days = build_days(page, cards, now=now)
    hour_rows = build_week(days, now=now) if view == WEEK else []
    place_counts(days, hour_rows, counts_between(request.workspace, start, end), zone)
    if not can_edit:
        for day in days:
            day.compose_at = None
    slug = request.workspace.slug
    context = {
        "workspace": request.workspace,
        "section": "calendar",
        "view": view,
        "page": page,
        "title": page.title,
        "days": days,
        "agenda_days": [day for day in days if day.count],
        "hour_rows": hour_rows,
        "weekdays": WEEKDAYS,
        "anchor": anchor,  # switching views stays around the same date
        "agenda_from": anchor if view == AGENDA else max(anchor, today),
        "today": today,
        "zone": request.user.display_timezone,
        "can_edit": can_edit,
        "move_url": reverse("calendar-move", kwargs={"workspace_slug": slug, "pk": 0}),
        "compose_url": reverse("composer", kwargs={"workspace_slug": slug}),
        "list_url": reverse("publication-list", kwargs={"workspace_slug": slug}),
    }
    return render(request, "web/calendar/calendar.html", context)


class CalendarMoveForm(RescheduleForm):
    """The quick reschedule's fields, plus which pass of a time a fall-back repeats the
    drop was on (the week grid shows both)."""

    fold = forms.BooleanField(required=False)


MOVE_REFUSALS = {
    "REVISION_CONFLICT": (
        "Someone changed this post after the calendar was loaded, so it was not moved. "
        "The calendar now shows it as it is."
    ),
}


@workspace_view(Action.PUBLISH)
@require_POST
def calendar_move(request: WorkspaceRequest, pk: int) -> JsonResponse:
    """Move a post to a local date and time (a drop, a keyboard move or an undo). It names
    the revision the calendar showed; a stale one moves nothing (409)."""
    publication = Publication.objects.for_workspace(request.workspace).filter(pk=pk).first()
    if publication is None:
        return JsonResponse(
            envelope("NOT_FOUND", "This post is not in this workspace (any more)."), status=404
        )
    form = CalendarMoveForm(request.POST)
    if not form.is_valid():
        return JsonResponse(
            envelope("VALIDATION_ERROR", "Give a date, a time and the post's revision."),
            status=400,
        )
    data = form.cleaned_data
    zone_name = request.user.display_timezone
    zone = zoneinfo.ZoneInfo(zone_name)
    before = publication.scheduled_at.astimezone(zone) if publication.scheduled_at else None
    local = datetime.combine(data["date"], data["time"])
    target: dict = {"local_time": local.isoformat(timespec="minutes")}
    if data["fold"] and is_ambiguous(local, zone):
        target = {"scheduled_at": local.replace(tzinfo=zone, fold=1)}
    try:
        moved = publication_reschedule(
            publication=publication,
            expected_revision=data["revision"],
            timezone=zone_name,
            actor=request.user,
            **target,
        )
    except DomainError as exc:
        message = MOVE_REFUSALS.get(exc.code, exc.message)
        return JsonResponse(envelope(exc.code, message), status=exc.http_status)
    assert moved.scheduled_at is not None
    after = moved.scheduled_at.astimezone(zone)
    return JsonResponse(
        {
            "message": f"Moved to {_spoken(after)}."
            + (f" {SENT_BACK_TO_CLIENT}" if moved.status == Publication.Status.DRAFT else ""),
            "publication": {
                "id": moved.pk,
                "revision": moved.revision,
                "status": moved.status,
                "scheduled_at": moved.scheduled_at.isoformat(),
                "date": after.date().isoformat(),
                "time": after.strftime("%H:%M"),
                "fold": after.fold,
            },
            "undo": _slot(before),
        }
    )


def _spoken(moment: datetime) -> str:
    return f"{moment:%a} {moment.day} {moment:%b}, {moment:%H:%M}"


def _slot(moment: datetime | None) -> dict | None:
    if moment is None:
        return None
    return {
        "date": moment.date().isoformat(),
        "time": moment.strftime("%H:%M"),
        "fold": moment.fold,
        "label": _spoken(moment),
    }
