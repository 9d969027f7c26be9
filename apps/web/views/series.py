"""A workspace's recurring series: create one (with a preview of its next occurrences),
pause, resume, and delete it; its page shows what the next occurrences will be."""

from __future__ import annotations

import zoneinfo

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone as django_timezone
from django.views.decorators.http import require_GET

from apps.accounts.models import SocialAccount
from apps.accounts.permissions import Action
from apps.common.errors import DomainError
from apps.planning.models import WEEKDAY_NAMES
from apps.series.models import DEFAULT_HORIZON_DAYS, DEFAULT_LATE_WINDOW_MINUTES, Series
from apps.series.rules import schedule_preview, series_preview
from apps.series.services import series_create, series_delete, series_pause, series_resume
from apps.web.access import WorkspaceRequest, permits, post_only, workspace_view
from apps.web.forms.common import ZoneNameInput, zone_name_choices
from apps.web.series_text import describe_rule, weekly_rule

PREVIEW_COUNT = 8
RULE_EXAMPLES = [
    ("FREQ=WEEKLY;BYDAY=MO", "every Monday"),
    ("FREQ=WEEKLY;BYDAY=MO,WE,FR", "Monday, Wednesday and Friday"),
    ("FREQ=DAILY", "every day"),
    ("FREQ=MONTHLY;BYMONTHDAY=1", "the first of each month"),
    ("FREQ=MONTHLY;BYDAY=-1FR", "the last Friday of each month"),
]


class AccountsField(forms.ModelMultipleChoiceField):
    """Social accounts to pick, each shown as its platform and handle."""

    def label_from_instance(self, obj: SocialAccount) -> str:
        return f"{obj.platform} @{obj.handle}"


class SeriesForm(forms.Form):
    """A series' schedule comes from the picker (days of the week, a time, a first day),
    or, when no day is picked, from an RFC 5545 rule and its first time (for experts)."""

    name = forms.CharField(label="Name", max_length=200)
    text = forms.CharField(label="Text", widget=forms.Textarea(attrs={"rows": 4}))
    accounts = AccountsField(
        label="Destinations",
        queryset=SocialAccount.objects.none(),
        widget=forms.CheckboxSelectMultiple,
    )
    weekdays = forms.TypedMultipleChoiceField(
        label="On",
        choices=list(enumerate(WEEKDAY_NAMES)),
        coerce=int,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Pick the days; leave them all unticked to write a rule instead.",
    )
    time = forms.TimeField(
        label="At",
        required=False,
        widget=forms.TimeInput(attrs={"type": "time"}, format="%H:%M"),
        help_text="Wall-clock time in the zone below; it stays the same across DST changes.",
    )
    start_date = forms.DateField(
        label="Starting",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Empty: today.",
    )
    rrule = forms.CharField(
        label="Or a rule (RRULE)",
        max_length=500,
        required=False,
        help_text="An RFC 5545 rule, e.g. FREQ=WEEKLY;BYDAY=MO (every Monday).",
    )
    dtstart = forms.CharField(
        label="First time of the rule",
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
        help_text="Wall-clock time in the zone below; it stays the same across DST changes.",
    )
    timezone = forms.ChoiceField(label="Time zone", choices=zone_name_choices, widget=ZoneNameInput)
    count = forms.IntegerField(
        label="Number of posts", min_value=1, required=False, help_text="Empty: no limit."
    )
    late_window_minutes = forms.IntegerField(
        label="Late window (minutes)",
        min_value=0,
        max_value=7 * 24 * 60,
        initial=DEFAULT_LATE_WINDOW_MINUTES,
        help_text="A post missed by at most this much goes out late; older ones are skipped.",
    )

    def __init__(self, *args, workspace, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        accounts, zone = self.fields["accounts"], self.fields["timezone"]
        assert isinstance(accounts, AccountsField)
        assert isinstance(zone, forms.ChoiceField)
        accounts.queryset = (
            SocialAccount.objects.for_workspace(workspace)
            .exclude(status=SocialAccount.Status.DISABLED)
            .order_by("platform", "handle")
        )
        zone.initial = workspace.default_timezone

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        if data.get("weekdays"):
            if data.get("time") is None:
                self.add_error("time", "Pick the time of day.")
                return data
            start = (
                data.get("start_date")
                or django_timezone.now()
                .astimezone(zoneinfo.ZoneInfo(data.get("timezone") or "UTC"))
                .date()
            )
            data["rrule"] = weekly_rule(data["weekdays"])
            data["dtstart"] = f"{start:%Y-%m-%d}T{data['time']:%H:%M}"
            return data
        if not data.get("rrule"):
            self.add_error("weekdays", "Pick at least one day, or write a rule below.")
        if not data.get("dtstart"):
            self.add_error("dtstart", "Give the first time of the rule.")
        return data

    @property
    def description(self) -> str:
        """The schedule as people read it (after a valid submit)."""
        data = getattr(self, "cleaned_data", {})
        if not data.get("rrule") or not data.get("dtstart"):
            return ""
        return describe_rule(data["rrule"], data["dtstart"], data["timezone"], data.get("count"))


def _series(request: WorkspaceRequest):
    return Series.objects.for_workspace(request.workspace).order_by("-id")


def _description(series: Series) -> str:
    """The series' schedule as people read it."""
    return describe_rule(series.rrule, series.dtstart, series.timezone, series.count)


def _render_list(
    request: WorkspaceRequest,
    *,
    form: SeriesForm | None = None,
    preview: list | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "workspace": request.workspace,
        "section": "series",
        "series_list": [(series, _description(series)) for series in _series(request)],
        "form": form or SeriesForm(workspace=request.workspace),
        "preview": preview,
        "examples": RULE_EXAMPLES,
        "can_publish": permits(request, request.workspace, Action.PUBLISH),
    }
    return render(request, "web/series/list.html", context, status=status)


@workspace_view(Action.VIEW)
@require_GET
def series_list(request: WorkspaceRequest) -> HttpResponse:
    return _render_list(request)


@workspace_view(Action.PUBLISH)
@post_only("series")
def series_create_view(request: WorkspaceRequest) -> HttpResponse:
    """Create the series, or with the "preview" button only show its next occurrences."""
    form = SeriesForm(request.POST, workspace=request.workspace)
    if not form.is_valid():
        return _render_list(request, form=form, status=400)
    data = form.cleaned_data
    try:
        if "preview" in request.POST:
            preview = schedule_preview(
                rrule=data["rrule"],
                dtstart=data["dtstart"],
                timezone_name=data["timezone"],
                count=data["count"],
                limit=PREVIEW_COUNT,
            )
            return _render_list(request, form=form, preview=preview)
        series = series_create(
            workspace=request.workspace,
            name=data["name"],
            template={
                "segments": [{"text": data["text"]}],
                "destinations": [{"account": a.pk} for a in data["accounts"]],
            },
            rrule=data["rrule"],
            dtstart=data["dtstart"],
            timezone=data["timezone"],
            count=data["count"],
            late_window_minutes=data["late_window_minutes"],
            horizon_days=DEFAULT_HORIZON_DAYS,
            created_by=request.user,
        )
    except DomainError as exc:
        _add_errors(form, exc)
        return _render_list(request, form=form, status=400)
    messages.success(request, f"Created the series {series.name}.")
    return redirect("series-detail", workspace_slug=request.workspace.slug, pk=series.pk)


def _add_errors(form: SeriesForm, exc: DomainError) -> None:
    """Put the service's field errors on the form's fields (template.* on the text and
    destinations), the rest on the form."""
    placed = False
    for path, problems in (exc.details or {}).items():
        name = str(path).split(".")[0]
        if name == "template":
            name = "accounts" if "destinations" in str(path) else "text"
        if name in form.fields:
            for problem in problems if isinstance(problems, list) else [problems]:
                form.add_error(name, str(problem))
            placed = True
    if not placed:
        form.add_error(None, exc.message)


@workspace_view(Action.VIEW)
@require_GET
def series_detail(request: WorkspaceRequest, pk: int) -> HttpResponse:
    series = get_object_or_404(_series(request), pk=pk)
    try:
        upcoming = series_preview(series=series, limit=PREVIEW_COUNT)
    except DomainError as exc:  # the expansion budget ran out
        messages.error(request, exc.message)
        upcoming = []
    context = {
        "workspace": request.workspace,
        "section": "series",
        "series": series,
        "description": _description(series),
        "upcoming": upcoming,
        "occurrences": series.occurrences.current()
        .select_related("publication")
        .order_by("-scheduled_at")[:20],
        "can_publish": permits(request, request.workspace, Action.PUBLISH),
    }
    return render(request, "web/series/detail.html", context)


def _act(request: WorkspaceRequest, pk: int, action, done: str) -> HttpResponse:
    series = get_object_or_404(_series(request), pk=pk)
    try:
        action(series)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, done.format(name=series.name))
    return redirect("series-detail", workspace_slug=request.workspace.slug, pk=series.pk)


@workspace_view(Action.PUBLISH)
@post_only("series-detail", "pk")
def series_pause_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    cancel = request.POST.get("cancel_future") == "on"
    return _act(
        request,
        pk,
        lambda s: series_pause(series=s, cancel_future=cancel),
        "Paused {name}." + (" Its scheduled posts were cancelled." if cancel else ""),
    )


@workspace_view(Action.PUBLISH)
@post_only("series-detail", "pk")
def series_resume_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    return _act(
        request, pk, lambda s: series_resume(series=s, actor=request.user), "Resumed {name}."
    )


@workspace_view(Action.PUBLISH)
@post_only("series-detail", "pk")
def series_delete_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    series = get_object_or_404(_series(request), pk=pk)
    series_delete(series=series)
    messages.success(
        request, f"Deleted {series.name}; its posts that had not gone out are cancelled."
    )
    return redirect("series", workspace_slug=request.workspace.slug)
