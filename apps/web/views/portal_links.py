"""A workspace's client links (``apps.approvals.portal``): the list, making one (its
address is shown once) and revoking. Every member sees the list; making and revoking
links is for those who approve posts (workspace admins)."""

from __future__ import annotations

import zoneinfo
from datetime import datetime, time, timedelta

from django import forms
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.accounts.permissions import Action, can
from apps.approvals.models import PortalLink, Review
from apps.approvals.portal import (
    MAX_LIFETIME,
    portal_link_create,
    portal_link_revoke,
    portal_url,
)
from apps.common.errors import DomainError
from apps.publications.models import Publication
from apps.web.access import WorkspaceRequest, post_only, workspace_view


class PortalLinkForm(forms.Form):
    label = forms.CharField(max_length=100, label="Who it is for")
    days = forms.IntegerField(
        min_value=1, max_value=MAX_LIFETIME.days, initial=14, label="Expires after (days)"
    )
    publications = forms.TypedMultipleChoiceField(
        coerce=int,
        required=False,
        label="Posts",
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every post in review (within the dates, when given), now "
        "and later.",
    )
    period_start = forms.DateField(
        required=False, label="Planned from", widget=forms.DateInput(attrs={"type": "date"})
    )
    period_end = forms.DateField(
        required=False,
        label="Planned until (inclusive)",
        widget=forms.DateInput(attrs={"type": "date"}),
    )

    def __init__(self, *args, choices: list[tuple[int, str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["publications"].choices = choices  # type: ignore[attr-defined]

    def clean(self) -> dict:
        data = super().clean() or {}
        for name in ("period_start", "period_end"):
            day = data.get(name)
            # A day turned into an instant (and the next one) must stay in range.
            if day is not None and not 2 <= day.year <= 9998:
                self.add_error(name, "Pick a date between the years 2 and 9998.")
        return data


def _choices(request: WorkspaceRequest) -> list[tuple[int, str]]:
    """Posts in review, the first planned first: what a link usually shares."""
    posts = (
        Publication.objects.for_workspace(request.workspace)
        .filter(review__state=Review.State.IN_REVIEW)
        .prefetch_related("segments")
        .order_by("scheduled_at", "pk")[:100]
    )
    choices = []
    for post in posts:
        first = next(iter(post.segments.all()), None)
        text = (first.text if first else "") or "(media only)"
        when = post.scheduled_at.strftime(" · %d %b %H:%M UTC") if post.scheduled_at else ""
        choices.append((post.pk, f"{text[:80]}{when}"))
    return choices


def _render(
    request: WorkspaceRequest,
    *,
    form: PortalLinkForm | None = None,
    new_url: str = "",
    status: int = 200,
) -> HttpResponse:
    links = (
        PortalLink.objects.for_workspace(request.workspace)
        .select_related("created_by", "revoked_by")
        .prefetch_related("publications")
        .order_by("revoked_at", "-created_at")[:200]
    )
    context = {
        "workspace": request.workspace,
        "section": "reviews",
        "links": links,
        "now": timezone.now(),
        "can_admin": can(request.user, request.workspace, Action.ADMIN),
        "form": form or PortalLinkForm(choices=_choices(request)),
        "new_url": new_url,
    }
    response = render(request, "web/reviews/links.html", context, status=status)
    response["Cache-Control"] = "no-store"  # the new link must not sit in a cache
    return response


@workspace_view(Action.VIEW)
@require_GET
def portal_link_list(request: WorkspaceRequest) -> HttpResponse:
    """The links; ``?post=<id>`` (from a post's review panel) ticks that post in the form."""
    post = request.GET.get("post", "")
    initial = {"publications": [int(post)]} if post.isdigit() else {}
    return _render(request, form=PortalLinkForm(initial=initial, choices=_choices(request)))


def _day(value, zone: zoneinfo.ZoneInfo, *, after: bool = False) -> datetime | None:
    """A date in the person's zone as the instant its day starts (or the next one's)."""
    if value is None:
        return None
    start = datetime.combine(value, time.min, tzinfo=zone)
    return start + timedelta(days=1) if after else start


@workspace_view(Action.ADMIN)
@post_only("portal-links")
def portal_link_create_view(request: WorkspaceRequest) -> HttpResponse:
    form = PortalLinkForm(request.POST, choices=_choices(request))
    if not form.is_valid():
        return _render(request, form=form, status=400)
    data = form.cleaned_data
    zone = zoneinfo.ZoneInfo(request.user.display_timezone)
    try:
        _link, token = portal_link_create(
            workspace=request.workspace,
            actor=request.user,
            label=data["label"],
            expires_at=timezone.now() + timedelta(days=data["days"]),
            publications=data["publications"],
            period_start=_day(data["period_start"], zone),
            period_end=_day(data["period_end"], zone, after=True),
        )
    except DomainError as exc:
        form.add_error(None, exc.message)
        return _render(request, form=form, status=400)
    # Rendered, not redirected: the address exists only in this response.
    return _render(request, new_url=portal_url(token), status=201)


@workspace_view(Action.ADMIN)
@post_only("portal-links")
def portal_link_revoke_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    link = get_object_or_404(PortalLink.objects.for_workspace(request.workspace), pk=pk)
    portal_link_revoke(link=link, actor=request.user)
    messages.success(request, f"Revoked the link for {link.label}. It no longer opens.")
    return redirect("portal-links", workspace_slug=request.workspace.slug)
