"""Analytics pages: a post's metrics per destination (charts over time), and the
workspace's page for a period and some accounts (totals, top posts, followers over time,
the weekday x hour heat-map in the workspace's zone, best times), with its CSV export."""

from __future__ import annotations

import csv
from datetime import date

from django import forms
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.accounts.models import SocialAccount, Workspace
from apps.accounts.permissions import Action
from apps.analytics import selectors
from apps.analytics.models import POST_METRICS
from apps.renditions.models import Rendition
from apps.web import charts
from apps.web.access import WorkspaceRequest, is_htmx, workspace_view

WEEKDAY_LONG = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class PeriodForm(forms.Form):
    start = forms.DateField(
        label="From", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    end = forms.DateField(
        label="To", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    account = forms.TypedMultipleChoiceField(
        label="Accounts", required=False, coerce=int, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args, accounts: list[SocialAccount], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["account"]
        assert isinstance(field, forms.TypedMultipleChoiceField)
        field.choices = [(a.pk, f"{a.platform} @{a.handle}") for a in accounts]


def _today(workspace: Workspace) -> date:
    return timezone.now().astimezone(selectors.zone_of(workspace)).date()


def best_time_labels(best: list[dict]) -> list[str]:
    """ "Tuesday 09:00" for each best time (the queue's slot editor shows them too)."""
    return [f"{WEEKDAY_LONG[b['weekday']]} {b['hour']:02d}:00" for b in best]


@workspace_view(Action.VIEW)
@require_GET
def analytics_page(request: WorkspaceRequest) -> HttpResponse:
    """The period's analytics; `?format=csv` downloads the period's posts as shown."""
    workspace = request.workspace
    accounts = list(SocialAccount.objects.for_workspace(workspace).order_by("platform", "handle"))
    form = PeriodForm(request.GET or None, accounts=accounts)
    data = form.cleaned_data if form.is_valid() else {}
    period = selectors.period_of(workspace, data.get("start"), data.get("end"), _today(workspace))
    result = selectors.workspace_analytics(
        workspace, period=period, accounts=data.get("account") or None
    )
    if request.GET.get("format") == "csv":
        return _csv(result)
    followers = [
        {
            **series,
            "chart": charts.line_chart(
                [(p["sampled_at"], p["followers"]) for p in series["points"]],
                label=f"Followers of @{series['handle']}",
            ),
            "latest": series["points"][-1]["followers"],
        }
        for series in result["followers"]
    ]
    context = {
        "workspace": workspace,
        "section": "analytics",
        "form": form,
        "result": result,
        "metric_names": POST_METRICS,
        "followers": followers,
        "heatmap": charts.heatmap(
            result["heatmap"], label=f"Engagement by weekday and hour ({result['timezone']})"
        ),
        "best_times": best_time_labels(result["best_times"]),
        "csv_query": _csv_query(request),
    }
    return render(request, "web/analytics/page.html", context)


def _csv_query(request: WorkspaceRequest) -> str:
    query = request.GET.copy()
    query["format"] = "csv"
    return query.urlencode()


def _csv(result: dict) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"analytics-{result['from']}-{result['to']}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    writer = csv.writer(response)
    writer.writerow(
        ["published_at", "platform", "account", "url", "text", *POST_METRICS, "engagement"]
    )
    for row in result["rows"]:
        values = row["metrics"]
        writer.writerow(
            [
                row["published_at"].isoformat(),
                row["platform"],
                row["handle"],
                row["url"],
                _cell(row["text"]),
                *["" if values[name] is None else values[name] for name in POST_METRICS],
                row["engagement"] if row["sampled_at"] else "",
            ]
        )
    return response


def _cell(text: str) -> str:
    """No cell starts as a formula when the file is opened in a spreadsheet."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


@workspace_view(Action.VIEW)
@require_GET
def publication_metrics(request: WorkspaceRequest, pk: int) -> HttpResponse:
    """Each published destination of a post: its counts and a chart per metric over time
    (a fragment for the post page, or a page of its own without htmx)."""
    renditions = list(
        Rendition.objects.for_workspace(request.workspace)
        .filter(publication_id=pk)
        .select_related("social_account")
        .order_by("platform", "pk")
    )
    if not renditions:
        raise Http404
    destinations: list[dict] = []
    for rendition in renditions:
        if rendition.status != Rendition.Status.PUBLISHED:
            destinations.append({"rendition": rendition, "read": None})
            continue
        read = selectors.rendition_metrics(rendition)
        destinations.append({"rendition": rendition, "read": read, "metrics": _metric_rows(read)})
    context = {
        "workspace": request.workspace,
        "section": "posts",
        "publication_id": pk,
        "destinations": destinations,
    }
    template = "web/analytics/_post_metrics.html" if is_htmx(request) else "web/analytics/post.html"
    return render(request, template, context)


def _metric_rows(read: dict) -> list[dict]:
    rows = []
    for name in POST_METRICS:
        state = read["metrics"][name]
        series = [(point["sampled_at"], point[name]) for point in read["series"]]
        has_values = any(value is not None for _, value in series)
        rows.append(
            {
                "name": name,
                "value": read["latest"][name],
                "state": state,
                "chart": charts.line_chart(series, label=name.capitalize()) if has_values else None,
            }
        )
    return rows
