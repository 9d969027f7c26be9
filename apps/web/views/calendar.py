"""The calendar (month and week, in the user's display zone) and the list of posts."""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from django.core.paginator import Paginator
from django.db.models import F
from django.db.models.functions import Coalesce
from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.accounts.permissions import Action
from apps.publications.models import Publication
from apps.web.access import WorkspaceRequest, workspace_view
from apps.web.forms.workspace import PublicationFilterForm

MONTH, WEEK = "month", "week"
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass
class Day:
    date: date
    in_range: bool
    is_today: bool
    items: list[Publication] = field(default_factory=list)


def _local_midnight(day: date, zone: zoneinfo.ZoneInfo) -> datetime:
    """The instant a local day starts (a DST change at midnight moves it, never skips it)."""
    return datetime.combine(day, time.min).replace(tzinfo=zone, fold=0)


def _anchor(value: str | None, today: date) -> date:
    try:
        return date.fromisoformat(value) if value else today
    except ValueError:
        return today


def _shift_month(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def publications_between(workspace, start: datetime, end: datetime):
    """A workspace's timed publications in [start, end), cancelled ones left out."""
    return (
        Publication.objects.for_workspace(workspace)
        .filter(scheduled_at__gte=start, scheduled_at__lt=end)
        .exclude(status=Publication.Status.CANCELLED)
        .prefetch_related("segments", "renditions__social_account")
        .order_by("scheduled_at", "pk")
    )


@workspace_view(Action.VIEW)
@require_GET
def calendar(request: WorkspaceRequest) -> HttpResponse:
    zone = zoneinfo.ZoneInfo(request.user.display_timezone)
    today = timezone.now().astimezone(zone).date()
    view = WEEK if request.GET.get("view") == WEEK else MONTH
    anchor = _anchor(request.GET.get("date"), today)
    if view == MONTH:
        first = anchor.replace(day=1)
        after = _shift_month(first, 1)
        start = first - timedelta(days=first.weekday())
        end = after + timedelta(days=(7 - after.weekday()) % 7)
        previous, following = _shift_month(first, -1), after
        title = first.strftime("%B %Y")
    else:
        start = anchor - timedelta(days=anchor.weekday())
        end = start + timedelta(days=7)
        first, after = start, end
        previous, following = start - timedelta(days=7), end
        title = f"Week of {start.day} {start:%b %Y}"

    days = {}
    cursor = start
    while cursor < end:
        days[cursor] = Day(date=cursor, in_range=first <= cursor < after, is_today=cursor == today)
        cursor += timedelta(days=1)
    for publication in publications_between(
        request.workspace, _local_midnight(start, zone), _local_midnight(end, zone)
    ):
        local_day = publication.scheduled_at.astimezone(zone).date()
        if local_day in days:
            days[local_day].items.append(publication)

    context = {
        "workspace": request.workspace,
        "section": "calendar",
        "view": view,
        "title": title,
        "days": list(days.values()),
        "weekdays": WEEKDAYS,
        "anchor": anchor,
        "previous": previous,
        "following": following,
        "today": today,
    }
    return render(request, "web/calendar/calendar.html", context)


@workspace_view(Action.VIEW)
@require_GET
def publication_list(request: WorkspaceRequest) -> HttpResponse:
    zone = zoneinfo.ZoneInfo(request.user.display_timezone)
    form = PublicationFilterForm(request.GET or None)
    publications = Publication.objects.for_workspace(request.workspace)
    if form.is_valid():
        data = form.cleaned_data
        if data["status"]:
            publications = publications.filter(status=data["status"])
        if data["start"]:
            publications = publications.filter(
                scheduled_at__gte=_local_midnight(data["start"], zone)
            )
        if data["end"]:
            publications = publications.filter(
                scheduled_at__lt=_local_midnight(data["end"] + timedelta(days=1), zone)
            )
    publications = publications.order_by(
        Coalesce(F("scheduled_at"), F("created_at")).desc(), "-pk"
    ).prefetch_related("segments", "renditions__social_account")
    page = Paginator(publications, 25).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "workspace": request.workspace,
        "section": "posts",
        "form": form,
        "page": page,
        "query": query.urlencode(),
    }
    status = 400 if form.errors else 200
    return render(request, "web/calendar/list.html", context, status=status)
